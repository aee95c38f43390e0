"""A tool call as a person approving it sees it: all of it, nothing hidden.

A person must approve exactly what runs, so the text shows every argument in full (never cut)
and makes visible what a terminal or a browser would hide or reorder: control characters,
bidirectional overrides, zero-width and other invisible characters, and long runs of one
character (`"a" + " " x 2000 + "; touch HIDDEN"` would otherwise push the tail out of sight).

Strings are quoted, and inside them every literal backslash and quote is escaped, so the
escapes and marks this module adds can never be imitated by an argument's own text. A string
with line breaks is shown as a block, each line behind a `|` gutter, so no line of it can pass
for another argument. `agentspec run` prints this text; the approval gate puts it in the
confirmation's hint, which is what `adk web` shows.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_REVIEW_CHARS", "call_text", "visible"]

#: a call whose text is longer than this is not put to a person (it does not run)
MAX_REVIEW_CHARS = 100_000
#: a run of at least this many equal characters is shown as `"c" x N` when the character is
#: whitespace or invisible (long runs of visible characters are shown as they are)
_RUN = 8
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}
_HIDDEN = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
#: invisible characters of other categories: fillers, a blank, variation selectors
_BLANKS = {0x034F, 0x115F, 0x1160, 0x2800, 0x3164, 0xFFA0}


def _escaped(char: str) -> str:
    """The character as it is shown inside quotes."""
    if char in _ESCAPES:
        return _ESCAPES[char]
    code = ord(char)
    category = unicodedata.category(char)
    if category in _HIDDEN or (category == "Zs" and char != " ") or code in _BLANKS or \
            0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    return char


def visible(text: str) -> str:
    """Text for a terminal with its hidden characters escaped (line breaks and tabs kept),
    so what a model wrote cannot move the cursor, change colours or hide what follows."""
    return "".join(c if c in "\n\t\\\"" else _escaped(c) for c in text)


def _invisible(char: str) -> bool:
    return char.isspace() or _escaped(char) != char and char not in '\\"'


def _runs(text: str) -> list[tuple[str, int]]:
    """(character or chunk, count): long runs of whitespace or invisible characters apart."""
    out: list[tuple[str, int]] = []
    i = 0
    chunk_start = 0
    while i < len(text):
        j = i
        while j < len(text) and text[j] == text[i]:
            j += 1
        if j - i >= _RUN and _invisible(text[i]):
            if chunk_start < i:
                out.append((text[chunk_start:i], 1))
            out.append((text[i], j - i))
            chunk_start = j
        i = j
    if chunk_start < len(text) or not out:
        out.append((text[chunk_start:], 1))
    return out


def _quoted(text: str) -> str:
    """A one-line string: quoted pieces, with `+ "c" x N +` for long invisible runs."""
    pieces = []
    for chunk, count in _runs(text):
        quoted = '"' + "".join(_escaped(c) for c in chunk) + '"'
        pieces.append(quoted if count == 1 else f"{quoted} x {count}")
    return " + ".join(pieces)


def _block(text: str, indent: str) -> str:
    """A multi-line string, each line behind a gutter; a line's own hidden characters and
    long runs are shown as in a quoted string (without the quotes)."""
    lines = []
    for line in text.split("\n"):
        shown = []
        for chunk, count in _runs(line):
            if count == 1:
                shown.append("".join(_escaped(c) for c in chunk).replace('\\"', '"'))
            else:
                shown.append(f"\\[{_quoted(chunk)} x {count}]")
        lines.append(f"{indent}| {''.join(shown)}")
    return "\n".join(lines)


def _value(value: Any) -> str:
    """A JSON-like value, its strings (and keys) quoted as above."""
    if isinstance(value, str):
        return _quoted(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_quoted(str(k))}: {_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return json.dumps(value, default=str)


def _name(key: str) -> str:
    return key if key.isidentifier() and key.isascii() else _quoted(key)


def _multi_line(value: Any) -> bool:
    return isinstance(value, str) and "\n" in value.strip("\n")


def call_text(tool: str, args: Mapping[str, Any]) -> str:
    """The whole call: one line when it is short and has no multi-line string, else one
    argument a line (a multi-line string as a block)."""
    inline = [f"{_name(str(k))}={_value(v)}" for k, v in args.items()]
    one_line = f"{_name(tool)}({', '.join(inline)})"
    if len(one_line) <= 100 and not any(_multi_line(v) for v in args.values()):
        return one_line
    lines = [f"{_name(tool)}("]
    for key, value in args.items():
        if _multi_line(value):
            lines.append(f"  {_name(str(key))}=")
            lines.append(_block(value, "    "))
        else:
            lines.append(f"  {_name(str(key))}={_value(value)},")
    lines.append(")")
    return "\n".join(lines)
