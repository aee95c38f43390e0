#!/usr/bin/env python
"""The rows of `validate_floor.py` counted in instructions rather than timed: each row runs
once under valgrind (`cachegrind`, no cache simulation) and prints the instructions it
executed, beside the LlmAgent import. Counts barely move with the machine's load (a run
repeated differs by well under 1%), so two versions of the code can be compared on a busy
machine, where CPU times move by tens of percent; they do not see what costs time without
instructions (page faults, cache misses), so time the result with `validate_floor.py`.

    .venv/bin/python bench/validate_instructions.py [--spec PATH] [--no-reference]

Needs valgrind (`apt-get install valgrind`); a row runs about 30 times slower than
natively, the reference row about half a minute. It prints figures and asserts nothing.
See bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from validate_floor import CHILD_ENV, REFERENCE, ROOT, STEPS, child, cli_rows

_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")
ENV = {**CHILD_ENV, "PYTHONHASHSEED": "0"}  # the same hashing, the same work


def instructions(argv: list[str]) -> int | None:
    """The instructions one run of `argv` executed (its output discarded), or None."""
    argv, env = child(argv, ENV)
    done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                           "--cachegrind-out-file=/dev/null", *argv], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    found = _REFS.search(done.stderr)
    return int(found.group(1).replace(",", "")) if found else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", type=Path, default=ROOT / "specs" / "research_desk.yaml",
                        help="the spec the CLI rows validate (specs/research_desk.yaml)")
    parser.add_argument("--no-reference", action="store_true",
                        help="leave out the LlmAgent import (the slowest row)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 1
    python = sys.executable
    rows: list[tuple[str, list[str]]] = [] if args.no_reference else [
        ("LlmAgent import (the reference)", [python, "-c", REFERENCE])]
    rows += [(label, [python, "-c", code]) for label, code in STEPS]
    validate = [python, "-m", "agentspec", "validate", str(args.spec)]
    rows += cli_rows(validate, args.spec.name)
    os.chdir(ROOT)  # before the warm-up: a remembered run is kept for its directory
    for _, argv in rows:  # natively, once: .pyc files written, the caches filled
        command, env = child(argv, ENV)
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    width = max(len(label) for label, _ in rows)
    print(f"instructions, one run each under valgrind (python {sys.version.split()[0]})")
    print(f"{'step':<{width}}  {'instructions':>14}  {'x import':>8}")
    reference: int | None = None
    for label, argv in rows:
        if argv is rows[-1][1]:  # valgrind's own variables (LD_PRELOAD) make it another run
            instructions(argv)  # to remember first
        count = instructions(argv)
        if count is None:
            print(f"{label:<{width}}  {'(failed)':>14}")
            continue
        reference = count if reference is None and not args.no_reference else reference
        ratio = f"{count / reference:8.3f}" if reference else ""
        print(f"{label:<{width}}  {count:14,d}  {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
