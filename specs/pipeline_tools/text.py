"""Readability statistics for drafts."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["text_stats"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+(?:[.,]\d+)*")
_VOWEL_GROUPS = re.compile(r"[aeiouy]+")
_MARKDOWN = re.compile(r"^[ \t]{0,3}(#{1,6}\s|[-*+]\s|\d+\.\s|>\s?)", re.MULTILINE)
_PASSIVE = re.compile(r"\b(?:is|are|was|were|be|been|being)\s+(?:\w+ly\s+)?\w+ed\b",
                      re.IGNORECASE)
LONG_SENTENCE_WORDS = 30


def _syllables(word: str) -> int:
    word = word.lower().strip("'")
    if not word.isalpha():
        return 1
    count = len(_VOWEL_GROUPS.findall(word))
    if word.endswith("e") and not word.endswith(("le", "ee")) and count > 1:
        count -= 1
    return max(1, count)


def text_stats(text: str) -> dict[str, Any]:
    """Measure how readable a draft is.

    Returns word, sentence and paragraph counts, the average sentence length, the Flesch
    reading ease score (0-100, higher is easier; 60-70 suits a general audience, below 30 is
    very hard), the estimated reading time, the number of likely passive constructions,
    and the sentences longer than 30 words (shortened to their first 12 words).

    Args:
        text: The draft, plain text or Markdown.
    """
    plain = _MARKDOWN.sub("", text)
    paragraphs = [p for p in re.split(r"\n\s*\n", plain) if p.strip()]
    sentences = [s for p in paragraphs for s in _SENTENCE_END.split(" ".join(p.split()))
                 if _WORD.search(s)]
    words = _WORD.findall(plain)
    if not words:
        return {"status": "error", "error": "The text contains no words."}
    syllables = sum(_syllables(w) for w in words)
    words_per_sentence = len(words) / max(1, len(sentences))
    flesch = 206.835 - 1.015 * words_per_sentence - 84.6 * syllables / len(words)
    long_sentences = [" ".join(s.split()[:12]) + " ..." for s in sentences
                      if len(_WORD.findall(s)) > LONG_SENTENCE_WORDS]
    return {"status": "success", "words": len(words), "sentences": len(sentences),
            "paragraphs": len(paragraphs),
            "avg_words_per_sentence": round(words_per_sentence, 1),
            "flesch_reading_ease": round(max(0.0, min(100.0, flesch)), 1),
            "reading_minutes": round(len(words) / 230, 1),
            "passive_constructions": len(_PASSIVE.findall(plain)),
            "long_sentences": long_sentences}
