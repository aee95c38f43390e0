"""Read a spec file into plain data plus a position tree, reporting problems as diagnostics."""

from __future__ import annotations

import math
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from agentspec.diagnostics import Diagnostic, Related, codes
from agentspec.parse.compose import MAX_FLOW_DEPTH, TooDeep, TooMany, compose
from agentspec.parse.positions import PosNode
from agentspec.parse.syntax import mark_pos, syntax_error
from agentspec.source import Pos, SourceFile, Span

__all__ = ["MAX_BYTES", "MAX_NODES", "Parsed", "load", "load_piece", "load_text", "read_text",
           "type_name"]

MAX_BYTES = 2 * 1024 * 1024
MAX_NODES = 100_000
#: digits of an integer literal: more is no count or size anyone means, and Python refuses
#: to convert a decimal text of more than 4300 digits
MAX_DIGITS = 100
_TAG = "tag:yaml.org,2002:"
_SCALAR_TAGS = {f"{_TAG}{t}" for t in ("str", "int", "float", "bool", "null", "timestamp")}
_MERGE_TAG = f"{_TAG}merge"
#: ruamel tags the plain scalars `=` and `<<` as `value` and `merge`; as values they are text
_TEXT_TAGS = {f"{_TAG}str", f"{_TAG}timestamp", f"{_TAG}value", _MERGE_TAG}
_PLAIN_TAGS = _SCALAR_TAGS | _TEXT_TAGS
_KEY_TAGS = (f"{_TAG}str", f"{_TAG}value")
_INT_TAG, _SEQ_TAG, _MAP_TAG = f"{_TAG}int", f"{_TAG}seq", f"{_TAG}map"


@dataclass
class Parsed:
    """One file's content: plain data, where each value was written, and the source."""

    source: SourceFile
    value: Any = None
    positions: PosNode | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    readable: bool = True  # False when the file itself could not be read

    @property
    def ok(self) -> bool:
        return self.positions is not None and not any(d.is_error for d in self.diagnostics)


class _Abort(Exception):
    """Stops conversion after a diagnostic that leaves nothing sensible to read."""


def _span(file: str, node: Node) -> Span:
    start, end = node.start_mark, node.end_mark  # mark_pos, inlined: a span per node
    return Span(file, Pos(start.line + 1, start.column + 1), Pos(end.line + 1, end.column + 1))


def _tag(node: Node) -> str:
    """`str(node.tag)`, without the property in between (once per node)."""
    return "None" if node.ctag is None else str(node.ctag)


_NULLS = ("", "~", "null", "Null", "NULL")
_KINDS = {"int": "an integer", "float": "a number", "bool": "true or false", "null": "null"}


def _scalar(node: ScalarNode) -> Any:
    """The value of a scalar; ValueError when an explicit tag (`!!int offline`) names a type
    the text is not."""
    tag, text = str(node.tag), node.value
    if tag == f"{_TAG}null":
        if text not in _NULLS:  # `!!null text` is explicit: an implicit null is one of these
            raise ValueError(text)
        return None
    if tag == f"{_TAG}bool":
        if text.lower() not in ("true", "false"):
            raise ValueError(text)
        return text.lower() == "true"
    if tag == f"{_TAG}int":
        return _int(text)
    if tag == f"{_TAG}float":
        return _float(text)
    return text


def _digits(text: str) -> int:
    """The digits of an integer literal (without sign, base prefix and underscores)."""
    digits = text.replace("_", "").lstrip("+-")
    return len(digits) - 2 if digits[:2].lower() in ("0x", "0o", "0b") else len(digits)


def _int(text: str) -> int:
    digits = text.replace("_", "")
    sign = -1 if digits.startswith("-") else 1
    digits = digits.lstrip("+-")
    for prefix, base in (("0x", 16), ("0o", 8), ("0b", 2)):
        if digits.lower().startswith(prefix):
            return sign * int(digits[2:], base)
    return sign * int(digits, 10)


def _float(text: str) -> float:
    lowered = text.replace("_", "").lower()
    if lowered.endswith(".inf"):
        return -math.inf if lowered.startswith("-") else math.inf
    if lowered == ".nan":
        return math.nan
    return float(lowered)


