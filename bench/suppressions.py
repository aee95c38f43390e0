#!/usr/bin/env python
"""What `# agentspec: ignore[...]` comments cost `check()`: a generated spec of N unreachable
agents (one AS224 warning each), checked without comments, with a used suppression on every
agent's line, and with one that names an unknown code too (an AS019 per line).

    .venv/bin/python bench/suppressions.py [--agents N] [--repeat N]

Prints figures only; asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentspec.validate.check import check  # noqa: E402

COMMENTS = {
    "no comments": "",
    "a used suppression per agent": "  # agentspec: ignore[unreachable-agent]",
    "used and unknown codes per agent": "  # agentspec: ignore[AS224, nope{i}]",
}


def spec(agents: int, comment: str) -> str:
    lines = ["agentspec: 1", "name: demo", "root: a0", "agents:"]
    for i in range(agents):
        lines += [f"  a{i}:{comment.format(i=i)}", f"    instruction: Help {i}."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--agents", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        print(f"check() of a spec of {args.agents} agents, median of {args.repeat}")
        for label, comment in COMMENTS.items():
            path = Path(work) / "spec.yaml"
            path.write_text(spec(args.agents, comment))
            times = []
            for _ in range(args.repeat):
                start = time.process_time()
                found = check(path).diagnostics
                times.append(time.process_time() - start)
            print(f"  {label:<36} {statistics.median(times):7.3f} s CPU  "
                  f"{len(found)} diagnostics")


if __name__ == "__main__":
    main()
