"""Between agentspec's places (1-based line and column, in characters) and the protocol's
(0-based line, UTF-16 code units, as LSP's default position encoding counts)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp

from agentspec.source import Pos, Span

__all__ = ["path_of", "pos_of", "range_of", "uri_of"]


def _units(line: str, chars: int) -> int:
    head = line[:chars]
    return len(head.encode("utf-16-le", "surrogatepass")) // 2


def _chars(line: str, units: int) -> int:
    count = 0
    for index, char in enumerate(line):
        if count >= units:
            return index
        count += 2 if ord(char) > 0xFFFF else 1
    return len(line)


def _position(lines: list[str], pos: Pos) -> lsp.Position:
    row = max(pos.line - 1, 0)
    line = lines[row] if row < len(lines) else ""
    return lsp.Position(row, _units(line, max(pos.col - 1, 0)))


def range_of(span: Span, lines: list[str]) -> lsp.Range:
    start = _position(lines, span.start)
    end = _position(lines, span.end) if span.end is not None else \
        lsp.Position(start.line, start.character + 1)
    return lsp.Range(start, end)


def pos_of(position: lsp.Position, lines: list[str]) -> Pos:
    line = lines[position.line] if position.line < len(lines) else ""
    return Pos(position.line + 1, _chars(line, position.character) + 1)


def path_of(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def uri_of(path: Path) -> str:
    return path.resolve().as_uri()