class _Converter:
    """Turns a composed node graph into plain data, expanding aliases within a budget."""

    def __init__(self, file: str, restore: dict[int, str]) -> None:
        self.file = file
        self.restore = restore
        self.budget = MAX_NODES
        self.active: set[int] = set()
        self.seen: set[int] = set()  # a node met twice is reached through an alias
        self.aliased = False
        self.diagnostics: list[Diagnostic] = []

    def span(self, node: Node) -> Span:
        return _span(self.file, node)

    def convert(self, node: Node) -> tuple[Any, PosNode]:
        self.budget -= 1
        self.aliased |= id(node) in self.seen
        self.seen.add(id(node))
        if self.budget < 0:
            if self.aliased:
                self.diagnostics.append(codes.ALIAS_EXPANSION(
                    f"expanding anchors and aliases produces more than {MAX_NODES:,} values",
                    self.span(node), hint="remove the nested aliases"))
            else:
                self.diagnostics.append(codes.FILE_TOO_LARGE(
                    f"the file holds more than {MAX_NODES:,} values", self.span(node),
                    hint="split the spec with `imports`"))
            raise _Abort
        if id(node) in self.active:
            self.diagnostics.append(codes.ALIAS_EXPANSION(
                "an alias refers to a node that contains it", self.span(node),
                hint="YAML aliases must not be recursive"))
            raise _Abort
        self.active.add(id(node))
        try:
            return self._convert(node)
        finally:
            self.active.discard(id(node))

    def _convert(self, node: Node) -> tuple[Any, PosNode]:
        tag = _tag(node)
        span = self.span(node)
        if isinstance(node, ScalarNode):
            if tag not in _PLAIN_TAGS:
                return self._custom_tag(node, span)
            if tag == _INT_TAG and _digits(node.value) > MAX_DIGITS:
                self.diagnostics.append(codes.NUMBER_TOO_LARGE(
                    f"the number has {_digits(node.value):,} digits; at most {MAX_DIGITS} are "
                    "allowed", span, hint="quote it if it is text"))
                return None, PosNode(span)
            try:
                value = _scalar(node)
            except ValueError:
                kind = tag.removeprefix(_TAG)
                shown = node.value if len(node.value) <= 40 else node.value[:39] + "…"
                self.diagnostics.append(codes.TAG_MISMATCH(
                    f"`{shown}` is not {_KINDS[kind]}, as the tag `!!{kind}` requires", span,
                    hint="remove the tag, or write a value of that type"))
                return None, PosNode(span)
            if self.restore and isinstance(value, str):
                value = value.translate(self.restore)
            return value, PosNode(span)
        if isinstance(node, SequenceNode):
            if tag != _SEQ_TAG:
                return self._custom_tag(node, span)
            items, positions = [], PosNode(span)
            for index, item in enumerate(node.value):
                value, pos = self.convert(item)
                items.append(value)
                positions.children[index] = pos
            return items, positions
        if isinstance(node, MappingNode) and tag == _MAP_TAG:
            return self._mapping(node, span)
        return self._custom_tag(node, span)

    def _custom_tag(self, node: Node, span: Span) -> tuple[Any, PosNode]:
        self.diagnostics.append(codes.CUSTOM_TAG(
            f"the YAML tag `{node.tag}` is not allowed in a spec", span,
            hint="use plain values; combine files with `imports`"))
        return None, PosNode(span)

    def _mapping(self, node: MappingNode, span: Span) -> tuple[dict[str, Any], PosNode]:
        data: dict[str, Any] = {}
        positions = PosNode(span)
        merged: list[tuple[dict[str, Any], PosNode]] = []
        for key_node, value_node in node.value:
            if _tag(key_node) == _MERGE_TAG:
                merged.extend(self._merge_sources(value_node))
                continue
            key = self._key(key_node)
            if key is None:
                continue
            key_span = self.span(key_node)
            if key in data:
                first = positions.children[key].key
                self.diagnostics.append(codes.DUPLICATE_KEY(
                    f"the key `{key}` appears twice in this mapping", key_span,
                    hint="remove or rename one of them",
                    related=[Related(first, "first defined here")] if first else []))
                continue
            value, pos = self.convert(value_node)
            pos.key = key_span
            data[key] = value
            positions.children[key] = pos
        for source, source_pos in merged:  # `<<: *anchor` never overrides explicit keys
            for key, value in source.items():
                if key not in data:
                    data[key] = value
                    positions.children[key] = source_pos.children[key]
        return data, positions

    def _merge_sources(self, node: Node) -> list[tuple[dict[str, Any], PosNode]]:
        nodes = node.value if isinstance(node, SequenceNode) else [node]
        sources = []
        for item in nodes:
            value, pos = self.convert(item)
            if isinstance(value, dict):
                sources.append((value, pos))
            else:
                self.diagnostics.append(codes.WRONG_TYPE(
                    "a `<<` merge key takes a mapping or a list of mappings",
                    self.span(item)))
        return sources

    def _key(self, node: Node) -> str | None:
        if isinstance(node, ScalarNode) and _tag(node) in _KEY_TAGS:
            return str(node.value).translate(self.restore)
        if isinstance(node, ScalarNode):
            self.diagnostics.append(codes.INVALID_KEY(
                f"the key `{node.value}` is not a string", self.span(node),
                hint=f'quote it: "{node.value}"'))
        else:
            kind = "list" if isinstance(node, SequenceNode) else "mapping"
            self.diagnostics.append(codes.INVALID_KEY(
                f"a {kind} is used as a key", self.span(node),
                hint="keys are names: write one word, quoted if it holds special characters"))
        return None


