"""What the language server reads from disk while it answers requests: a sweep of requests
(hover, completion, definition, references, rename, code actions, document symbols) at every
`--step`th column of every line of a spec open in the editor (as the server answers each:
bring the checks of the document's trees up to date, then answer), counting the files opened
(the interpreter's `open` audit event, which every read goes through) and the CPU per
request. Prints; asserts nothing.

    .venv/bin/python bench/lsp_reads.py [--spec specs/research_desk.yaml] [--step 4]
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agentspec.lsp import actions, features, outline  # noqa: E402
from agentspec.lsp.analysis import Analysis  # noqa: E402
from agentspec.project_files import resolved  # noqa: E402

OPENED: collections.Counter[str] | None = None


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if OPENED is not None and event == "open" and isinstance(args[0], (str, Path)):
        OPENED[str(args[0])] += 1


def requests(analysis: Analysis, path: Path, position: lsp.Position
             ) -> dict[str, Callable[[], object]]:
    uri = path.as_uri()
    context = lsp.CodeActionContext(diagnostics=[])
    action = lsp.CodeActionParams(lsp.TextDocumentIdentifier(uri),
                                  lsp.Range(position, position), context)
    return {
        "hover": lambda: features.hover(analysis, path, position),
        "completion": lambda: features.completion(analysis, path, position),
        "definition": lambda: features.definition(analysis, path, position),
        "references": lambda: features.references(analysis, path, position),
        "rename": lambda: features.rename(analysis, path, position, "renamed_x"),
        "code action": lambda: actions.code_actions(analysis, path, action),
        "document symbols": lambda: outline.document_symbols(analysis, path),
    }


def answer(analysis: Analysis, path: Path, run: Callable[[], object]) -> object:
    """As the server answers a request: the checks of `path`'s trees first."""
    for root in analysis.roots_of(path):
        analysis.check(root)
    return run()


def main() -> None:
    global OPENED
    parser = argparse.ArgumentParser()
    parser.add_argument("--spec", default=str(REPO / "specs" / "research_desk.yaml"))
    parser.add_argument("--step", type=int, default=4)
    args = parser.parse_args()
    path = resolved(Path(args.spec))
    analysis = Analysis()
    analysis.buffers[path] = path.read_text(encoding="utf-8")
    analysis.check(path)  # the open
    sys.addaudithook(_hook)
    OPENED = collections.Counter()
    cpu: dict[str, list[float]] = collections.defaultdict(list)
    lines = analysis.buffers[path].splitlines()
    for row, line in enumerate(lines):
        for column in range(0, len(line) + 1, args.step):
            for name, run in requests(analysis, path, lsp.Position(row, column)).items():
                start = time.process_time()
                answer(analysis, path, run)
                cpu[name].append(time.process_time() - start)
    opened, OPENED = OPENED, None
    total = sum(len(v) for v in cpu.values())
    print(f"{path.name}: {total} requests, {sum(opened.values())} files opened "
          f"({len(opened)} distinct)")
    for file, count in opened.most_common(8):
        print(f"  {count:7d}  {file}")
    print(f"{'request':18} {'n':>6} {'median ms':>10} {'p95 ms':>8} {'total s':>8}")
    for name, times in cpu.items():
        times.sort()
        print(f"{name:18} {len(times):6d} {statistics.median(times) * 1e3:10.2f} "
              f"{times[int(len(times) * 0.95)] * 1e3:8.2f} {sum(times):8.2f}")


if __name__ == "__main__":
    main()
