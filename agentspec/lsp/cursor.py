"""What a place in a spec's text is about, read from the text around it (the YAML may be
half typed, so no parser is asked): the key path above a line, the key a value belongs to,
the word under the cursor."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Context", "context_at", "key_path", "word_at"]

_KEY = re.compile(r"^(\s*)(?:-\s+)?([A-Za-z_][\w-]*)\s*:(?:\s|$)")
_ITEM = re.compile(r"^(\s*)-(?:\s|$)")
_WORD = re.compile(r"[\w.-]+(?::[\w.]+)*")
#: how much of the line before the cursor the patterns read: a pattern anchored at the
#: end (`[\w-]*$`) is tried at every start, so over a long run of word characters its work
#: grows with the square of the length (a 40,000-character pasted word took 35 s)
_TAIL = 1000


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def key_path(lines: list[str], row: int, column: int) -> list[str]:
    """The keys enclosing column `column` of line `row` (0-based), outermost first; a list
    item counts as its list's key (the schema's `items` are looked up from it)."""
    line = lines[row] if row < len(lines) else ""
    indent = _indent(line)
    limit = min(column, indent) if line.strip() else column
    if _ITEM.match(line) and column > indent:
        limit = indent + 1  # `key:` then `- item` at the same indent
    path: list[str] = []
    for index in range(min(row, len(lines)) - 1, -1, -1):
        above = lines[index]
        if not above.strip() or above.lstrip().startswith("#"):
            continue
        indent = _indent(above)
        if indent >= limit:
            continue
        if _ITEM.match(above):
            limit = indent + 1  # the item's own keys do not enclose; its list's key does
            continue
        match = _KEY.match(above)
        if match:
            path.insert(0, match.group(2))
            limit = indent
            if indent == 0:
                break
    return path


@dataclass(frozen=True)
class Context:
    """Where the cursor is: the key path above it, the key its value belongs to (if on a
    value), and the text typed so far of the word it is on."""

    path: list[str]
    value_of: str | None
    prefix: str
    in_flow: bool  # inside `[...]` or `{...}`
    #: the line before the cursor (its last `_TAIL` characters)
    line_prefix: str


def context_at(lines: list[str], row: int, column: int) -> Context:
    line = lines[row] if row < len(lines) else ""
    before = line[:column]
    tail = before[-_TAIL:]
    prefix = re.search(r"[\w-]*$", tail)
    typed = prefix.group(0) if prefix else ""
    match = _KEY.match(line)
    value_of: str | None = None
    path = key_path(lines, row, column)
    if match and column > match.end(2):
        value_of = match.group(2)
    elif _ITEM.match(line) and path:
        value_of = path[-1]
        path = path[:-1]
    in_flow = before.count("[") > before.count("]") or before.count("{") > before.count("}")
    return Context(path, value_of, typed, in_flow, tail)


def word_at(line: str, column: int) -> tuple[str, int, int] | None:
    """The word (letters, digits, `_.:-`) around `column`, with its start and end."""
    for match in _WORD.finditer(line):
        if match.start() <= column <= match.end():
            return match.group(0), match.start(), match.end()
    return None
