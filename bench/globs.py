#!/usr/bin/env python
"""How fast globs match, for ordinary and for hostile patterns (see bench/README.md).

    .venv/bin/python bench/globs.py [--paths N] [--repeat N]

Prints figures only; asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentspec.contract.globs import (  # noqa: E402
    MAX_GLOB_STEPS,
    GlobBudget,
    GlobPattern,
    GlobTooCostly,
)

PATTERNS = {
    "*.py (by name)": "*.py",
    "**/*.py": "**/*.py",
    "dir_5*/**/*.md": "dir_5*/**/*.md",
    "src/{a,b}/[!x]*.txt": "src/{a,b}/[!x]*.txt",
    "*a x 20 + b (issue 12)": "*a" * 20 + "b",
    "*a x 249 + b (500 chars)": "*a" * 249 + "b",
    "**/ x 160 + b": "**/" * 160 + "b",
}


def paths(count: int) -> list[str]:
    rng = random.Random(7)
    words = ["src", "a", "b", "dir_50", "dir_07", "sub", "notes", "aaaa", "aaaaaaaaaaaaaaaa"]
    out = []
    for _ in range(count):
        depth = rng.randint(1, 5)
        parts = [rng.choice(words) for _ in range(depth)]
        parts.append(rng.choice(words) + rng.choice([".py", ".md", ".txt", "a" * 40]))
        out.append("/".join(parts))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--paths", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    names = paths(args.paths)
    chars = sum(len(n) for n in names)
    print(f"{len(names)} paths, {chars} characters; median of {args.repeat} runs")
    print(f"{'pattern':28} {'states':>6} {'first ms':>9} {'median ms':>10} "
          f"{'us/path':>8} {'steps/char':>10} {'matches':>8}")
    for label, pattern in PATTERNS.items():
        compiled = GlobPattern(pattern)
        # as glob_match does: a pattern without `/` is matched against the file's name
        targets = names if "/" in pattern else [n.rsplit("/", 1)[-1] for n in names]
        timings = []
        matched = 0
        for _ in range(args.repeat + 1):
            compiled.steps = 0
            started = time.perf_counter()
            matched = sum(compiled.matches(n) for n in targets)
            timings.append(time.perf_counter() - started)
        first, median = timings[0], statistics.median(timings[1:])
        print(f"{label:28} {len(compiled.states):>6} {first * 1000:>9.1f} "
              f"{median * 1000:>10.1f} {median / len(names) * 1e6:>8.2f} "
              f"{compiled.steps / chars:>10.2f} {matched:>8}")
    costly_call()
    return 0


def costly_call() -> None:
    """Issue 21, item 20: `*a` + 200 `?` over 2,000 names of 150-250 characters cost 13.7 s
    of CPU in one glob call; a call now stops when its budget is spent."""
    rng = random.Random(1)
    names = ["".join(rng.choice("ab") for _ in range(rng.randint(150, 250)))
             for _ in range(2000)]
    compiled, budget = GlobPattern("*a" + "?" * 200), GlobBudget()
    started = time.process_time()
    done = 0
    try:
        for name in names:
            compiled.matches(name, budget)
            done += 1
        outcome = "finished"
    except GlobTooCostly:
        outcome = "stopped (too costly)"
    print(f"\none call, `*a` + 200 `?` over {len(names)} names: {outcome} after {done} names, "
          f"{compiled.steps:,} steps (budget {MAX_GLOB_STEPS:,}), "
          f"{time.process_time() - started:.2f} s CPU")


if __name__ == "__main__":
    raise SystemExit(main())