def _read_bytes(path: Path, display: str) -> tuple[bytes | None, Diagnostic | None]:
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO would block, /dev/zero never ends
            kind = "a directory" if path.is_dir() else "not a regular file"
            return None, codes.FILE_UNREADABLE(f"cannot read `{display}`: it is {kind}", None)
        with path.open("rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return None, codes.FILE_NOT_FOUND(f"no such file `{display}`", None)
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        return None, codes.FILE_UNREADABLE(f"cannot read `{display}`: {reason}", None)
    if len(raw) > MAX_BYTES:
        return None, codes.FILE_TOO_LARGE(f"the file is larger than {MAX_BYTES:,} bytes",
                                          Span.at(display, 1, 1))
    return raw, None


def read_text(path: Path, display: str) -> tuple[str | None, Diagnostic | None]:
    """The UTF-8 text of a regular file of at most MAX_BYTES, or the problem reading it."""
    raw, problem = _read_bytes(path, display)
    if raw is None:
        return None, problem
    raw = raw.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte order mark is not content
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        line = raw.count(b"\n", 0, exc.start) + 1
        col = len(raw[line_start:exc.start].decode("utf-8", errors="replace")) + 1
        return None, codes.NOT_UTF8(
            f"byte 0x{raw[exc.start]:02x} is not valid UTF-8", Span.at(display, line, col),
            hint="save the file as UTF-8")


def load(path: Path, *, display: str | None = None) -> Parsed:
    """Read and parse one spec file; never raises for bad input."""
    name = display or str(path)
    text, problem = read_text(path, name)
    if text is None:
        parsed = Parsed(SourceFile(path, "", name), readable=problem is not None and
                        problem.code not in (codes.FILE_NOT_FOUND.code, codes.FILE_UNREADABLE.code))
        parsed.diagnostics.append(problem)  # type: ignore[arg-type]
        return parsed
    return load_text(text, path=path, display=name)


#: NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR: ruamel counts them as line breaks, editors and
#: agentspec's positions do not. They are swapped for unused private-use characters while
#: parsing, and swapped back in the values.
_SOFT_BREAKS = ("\x85", "\u2028", "\u2029")


def _hide_soft_breaks(text: str) -> tuple[str, dict[int, str]]:
    present = [c for c in _SOFT_BREAKS if c in text]
    if not present:
        return text, {}
    spare = (chr(c) for c in range(0xE000, 0xF900) if chr(c) not in text)
    stand_ins = {ch: next(spare) for ch in present}
    hidden = text.translate({ord(k): v for k, v in stand_ins.items()})
    return hidden, {ord(v): k for k, v in stand_ins.items()}


def load_text(text: str, *, path: Path, display: str | None = None) -> Parsed:
    """Parse spec text that is already decoded."""
    source = SourceFile(path, text, display or str(path))
    parsed = Parsed(source)
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        parsed.diagnostics.append(codes.FILE_TOO_LARGE(
            f"the text is larger than {MAX_BYTES:,} bytes", Span.at(source.name, 1, 1)))
        return parsed
    hidden, restore = _hide_soft_breaks(text)
    try:
        documents = [d for d in compose(hidden, MAX_NODES) if not _is_empty_document(d)]
    except YAMLError as exc:
        parsed.diagnostics.extend(syntax_error(exc, source))
        return parsed
    except RecursionError:
        parsed.diagnostics.append(codes.YAML_SYNTAX(
            "the YAML nests too deeply", Span.at(source.name, 1, 1)))
        return parsed
    except TooMany as many:
        parsed.diagnostics.append(codes.FILE_TOO_LARGE(
            f"the file holds more than {MAX_NODES:,} values",
            Span(source.name, mark_pos(many.mark)),
            hint="split the spec with `imports`"))
        return parsed
    except TooDeep as deep:
        parsed.diagnostics.append(codes.YAML_SYNTAX(
            f"`[` and `{{` nest more than {MAX_FLOW_DEPTH} levels deep here",
            Span(source.name, mark_pos(deep.mark)),
            hint="write the value with fewer nested brackets"))
        return parsed
    if not documents:
        parsed.diagnostics.append(codes.EMPTY_FILE(
            "the file holds no YAML document", Span.at(source.name, 1, 1),
            hint="start with `agentspec: 1`"))
        return parsed
    if len(documents) > 1:
        parsed.diagnostics.append(codes.MULTIPLE_DOCUMENTS(
            "the file holds more than one YAML document", _span(source.name, documents[1]),
            hint="keep one document per file; combine files with `imports`"))
    root = documents[0]
    converter = _Converter(source.name, restore)
    try:
        value, positions = converter.convert(root)
    except _Abort:
        parsed.diagnostics.extend(converter.diagnostics)
        return parsed
    except RecursionError:
        parsed.diagnostics.append(codes.YAML_SYNTAX(
            "the YAML nests too deeply", _span(source.name, root)))
        return parsed
    parsed.diagnostics.extend(converter.diagnostics)
    if not isinstance(value, dict):
        parsed.diagnostics.append(codes.NOT_A_MAPPING(
            f"the top level is a {type_name(value)}, not a mapping of keys", positions.value,
            hint="start with `agentspec: 1`"))
        return parsed
    parsed.value, parsed.positions = value, positions
    return parsed


class _PieceConverter(_Converter):
    """A converter for a piece of a file (`load_piece`): a block mapping or list ending
    where the piece does ends, in the whole file, at the next piece's first token,
    `next_col` spaces into the line (a scalar ends at the start of the line either way)."""

    def __init__(self, file: str, lines: int, next_col: int, line: int) -> None:
        super().__init__(file, {})
        self.lines, self.next_col, self.line = lines, next_col, line + 1

    def span(self, node: Node) -> Span:
        start, end = node.start_mark, node.end_mark
        col = self.next_col if end.line == self.lines and end.column == 0 and not isinstance(
            node, ScalarNode) else end.column
        return Span(self.file, Pos(start.line + self.line, start.column + 1),
                    Pos(end.line + self.line, col + 1))


def load_piece(text: str, file: str, next_col: int,
               line: int) -> tuple[dict[str, Any], PosNode, int] | None:
    """A run of whole lines of a spec (`incremental`) that starts at 0-based `line` of its
    file, parsed alone: its mapping, positions and how many values it holds; None on any
    problem, or when it is not one mapping (the whole file is then parsed, and its
    problems reported)."""
    try:
        documents = [d for d in compose(text, MAX_NODES) if not _is_empty_document(d)]
    except (YAMLError, RecursionError, TooMany, TooDeep):
        return None
    if len(documents) != 1:
        return None
    converter = _PieceConverter(file, text.count("\n"), next_col, line)
    try:
        value, positions = converter.convert(documents[0])
    except (_Abort, RecursionError):
        return None
    if converter.diagnostics or not isinstance(value, dict):
        return None
    return value, positions, MAX_NODES - converter.budget


def _is_empty_document(node: Node | None) -> bool:
    """`---` with nothing after it: no content, so neither a document nor a second one."""
    return node is None or (isinstance(node, ScalarNode) and str(node.tag) == f"{_TAG}null"
                            and node.value == "" and not node.style)


def type_name(value: object) -> str:
    """How messages name the type of a YAML value."""
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean",
            type(None): "null value"}.get(type(value), type(value).__name__)
