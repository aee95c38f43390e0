"""Parsing a file again after an edit, reusing what the edit did not touch.

A spec is a mapping of top-level keys, and its sections (`agents`, `tools`, ...) mappings of
names, each written on lines of its own. `Reparser.load_text` cuts the text at the lines
that start a top-level key, and a section's lines at the lines that start one of its names,
parses each piece alone, and keeps the result keyed by the piece's text: a keystroke parses
one piece again, and a piece that only moved (lines added above it) has its positions moved.
A file seen for the first time is parsed whole (one parser set-up, not one per piece) and
its pieces are cut from that parse.

The pieces give exactly what a parse of the whole text gives, or the whole text is parsed:
any piece with a problem, a key written twice, anything YAML could read across pieces
(`---`, directives, merge keys `<<`, tabs in indentation, carriage returns), a text that
does not end with a line break, or a piece that is not one mapping of the one key its first
line names, and the whole file is parsed as before, so every diagnostic comes from that
parse. What is kept is keyed by content, never by time.
"""

from __future__ import annotations

import functools
import re
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentspec.parse.loader import MAX_BYTES, MAX_NODES, Parsed, load_piece, load_text
from agentspec.parse.positions import PosNode
from agentspec.source import Pos, SourceFile, Span

__all__ = ["MAX_PIECES", "Reparser"]

