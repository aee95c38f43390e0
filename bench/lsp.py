"""The language server's cost per change: one keystroke in a spec's buffer, then what the
server does before it publishes (re-check the spec's tree with the buffer in place, turn the
diagnostics into the protocol's), for specs/research_desk.yaml and the generated 500-agent
spec (bench/validate.py's generator). Prints; asserts nothing. Targets: under 50 ms and
under 300 ms per change.

    .venv/bin/python bench/lsp.py [--agents 500] [--repeat 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from validate import write_generated_spec  # noqa: E402

from agentspec.lsp import features  # noqa: E402
from agentspec.lsp.analysis import Analysis  # noqa: E402
from agentspec.project_files import resolved  # noqa: E402


def per_change(spec: Path, repeat: int
               ) -> tuple[list[float], list[float], list[float], int]:
    """Seconds per keystroke (a check and the conversion), wall and CPU (this process's,
    which other processes on a loaded machine disturb less), and per unchanged request."""
    analysis = Analysis()
    text = spec.read_text()
    analysis.buffers[spec] = text
    analysis.check(spec)  # the open: warms imports and caches
    changes: list[float] = []
    cpu: list[float] = []
    unchanged: list[float] = []
    published = 0
    for index in range(repeat):
        # a keystroke in a comment at the end: the text changes, the meaning does not
        analysis.buffers[spec] = text + f"\n# edit {index}\n"
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
        generated = write_generated_spec(Path(scratch), args.agents)
        rows = [("specs/research_desk.yaml", resolved(REPO / "specs" / "research_desk.yaml"),
                 0.050), (f"generated ({args.agents} agents)", resolved(generated), 0.300)]
        print(f"{'spec':<28} {'median':>9} {'min':>9} {'max':>9} {'cpu med':>9} "
              f"{'cpu min':>9} {'target':>8} {'unchanged':>10} {'diagnostics':>11}")
        for label, path, target in rows:
            changes, cpu, unchanged, count = per_change(path, args.repeat)
            print(f"{label:<28} {statistics.median(changes) * 1000:>7.1f}ms "
                  f"{min(changes) * 1000:>7.1f}ms {max(changes) * 1000:>7.1f}ms "
                  f"{statistics.median(cpu) * 1000:>7.1f}ms {min(cpu) * 1000:>7.1f}ms "
                  f"{target * 1000:>6.0f}ms {statistics.median(unchanged) * 1000:>8.2f}ms "
                  f"{count:>11}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
