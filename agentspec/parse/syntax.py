"""YAML syntax errors as diagnostics, pointing at the line that went wrong.

ruamel reports where parsing failed, which for indentation mistakes is often a later line or
a token in the middle of one. The common mistakes are recognised from the parser's error and
the lines above it, and reported at the line to fix, with the indentations that would fit.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ruamel.yaml.error import MarkedYAMLError, YAMLError

from agentspec.diagnostics import Diagnostic, codes
from agentspec.source import Pos, SourceFile, Span

__all__ = ["mark_pos", "syntax_error"]


def mark_pos(mark: Any) -> Pos:
    """Where a ruamel mark points, 1-based."""
    return Pos.from_zero_based(mark.line, mark.column)


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _is_content(text: str) -> bool:
    stripped = text.strip()
    return bool(stripped) and not stripped.startswith("#")


def _key(text: str) -> str:
    """The key a `key: value` line starts with (after any `- `), as written."""
    body = text.strip()
    while body.startswith("- "):
        body = body[2:].lstrip()
    key = body.split(": ", 1)[0].removesuffix(":").strip()
    return key if len(key) <= 40 else key[:39] + "…"


@dataclass(frozen=True)
class _Level:
    """A block the line after it could continue: its indentation, where it is, its kind."""

    indent: int
    line: int
    item: bool  # a list item (`- `), else a mapping key
    label: str


def _levels(source: SourceFile, line: int) -> Iterator[_Level]:
    """The blocks open above `line`, innermost first: each line less indented than the ones
    after it opens one; `- key: value` opens a list item and, inside it, a mapping."""
    limit = None
    for number in range(line - 1, 0, -1):
        text = source.line(number)
        if not _is_content(text):
            continue
        indent = _indent(text)
        if limit is not None and indent >= limit:
            continue
        stripped = text.strip()
        if stripped.startswith("- ") or stripped == "-":
            inner = stripped[1:].lstrip()
            if (": " in inner or inner.endswith(":")) and (limit is None or indent + 2 < limit):
                yield _Level(indent + 2 + _indent(stripped[2:]), number, False, _key(text))
            yield _Level(indent, number, True, f"- {inner[:20]}".rstrip())
        else:
            yield _Level(indent, number, False, _key(text))
        limit = indent
        if indent == 0:
            return


def _indented(count: int) -> str:
    return "not indented" if count == 0 else f"indented {count} space" + "s" * (count != 1)


_BLOCK_SCALAR = re.compile(r":\s+[|>][-+0-9]*\s*(#.*)?$")


def _block_text(source: SourceFile, line: int) -> tuple[str, int, int] | None:
    """(key, first text line, its indentation) when `line` sits under a block scalar
    (`key: |`) but is indented less than the text above it."""
    indent = _indent(source.line(line))
    for number in range(line - 1, 0, -1):
        text = source.line(number)
        if _is_content(text) and _indent(text) < indent:
            if not _BLOCK_SCALAR.search(text):
                return None
            first = next((n for n in range(number + 1, line) if source.line(n).strip()), None)
            if first is None:
                return None
            return _key(text), first, _indent(source.line(first))
    return None


def _misaligned(exc: MarkedYAMLError, source: SourceFile) -> Diagnostic | None:
    """`expected <block end>`: a line indented unlike any block above it, or like a block of
    the other kind (a list item where a mapping key belongs)."""
    mark = exc.problem_mark
    line = mark.line + 1
    text = source.line(line)
    if mark.column != _indent(text):  # the token is not the first on its line
        return None
    found = mark.column
    block = _block_text(source, line)
    if block is not None:
        key, first, indent = block
        return codes.YAML_INDENTATION(
            f"this line is indented less than the text of `{key}` above it",
            Span(source.name, mark_pos(mark)),
            hint=f"indent it like that text (line {first}, {_indented(indent)}), or end the text "
            "before it")
    item = text.strip().startswith("-")
    fitting = sorted((level for level in _levels(source, line) if level.item == item),
                     key=lambda level: (abs(level.indent - found), -level.line))[:2]
    what = "list item" if item else "line"
    if fitting:
        hint = "line it up with " + " or ".join(
            f"`{level.label}` (line {level.line}, {_indented(level.indent)})"
            for level in fitting)
    else:
        hint = _under_key(source, line) or "indent it like the block it belongs to"
    return codes.YAML_INDENTATION(
        f"this {what} is {_indented(found)}, which lines it up with no "
        f"{'list' if item else 'mapping'} above it", Span(source.name, mark_pos(mark)),
        hint=hint)


def _under_key(source: SourceFile, line: int) -> str | None:
    """How to put `line` under the `key:` just above it, if there is one."""
    above = next(_levels(source, line), None)
    if above is None or above.item or not source.line(above.line).rstrip().endswith(":"):
        return None
    return (f"indent it more than `{above.label}` (line {above.line}, "
            f"{_indented(above.indent)}) to put it under that key")


def _indented_start(exc: MarkedYAMLError, source: SourceFile) -> Diagnostic | None:
    """`expected '<document start>'`: the first line is indented, a later one is not."""
    first = next((n for n in range(1, len(source.lines) + 1) if _is_content(source.line(n))),
                 None)
    if first is None or _indent(source.line(first)) <= exc.problem_mark.column:
        return None
    return codes.YAML_INDENTATION(
        f"the first line is {_indented(_indent(source.line(first)))}, more than the "
        f"top-level keys after it", Span(source.name, Pos(first, 1)),
        hint="start the top-level keys in the first column")


def _continued(exc: MarkedYAMLError, source: SourceFile) -> Diagnostic | None:
    """`mapping values are not allowed here` on a line indented more than the `key: value`
    above it: YAML reads the line as more of that value, then trips on its colon."""
    mark = exc.problem_mark
    line = mark.line + 1
    text = source.line(line)
    if ": " in text[:mark.column] or text[:mark.column].rstrip().endswith(":"):
        return codes.YAML_SYNTAX("a value holds `: `, which YAML reads as another key",
                                 Span(source.name, mark_pos(mark)),
                                 hint="quote the value: `key: \"text: more\"`")
    above = next((n for n in range(line - 1, 0, -1) if _is_content(source.line(n))), None)
    if above is None:
        return None
    previous = source.line(above)
    key = next((level for level in _levels(source, line) if not level.item), None)
    if key is None or key.line != above or _indent(text) <= key.indent or \
            previous.rstrip().endswith((":", "|", ">", "|-", ">-")):
        return None
    return codes.YAML_INDENTATION(
        f"this line is indented more than `{key.label}` on line {above}, so YAML reads it "
        f"as more of that value", Span(source.name, Pos(line, _indent(text) + 1)),
        hint=f"line it up with `{key.label}` ({_indented(key.indent)}) to start a key, or quote "
        "the value if the colon belongs to it")


def _no_colon(exc: MarkedYAMLError, source: SourceFile) -> Diagnostic | None:
    """`could not find expected ':'` is reported on the line after the one without it."""
    mark = exc.context_mark
    if mark is None:
        return None
    text = source.line(mark.line + 1).strip()
    if text.startswith("-") and not text.startswith("- "):
        hint = f"a list item needs a space after the dash: `- {text[1:40]}`"
    else:
        hint = "write `key: value`; a line that continues a value is indented more than its key"
    return codes.YAML_SYNTAX(f"`{text[:40]}` is not followed by `:`",
                             Span(source.name, mark_pos(mark)), hint=hint)


_RECOGNISED = {"expected <block end>": _misaligned,
               "expected '<document start>'": _indented_start,
               "mapping values are not allowed here": _continued,
               "could not find expected ':'": _no_colon}


def _recognised(exc: YAMLError, source: SourceFile) -> Diagnostic | None:
    if not isinstance(exc, MarkedYAMLError) or exc.problem_mark is None:
        return None
    problem = " ".join((exc.problem or "").split())
    for start, handler in _RECOGNISED.items():
        if problem.startswith(start):
            return handler(exc, source)
    return None


def _tab_indent(source: SourceFile, line: int) -> Diagnostic | None:
    """A tab in the indentation of the line where parsing failed (tabs elsewhere, such as
    inside block scalars, are legal)."""
    text = source.line(line)
    indent = text[: len(text) - len(text.lstrip(" \t"))]
    if "\t" not in indent:
        return None
    return codes.TAB_INDENT("a tab is used for indentation",
                            Span.at(source.name, line, indent.index("\t") + 1),
                            hint="indent with spaces")


def syntax_error(exc: YAMLError, source: SourceFile) -> list[Diagnostic]:
    """The diagnostic for a file ruamel could not parse."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None:
        span = Span(source.name, mark_pos(mark))
    elif isinstance(getattr(exc, "position", None), int):  # ReaderError: a character offset
        span = Span(source.name, source.pos_at(exc.position))  # type: ignore[attr-defined]
    else:
        span = Span.at(source.name, 1, 1)
    tab = _tab_indent(source, span.start.line)
    if tab is not None:
        return [tab]
    recognised = _recognised(exc, source)
    if recognised is not None:
        return [recognised]
    if isinstance(exc, MarkedYAMLError):
        problem = exc.problem or exc.context or "invalid YAML"
    else:
        problem = str(exc).splitlines()[0]
    message = " ".join(str(problem).split())
    if isinstance(exc, MarkedYAMLError) and exc.context and exc.problem:
        message = f"{message} ({' '.join(exc.context.split())})"
    return [codes.YAML_SYNTAX(message, span)]