#: a line holding a key and nothing else (a block value follows)
_BARE_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*:[ \t]*(?:#.*)?$")
#: a line holding more than a comment, by the break before it, with its indentation (tabs
#: there are refused by _ACROSS)
_CONTENT = re.compile(r"\n( *)[^ \n#]")
#: what YAML could read across pieces, or counts as a line break where `\n` does not
_ACROSS = ("<<", "\r", "\x85", "\u2028", "\u2029", "\ufeff", "\n%", "\n---", "\n...")
_TAB_INDENT = re.compile(r"^ *\t", re.M)
#: pieces kept, and the characters they hold at most: enough for a few large specs and
#: their imports, bounded whatever is typed; a file of more pieces than MAX_PIECES is parsed
#: whole (each piece costs a parser's set-up, and they would not all stay)
_PIECES, _PIECE_CHARS = 8192, 4 * MAX_BYTES
#: files whose last parse is kept
_FILES = 256
MAX_PIECES = _PIECES // 4

Piece = tuple[dict[str, Any], PosNode, int]
#: a top-level entry: its key, value, position, how many values it holds, where it ends
_Found = tuple[str, Any, PosNode, int, Pos | None]


@dataclass
class _Kept:
    value: dict[str, Any]
    pos: PosNode
    count: int
    line: int  # where `pos` puts it: a piece that moved is moved there


@functools.cache
def _entries(indent: int) -> re.Pattern[str]:
    """The lines starting a plain key (`name:`) `indent` spaces in."""
    return re.compile(rf"\n {{{indent}}}([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*:(?:[ \t]|$)", re.M)


@functools.cache
def _shallower(indent: int) -> re.Pattern[str]:
    """The lines holding more than a comment, fewer than `indent` spaces in."""
    return re.compile(rf"\n {{0,{indent - 1}}}[^ \n#]")


def _across(text: str) -> bool:
    return any(mark in text for mark in _ACROSS) or text.startswith(("%", "---", "...")) \
        or ("\t" in text and _TAB_INDENT.search(text) is not None)


def _moved(node: PosNode, lines: int) -> PosNode:
    return PosNode(_span_moved(node.value, lines),
                   None if node.key is None else _span_moved(node.key, lines),
                   {k: _moved(c, lines) for k, c in node.children.items()})


def _span_moved(span: Span, lines: int) -> Span:
    end = span.end
    return Span(span.file, Pos(span.start.line + lines, span.start.col),
                None if end is None else Pos(end.line + lines, end.col))


class Reparser:
    """Parses files as `loader.load_text` does, keeping the pieces of the last texts."""

    def __init__(self) -> None:
        self._pieces: OrderedDict[tuple[str, str, int], _Kept] = OrderedDict()
        self._chars = 0  # in the texts of `_pieces`
        #: each file's last text and parse (an editor holds one text of a file)
        self._files: dict[tuple[str, str], tuple[str, Parsed]] = {}
        #: how many pieces were parsed (not found kept): what a test of reuse counts
        self.parsed_pieces = 0
        #: when a list: every file it is given is added, with its name (what a check reads)
        self.loaded: list[tuple[Path, str]] | None = None
        self._left = MAX_PIECES  # how many more pieces the file being parsed may have
        #: while a file seen for the first time is cut: its whole parse, the pieces' source,
        #: and the pieces cut from it
        self._whole: Parsed | None = None
        self._cut: list[tuple[str, str, int]] = []

    def load_text(self, text: str, *, path: Path, display: str | None = None) -> Parsed:
        name = display or str(path)
        if self.loaded is not None:
            self.loaded.append((path, name))
        last = self._files.get((str(path), name))
        if last is not None and last[0] == text:
            return _fresh(last[1])
        if last is None:  # a file opened: parsed whole (faster), its pieces cut from that
            parsed = load_text(text, path=path, display=name)
            # an alias takes its value from another piece, which the piece alone would not
            if parsed.ok and not parsed.diagnostics and "&" not in text:
                self._cut_from(parsed, text, path, name)
        else:
            parsed = self._pieced(text, path, name) or load_text(text, path=path, display=name)
        self._files.pop((str(path), name), None)
        self._files[str(path), name] = (text, parsed)
        if len(self._files) > _FILES:  # the file parsed longest ago
            del self._files[next(iter(self._files))]
        return _fresh(parsed)

    def _cut_from(self, whole: Parsed, text: str, path: Path, name: str) -> None:
        """Keep the pieces of `text` as cut from its `whole` parse. The cut is kept only when
        its pieces hold the whole file's keys, its sections' too, in their order: a key line
        the pieces do not start at (`"quoted": ...`) would be inside another's piece."""
        self._whole, self._cut = whole, []
        try:
            pieced = self._pieced(text, path, name)
        finally:
            self._whole = None
        if pieced is None or not _same_keys(pieced.value, whole.value):
            for key in self._cut:
                if self._pieces.pop(key, None) is not None:
                    self._chars -= len(key[0])

    def _piece(self, text: str, file: str, line: int, next_col: int,
               where: tuple[str, ...]) -> Piece | None:
        """The piece `text` at 0-based `line`: the one-key mapping of `where` (a top-level
        key, or a section's and an entry's)."""
        key = (text, file, next_col)
        kept = self._pieces.get(key)
        if kept is None:
            if self._whole is None:
                self.parsed_pieces += 1
                piece = load_piece(text, file, next_col, line)
            else:
                piece = _cut(self._whole, where, text, line, next_col)
                self._cut.append(key)
            if piece is None:
                return None
            kept = self._pieces[key] = _Kept(*piece, line)
            self._chars += len(text)
            while len(self._pieces) > _PIECES or self._chars > _PIECE_CHARS:
                self._chars -= len(self._pieces.popitem(last=False)[0][0])
        else:
            self._pieces.move_to_end(key)
        if kept.line != line:
            kept.pos, kept.line = _moved(kept.pos, line - kept.line), line
        return kept.value, kept.pos, kept.count

    def _pieced(self, text: str, path: Path, name: str) -> Parsed | None:
        """`text` parsed piece by piece, or None when it must be parsed whole."""
        # a text near the size limit is measured (in bytes) by the loader; where a text ends
        # without a line break, the two parsers of `compose` put the end of what is open
        # there in different places, and the whole text may take the other one
        if len(text) * 4 > MAX_BYTES or not text.endswith("\n") or _across(text):
            return None
        # the patterns find lines by the break before them (fast): `lined[i]` is the break
        # before the line starting at `text[i]`
        lined = "\n" + text
        heads = list(_entries(0).finditer(lined))
        self._left = MAX_PIECES - len(heads)
        if not heads or self._left < 0 or _CONTENT.search(lined, 0, heads[0].start()):
            return None  # a top level that does not start with a key
        data: dict[str, Any] = {}
        line = text.count("\n", 0, heads[0].start())
        root = PosNode(Span(name, Pos(line + 1, 1)))
        count = 1
        for index, head in enumerate(heads):
            end = heads[index + 1].start() if index + 1 < len(heads) else len(text)
            found = self._section(text, lined, head, end, line, name) or \
                self._entry(text[head.start():end], head.group(1), line, name)
            if found is None or self._left < 0:
                return None
            key, value, pos, values, piece_end = found
            if key in data:
                return None  # the loader reports the duplicate
            data[key], root.children[key] = value, pos
            count += values
            # the top-level mapping ends where the text, and so its last piece, does
            root.value = Span(name, root.value.start, piece_end)
            line += text.count("\n", head.start(), end)
        if count > MAX_NODES:
            return None
        return Parsed(SourceFile(path, text, name), data, root)

    def _entry(self, text: str, key: str, line: int, name: str) -> _Found | None:
        piece = self._piece(text, name, line, 0, (key,))
        if piece is None or list(piece[0]) != [key]:
            return None
        return key, piece[0][key], piece[1].children[key], piece[2] - 1, piece[1].value.end

    def _section(self, text: str, lined: str, head: re.Match[str], end: int, line: int,
                 name: str) -> _Found | None:
        """A top-level key whose value is a block mapping, one piece per entry."""
        eol = text.find("\n", head.start(), end)
        first = _CONTENT.search(lined, eol + 1, end + 1) if eol >= 0 else None
        if first is None or not _BARE_KEY.match(text, head.start(), eol):
            return None
        indent = len(first.group(1))
        if indent == 0 or _shallower(indent).search(lined, eol + 1, end + 1):
            return None
        entries = list(_entries(indent).finditer(lined, first.start(), end + 1))
        self._left -= len(entries)
        if not entries or entries[0].start() != first.start() or self._left < 0:
            return None
        value: dict[str, Any] = {}
        key = head.group(1)
        at = line + text.count("\n", head.start(), first.start())
        pos = PosNode(Span(name, Pos(at + 1, indent + 1)),
                      Span(name, Pos(line + 1, 1), Pos(line + 1, 1 + len(key))))
        count = 1
        for index, entry in enumerate(entries):
            last = index + 1 == len(entries)
            stop = end if last else entries[index + 1].start()
            name_ = entry.group(1)
            piece = self._piece(text[entry.start():stop], name, at, 0 if last else indent,
                                (key, name_))
            if piece is None or list(piece[0]) != [name_] or name_ in value:
                return None
            value[name_], pos.children[name_] = piece[0][name_], piece[1].children[name_]
            count += piece[2] - 1
            at += text.count("\n", entry.start(), stop)
            if last:
                pos.value = Span(name, pos.value.start, piece[1].value.end)
        return key, value, pos, count, pos.value.end


def _cut(whole: Parsed, where: tuple[str, ...], text: str, line: int,
         next_col: int) -> Piece | None:
    """The piece `text` of `where`, taken from the parse of its whole file (`whole`, without
    problems): what parsing it alone gives, as the pieces of a file give its whole parse.
    The piece's own mapping ends where its text does, as `load_piece` ends it."""
    data: Any = whole.value
    pos: PosNode | None = whole.positions
    for step in where[:-1]:
        data, pos = data.get(step), pos.children.get(step) if pos else None
        if not isinstance(data, dict):
            return None
    node = pos.children.get(where[-1]) if pos else None
    if node is None or node.key is None or where[-1] not in data:
        return None
    end = Pos(line + text.count("\n") + 1, next_col + 1)  # every piece ends with a break
    value = data[where[-1]]
    return ({where[-1]: value}, PosNode(Span(node.key.file, node.key.start, end),
                                        children={where[-1]: node}), 1 + _count(value))


def _same_keys(pieced: dict[str, Any], whole: dict[str, Any]) -> bool:
    return list(pieced) == list(whole) and all(
        list(value) == list(whole[key]) for key, value in pieced.items()
        if isinstance(value, dict) and isinstance(whole[key], dict))


def _count(value: Any) -> int:
    """How many values the converter made of `value` (itself and everything in it)."""
    if isinstance(value, dict):
        return 1 + sum(_count(item) for item in value.values())
    if isinstance(value, list):
        return 1 + sum(_count(item) for item in value)
    return 1


def _fresh(parsed: Parsed) -> Parsed:
    """A kept parse, safe to hand out: imports are merged into the root file's sections in
    place, so the mapping and its sections are new; the values below are never changed
    (resolution copies them)."""
    value = parsed.value
    if isinstance(value, dict):
        value = {k: dict(v) if isinstance(v, dict) else v for k, v in value.items()}
    return replace(parsed, value=value, diagnostics=list(parsed.diagnostics))
