"""Searching a scenario's `expect.final.matches` in the last answer so that no pattern can
hang `agentspec test`: Python's `re` backtracks, and `^(a+)+$` on forty `a`s and a `!` runs
for ages while holding the GIL (a thread cannot interrupt it). The search runs in a child
interpreter with a deadline instead; one that is not done by then is killed and reported.
A child costs some milliseconds, paid only by scenarios that use `matches`, and keeps the
language of patterns exactly Python's (the `regex` module's timeout would need a new
dependency with its own dialect; refusing nested quantifiers up front misses `(a|a)*`)."""

from __future__ import annotations

import json
import subprocess
import sys

__all__ = ["MATCH_SECONDS", "search"]

#: how long one search may take
MATCH_SECONDS = 5.0
_CHILD = ("import json, re, sys\n"
          "pattern, text = json.load(sys.stdin)\n"
          "print(json.dumps(re.search(pattern, text) is not None))\n")


def search(pattern: str, text: str) -> bool | None:
    """Whether `pattern` matches somewhere in `text`; None when the search took longer than
    `MATCH_SECONDS` (it was stopped)."""
    try:
        done = subprocess.run([sys.executable, "-I", "-S", "-c", _CHILD],
                              input=json.dumps([pattern, text]), capture_output=True,
                              text=True, timeout=MATCH_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        raise RuntimeError(f"searching /{pattern}/ failed: {done.stderr.strip()[-500:]}")
    return bool(json.loads(done.stdout))
