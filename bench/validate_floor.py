#!/usr/bin/env python
"""Where the start-up of `agentspec validate` goes: the CPU time of the import steps of the
validate path, each a prefix of the next, beside the LlmAgent import it is held to.

    .venv/bin/python bench/validate_floor.py [--repeat N] [--spec PATH]

CPU time (user + system of the child) rather than wall time, so that a busy machine changes
the figures less; each row is the median of `--repeat` fresh interpreters, run in turns.
It prints figures and asserts nothing. See bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = "from google.adk.agents import LlmAgent"
AIM = 0.20

#: (label, what the interpreter imports); each step adds to the one before it
STEPS: list[tuple[str, str]] = [
    ("interpreter start-up", "pass"),
    ("pydantic.main", "import pydantic.main"),
    ("+ click, ruamel.yaml", "import pydantic.main, click, ruamel.yaml"),
    ("+ agentspec.cli", "import pydantic.main, click, ruamel.yaml, agentspec.cli"),
    ("+ agentspec.language (the models)", "import agentspec.cli, agentspec.language"),
    ("+ agentspec.validate.check", "import agentspec.cli, agentspec.validate.check"),
    ("+ the kinds (and the IR they import)",
     "import agentspec.cli, agentspec.validate.check, agentspec.kinds"),
    ("+ lowering and the scenario check",
     "import agentspec.cli, agentspec.validate.check, agentspec.kinds, agentspec.ir.lower, "
     "agentspec.testing.names, agentspec.testing.check"),
]

# as bench/validate.py: the children write and read .pyc files like an installed package
# and a validator cache of this run's own (agentspec/language/prebuilt.py); the `AGENTSPEC_
# CACHE_DIR=` prefix of a row turns it off for that row (a first run)
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
CHILD_ENV["AGENTSPEC_CACHE_DIR"] = tempfile.mkdtemp(prefix="agentspec-bench-cache-")
COLD = "AGENTSPEC_CACHE_DIR="
# the `EDITED` prefix runs a row in an environment no run was remembered for (a remembered
# validate is keyed by the whole environment): the validators cached, the run not, as after an
# edit of the spec (agentspec/cli/remembered.py)
EDITED = "AGENTSPEC_BENCH_EDIT"
_EDITS = iter(range(1 << 62))


def child(argv: list[str], base: dict[str, str] = CHILD_ENV) -> tuple[list[str], dict[str, str]]:
    """The command of a row and its environment, after its `COLD` or `EDITED` prefix."""
    if argv[0] == COLD:
        return argv[1:], {**base, "AGENTSPEC_CACHE_DIR": ""}
    if argv[0] == EDITED:
        return argv[1:], {**base, EDITED: str(next(_EDITS))}
    return argv, base


def cli_rows(validate: list[str], name: str) -> list[tuple[str, list[str]]]:
    """The rows of the CLI: a first run, a run after an edit, and an unchanged one."""
    return [(f"CLI validate {name} (caches off)", [COLD, *validate]),
            (f"CLI validate {name} (after an edit)", [EDITED, *validate]),
            (f"CLI validate {name} (unchanged: replayed)", validate)]


def cpu_seconds(argv: list[str]) -> float:
    """User + system CPU time of one run of `argv`, its output discarded."""
    null = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
    argv, env = child(argv)
    pid = os.posix_spawn(argv[0], argv, env, file_actions=null)
    _, _, usage = os.wait4(pid, 0)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs per row (7)")
    parser.add_argument("--spec", type=Path, default=ROOT / "specs" / "research_desk.yaml",
                        help="the spec the last row validates (specs/research_desk.yaml)")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if not (hasattr(os, "posix_spawn") and hasattr(os, "wait4")):
        print("needs os.posix_spawn and os.wait4 (POSIX)", file=sys.stderr)
        return 1
    python = sys.executable
    rows: list[tuple[str, list[str]]] = [("LlmAgent import (the reference)",
                                          [python, "-c", REFERENCE])]
    rows += [(label, [python, "-c", code]) for label, code in STEPS]
    validate = [python, "-m", "agentspec", "validate", str(args.spec)]
    rows += cli_rows(validate, args.spec.name)
    os.chdir(ROOT)  # before the warm-up: a remembered run is kept for its directory
    for _, argv in rows:  # warm-up: .pyc files written, caches filled
        cpu_seconds(argv)
    times: dict[str, list[float]] = {label: [] for label, _ in rows}
    for _ in range(args.repeat):
        for label, argv in rows:
            times[label].append(cpu_seconds(argv))
    reference = statistics.median(times[rows[0][0]])
    print(f"CPU time, median of {args.repeat} (python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs); budget at {AIM:.2f}: {reference * AIM * 1000:.0f} ms")
    width = max(len(label) for label, _ in rows)
    print(f"{'step':<{width}}  {'CPU':>9}  {'x import':>8}  {'step adds':>9}")
    before: float | None = None
    for label, _ in rows:
        median = statistics.median(times[label])
        adds = "" if before is None or label.startswith("CLI") else \
            f"{(median - before) * 1000:7.1f} ms"
        print(f"{label:<{width}}  {median * 1000:6.1f} ms  {median / reference:8.3f}  {adds:>9}")
        if label != rows[0][0]:
            before = median
    return 0


if __name__ == "__main__":
    sys.exit(main())
