"""The language server's cost per change: one keystroke in a spec's buffer, then what the
server does before it publishes (re-check the spec's tree with the buffer in place, turn the
diagnostics into the protocol's), for specs/research_desk.yaml and the generated 500-agent
spec (bench/validate.py's generator), for a few kinds of edit: a comment at the end, a word
in an agent's instruction, a line added at the top (every line below moves), a comment in
an imported file. Prints; asserts nothing. Targets: under 50 ms and under 300 ms per change.

    .venv/bin/python bench/lsp.py [--agents 500] [--repeat 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from validate import write_generated_spec  # noqa: E402

from agentspec.lsp import features  # noqa: E402
from agentspec.lsp.analysis import Analysis  # noqa: E402
from agentspec.project_files import resolved  # noqa: E402

#: an edit of a spec's text: the keystroke number and the text before it, the text after
Edit = Callable[[int, str], str]


def at_end(index: int, text: str) -> str:
    """A comment at the end: the text changes, the meaning does not."""
    return text + f"\n# edit {index}\n"


def in_instruction(index: int, text: str) -> str:
    """A word typed in the instruction of the agent in the middle of the file: the meaning
    changes, no line moves."""
    marker = "Work from the material below"
    at = text.find(marker, len(text) // 2)
    at = at if at >= 0 else text.find(marker)
    if at < 0:  # not the generated spec: the first `instruction:` text
        at = text.index("instruction: ") + len("instruction: ")
    return text[:at] + f"word{index} " + text[at:]


def new_line(index: int, text: str) -> str:
    """A comment line after the first line: every line below it moves."""
    first, rest = text.split("\n", 1)
    return f"{first}\n# line {index}\n{rest}"


def per_change(spec: Path, edited: Path, edit: Edit, repeat: int
               ) -> tuple[list[float], list[float], list[float], int]:
    """Seconds per keystroke in `edited` (`spec` or a file it imports), what the server does
    before it publishes (a check of `spec` and the conversion), wall and CPU (this
    process's, which other processes on a loaded machine disturb less), and per unchanged
    request."""
    analysis = Analysis()
    text = edited.read_text()
    analysis.buffers[spec] = spec.read_text()
    analysis.buffers[edited] = text
    analysis.check(spec)  # the open: warms imports and caches
    changes: list[float] = []
    cpu: list[float] = []
    unchanged: list[float] = []
    published = 0
    for index in range(repeat):
        analysis.buffers[edited] = edit(index, text)
        start, start_cpu = time.perf_counter(), time.process_time()
        done = analysis.check(spec)
        published = sum(len(features.diagnostics_of(analysis, path, found))
                        for path, found in done.by_file.items())
        changes.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        start = time.perf_counter()
        analysis.check(spec)  # a request after it: the content is the same, nothing re-runs
        unchanged.append(time.perf_counter() - start)
    return changes, cpu, unchanged, published


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentspec-bench-lsp-") as scratch:
        generated = resolved(write_generated_spec(Path(scratch), args.agents))
        desk = resolved(REPO / "specs" / "research_desk.yaml")
        imported = resolved(REPO / "specs" / "common" / "tools.yaml")
        big = f"generated ({args.agents} agents)"
        rows: list[tuple[str, str, Path, Path, Edit, float]] = [
            ("specs/research_desk.yaml", "comment at end", desk, desk, at_end, 0.050),
            ("specs/research_desk.yaml", "instruction", desk, desk, in_instruction, 0.050),
            ("specs/research_desk.yaml", "imported file", desk, imported, at_end, 0.050),
            (big, "comment at end", generated, generated, at_end, 0.300),
            (big, "instruction", generated, generated, in_instruction, 0.300),
            (big, "new line at top", generated, generated, new_line, 0.300)]
        print(f"{'spec':<26} {'edit':<16} {'median':>9} {'min':>9} {'max':>9} {'cpu med':>9} "
              f"{'cpu min':>9} {'target':>7} {'unchanged':>10} {'diagnostics':>11}")
        for label, kind, path, edited, edit, target in rows:
            changes, cpu, unchanged, count = per_change(path, edited, edit, args.repeat)
            print(f"{label:<26} {kind:<16} {statistics.median(changes) * 1000:>7.1f}ms "
                  f"{min(changes) * 1000:>7.1f}ms {max(changes) * 1000:>7.1f}ms "
                  f"{statistics.median(cpu) * 1000:>7.1f}ms {min(cpu) * 1000:>7.1f}ms "
                  f"{target * 1000:>5.0f}ms {statistics.median(unchanged) * 1000:>8.2f}ms "
                  f"{count:>11}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
