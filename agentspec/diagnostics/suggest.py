"""`did you mean ...?` hints."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean"]


def did_you_mean(word: object, choices: Iterable[str]) -> str | None:
    if not isinstance(word, str):
        return None
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean `{close[0]}`?" if close else None
