"""The instruction escape `{{key}}`, without importing ADK (the compiler reads it too)."""

from __future__ import annotations

import re

__all__ = ["ESCAPE", "has_escape"]

#: `{{key}}` or `{{key?}}`, possibly with an ADK state prefix (`app:`, `user:`, `temp:`)
ESCAPE = re.compile(r"\{\{((?:app:|user:|temp:)?[A-Za-z_][A-Za-z0-9_]*\??)\}\}")


def has_escape(text: str) -> bool:
    return ESCAPE.search(text) is not None
