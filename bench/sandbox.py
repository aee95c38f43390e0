#!/usr/bin/env python
"""What the sandbox adds to each `execute`: the same commands through a `shell` backend and a
`sandbox` backend, then the host-side walk of the workspace after each command (set-id bits,
`max_workspace_mb`) on trees of growing size (see bench/README.md).

    .venv/bin/python bench/sandbox.py [--repeat N]

Prints figures only; asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentspec.runtime.backends.shell import ShellBackend  # noqa: E402
from agentspec.runtime.backends.trees import sweep  # noqa: E402
from tests.spec_defaults import spec_sandbox, spec_shell  # noqa: E402

COMMANDS = {
    "true": "true",
    "echo + cat a file": "echo hello > f.txt && cat f.txt",
    "python3 -c pass": "python3 -c pass",
}


def timed(backend: ShellBackend, command: str, repeat: int) -> list[float]:
    backend.execute(command)  # warm the page cache and bwrap's --help probe
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = backend.execute(command)
        times.append(time.perf_counter() - start)
        assert result.exit_code == 0, result.output
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        shell = spec_shell(Path(work) / "shell")
        box = spec_sandbox(Path(work) / "box")
        print(f"{'command':24} {'shell ms':>10} {'sandbox ms':>11} {'added ms':>9}  "
              f"(median of {args.repeat})")
        for label, command in COMMANDS.items():
            plain = statistics.median(timed(shell, command, args.repeat)) * 1000
            boxed = statistics.median(timed(box, command, args.repeat)) * 1000
            print(f"{label:24} {plain:10.2f} {boxed:11.2f} {boxed - plain:9.2f}")
        print(f"\n{'workspace files':24} {'walk ms':>10}  (median of 5)")
        for files in (100, 1_000, 10_000, 50_000):
            tree = Path(work) / f"tree{files}"
            for index in range(files):
                folder = tree / f"d{index // 100}"
                folder.mkdir(parents=True, exist_ok=True)
                (folder / f"f{index}").write_bytes(b"x")
            walks = []
            held = os.open(tree, os.O_RDONLY | os.O_DIRECTORY)
            for _ in range(5):
                start = time.perf_counter()
                sweep(held)
                walks.append(time.perf_counter() - start)
            os.close(held)
            print(f"{files:<24} {statistics.median(walks) * 1000:10.2f}")


if __name__ == "__main__":
    main()
