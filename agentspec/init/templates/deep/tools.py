"""Tools of the __NAME__ agent."""

from __future__ import annotations


def word_count(text: str) -> dict[str, int]:
    """Counts the words and characters of a text.

    Args:
        text: The text to measure.
    """
    return {"words": len(text.split()), "characters": len(text)}
