"""The names one spec file defines and uses, with their places: what definition, references,
rename, completion and document symbols are made of. Read from the parsed YAML only (the
file's text and positions), never from the resolved spec, so it works on any file of an
import tree and on half-valid files."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from agentspec.parse import Parsed, PosNode, load_text
from agentspec.source import Pos, SourceFile, Span

__all__ = ["KINDS", "FileIndex", "Occurrence", "index_text"]

#: the kinds of names, each with the top-level section that defines them
KINDS = {"agent": "agents", "tool": "tools", "model": "models", "backend": "backends",
         "var": "vars", "state": "state"}

#: a key whose string value (or list of strings) names a `kind`
_REFERENCES = {"model": "model", "tools": "tool", "sub_agents": "agent", "agents": "agent",
               "extends": "agent", "agent": "agent", "root": "agent", "filesystem": "backend",
               "default": "backend", "routes": "backend", "backend": "backend"}
_VAR = re.compile(r"\$\{vars\.([A-Za-z_][A-Za-z0-9_]*)")
_PLACEHOLDER = re.compile(r"(?<!\{)\{((?:app:|user:)?[A-Za-z_][A-Za-z0-9_]*)\??\}(?!\})")
#: keys whose values are project files or folders (definition opens them)
_FILES = ("skills", "memory", "instruction_file")
_PYTHON = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


@dataclass(frozen=True)
class Occurrence:
    """One name at one place: a definition (the key that defines it) or a use."""

    #: a key of KINDS, "python" (a `module:attribute` reference) or "file" (a project file
    #: or folder: `skills`, `memory`, `instruction_file`)
    kind: str
    name: str
    span: Span
    definition: bool
    #: the key path of the value or key, in the file
    path: tuple[str | int, ...] = ()


@dataclass
class FileIndex:
    source: SourceFile
    occurrences: list[Occurrence]
    data: Any
    positions: PosNode | None

    def at(self, pos: Pos) -> Occurrence | None:
        for occ in self.occurrences:
            end = occ.span.end or occ.span.start
            if occ.span.start <= pos <= end:
                return occ
        return None

    def defined(self, kind: str) -> dict[str, Occurrence]:
        return {o.name: o for o in self.occurrences if o.kind == kind and o.definition}


def index_text(text: str, path: Any, display: str,
               parse: Callable[..., Parsed] = load_text) -> FileIndex:
    """The index of `text` (the file at `path`, named `display` in diagnostics), parsed
    by `parse` (the analysis' Reparser: only what changed since its last text)."""
    parsed = parse(text, path=path, display=display)
    found: list[Occurrence] = []
    if parsed.positions is not None and isinstance(parsed.value, dict):
        found = list(_walk(parsed.source, parsed.value, parsed.positions))
    return FileIndex(parsed.source, found, parsed.value, parsed.positions)


def _walk(source: SourceFile, data: dict[str, Any], pos: PosNode) -> Iterator[Occurrence]:
    for kind, section in KINDS.items():
        value, node = data.get(section), pos.child(section)
        if isinstance(value, dict) and node is not None:
            for name, child in node.children.items():
                if isinstance(name, str) and child.key is not None:
                    yield Occurrence(kind, name, child.key, True, (section, name))
    root = data.get("root")
    if isinstance(root, str) and (node := pos.child("root")) is not None:
        yield Occurrence("agent", root, node.value, False, ("root",))
    yield from _values(source, data, pos, ())


def _values(source: SourceFile, value: Any, node: PosNode,
            path: tuple[str | int, ...]) -> Iterator[Occurrence]:
    if isinstance(value, dict):
        for key, child in value.items():
            sub = node.child(key)
            if sub is None:
                continue
            here = (*path, key)
            if key in _REFERENCES and len(path) >= 2 and path[0] in ("agents", "backends",
                                                                      "defaults") \
                    or key == "model" and path[:1] in (("defaults",), ("summarization",)):
                yield from _named(_REFERENCES[str(key)], child, sub, here)
            if key in _FILES and path[:1] == ("agents",):
                yield from _files(child, sub, here)
            if key == "output_key" and isinstance(child, str):
                yield Occurrence("state", child, sub.value, True, here)
            if key == "name" and len(path) >= 3 and path[-2] == "sub_agents" \
                    and isinstance(child, str):
                yield Occurrence("agent", child, sub.value, True, here)
            yield from _values(source, child, sub, here)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            sub = node.child(index)
            if sub is not None:
                yield from _values(source, child, sub, (*path, index))
    elif isinstance(value, str):
        yield from _in_string(source, value, node.value, path)


def _named(kind: str, value: Any, node: PosNode,
           path: tuple[str | int, ...]) -> Iterator[Occurrence]:
    if kind == "backend" and path[-1] == "routes" and isinstance(value, dict):
        for key, target in value.items():
            sub = node.child(key)
            if isinstance(target, str) and sub is not None:
                yield Occurrence(kind, target, sub.value, False, (*path, key))
    elif isinstance(value, str):
        yield Occurrence(kind, value, node.value, False, path)
    elif isinstance(value, list) and kind in ("tool", "agent"):
        for index, item in enumerate(value):
            sub = node.child(index)
            if isinstance(item, str) and sub is not None:
                yield Occurrence(kind, item, sub.value, False, (*path, index))


def _files(value: Any, node: PosNode, path: tuple[str | int, ...]) -> Iterator[Occurrence]:
    items = value if isinstance(value, list) else [value]
    for index, item in enumerate(items):
        sub = node.child(index) if isinstance(value, list) else node
        if isinstance(item, str) and sub is not None:
            yield Occurrence("file", item, sub.value, False, (*path, index))


def _in_string(source: SourceFile, value: str, span: Span,
               path: tuple[str | int, ...]) -> Iterator[Occurrence]:
    """`${vars.X}`, `{state}` placeholders and `module:attribute` in a scalar, found in the
    file's text between the scalar's bounds (quoting and folding keep the offsets true)."""
    if span.end is None:
        return
    start, end = source.offset(span.start), source.offset(span.end)
    raw = source.text[start:end]
    if _PYTHON.match(value) and (path[-1:] == ("python",) or "callbacks" in path):
        yield Occurrence("python", value, span, False, path)
        return
    for match in _VAR.finditer(raw):
        yield Occurrence("var", match.group(1), _sub(source, start + match.start(1),
                                                      start + match.end(1)), False, path)
    if path[-1:] in (("instruction",), ("global_instruction",)):
        for match in _PLACEHOLDER.finditer(raw):
            name = match.group(1)
            yield Occurrence("state", name, _sub(source, start + match.start(),
                                                  start + match.end()), False, path)


def _sub(source: SourceFile, start: int, end: int) -> Span:
    return Span(source.name, source.pos_at(start), source.pos_at(end))
