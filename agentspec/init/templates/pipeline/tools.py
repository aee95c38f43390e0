"""Tools of the __NAME__ pipeline."""

from __future__ import annotations


def text_stats(text: str) -> dict[str, int]:
    """Word and sentence counts of a text.

    Args:
        text: The text to measure.
    """
    sentences = sum(text.count(mark) for mark in ".!?") or 1
    return {"words": len(text.split()), "sentences": sentences}
