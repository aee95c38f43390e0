"""Source files and positions: the one place where 0-based marks become 1-based."""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Pos", "SourceFile", "Span", "find_in", "occurrence"]

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


@dataclass(frozen=True, order=True, slots=True)
class Pos:
    """A 1-based line and column."""

    line: int
    col: int

    @classmethod
    def from_zero_based(cls, line: int, col: int) -> Pos:
        return cls(line + 1, col + 1)


@dataclass(frozen=True)
class SourceFile:
    """A file as read from disk; `display` is how diagnostics name it."""

    path: Path
    text: str
    display: str = ""
    lines: tuple[str, ...] = field(init=False, repr=False, compare=False)
    line_starts: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # YAML's line breaks only: str.splitlines would also split on U+2028, form feeds, ...
        if "\r" not in self.text:  # the usual case, without a regex match per line
            lines = self.text.split("\n")
            if not lines[-1]:
                lines.pop()
            starts = [0, *itertools.accumulate(len(line) + 1 for line in lines)]
            if lines and not self.text.endswith("\n"):
                starts[-1] -= 1
            object.__setattr__(self, "lines", tuple(lines))
            object.__setattr__(self, "line_starts", tuple(starts))
            return
        found = [m.group(0) for m in _LINE.finditer(self.text) if m.group(0)]
        starts = [0]
        for line in found:
            starts.append(starts[-1] + len(line))
        object.__setattr__(self, "lines", tuple(line.rstrip("\r\n") for line in found))
        object.__setattr__(self, "line_starts", tuple(starts))

    @property
    def name(self) -> str:
        return self.display or str(self.path)

    def line(self, number: int) -> str:
        """The text of 1-based line `number`, without its newline ('' when out of range)."""
        return self.lines[number - 1] if 0 < number <= len(self.lines) else ""

    def offset(self, pos: Pos) -> int:
        index = min(max(pos.line - 1, 0), len(self.lines))
        return self.line_starts[index] + pos.col - 1

    def pos_at(self, offset: int) -> Pos:
        row = bisect.bisect_right(self.line_starts, offset) - 1
        return Pos(row + 1, offset - self.line_starts[row] + 1)


@dataclass(frozen=True, slots=True)
class Span:
    """A region of a source file; `end` is exclusive and on the same or a later line."""

    file: str
    start: Pos
    end: Pos | None = field(default=None, compare=False)

    @classmethod
    def at(cls, file: str, line: int, col: int) -> Span:
        return cls(file, Pos(line, col))

    def sort_key(self) -> tuple[str, int, int]:
        return (self.file, self.start.line, self.start.col)


def occurrence(text: str, needle: str, index: int) -> int:
    """How many times `needle` starts in `text` before `index` (overlaps count)."""
    count, at = 0, text.find(needle)
    while 0 <= at < index:
        count, at = count + 1, text.find(needle, at + 1)
    return count


def find_in(source: SourceFile, span: Span, needle: str, nth: int = 0) -> Span:
    """The position of the `nth` occurrence of `needle` inside `span` of `source` (the span
    itself when absent). Counting occurrences keeps a token apart from its escaped look-alike:
    in `$${env.X} ${env.X}` the reference is the second `${env.X}`."""
    begin = source.offset(span.start)
    end = max(source.offset(span.end) if span.end else len(source.text), begin + len(needle))
    found = source.text.find(needle, begin, end)
    for _ in range(nth):
        if found < 0:
            break
        found = source.text.find(needle, found + 1, end)
    if found < 0:
        return span
    start = source.pos_at(found)
    return Span(span.file, start, Pos(start.line, start.col + len(needle)))
