"""Composing YAML text into nodes with bounded work, whatever the text: libyaml's parser
when the text fits it, else ruamel's pure-Python parser, both refusing flow collections
nested past MAX_FLOW_DEPTH."""

from __future__ import annotations

import re
import warnings
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.composer import Composer
from ruamel.yaml.events import (
    MappingEndEvent,
    MappingStartEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scanner import Scanner

__all__ = ["MAX_FLOW_DEPTH", "TooDeep", "TooMany", "compose"]

#: nesting the C composer is given (it recurses in C: 30,000 levels crashed the process);
#: deeper text goes to the pure-Python parser, whose RecursionError is reported
_C_DEPTH = 200
#: the deepest flow nesting (`[`, `{`) read at all: both scanners look at every open flow
#: level at every token, so without a bound parse work grew with tokens x flow depth (a
#: 200 KB line of `[` took 99 s); the pure-Python parser also slows down sharply past
#: about 150 levels
MAX_FLOW_DEPTH = 100


class TooDeep(Exception):
    """The text opens a flow collection deeper than MAX_FLOW_DEPTH (`mark`: where)."""

    def __init__(self, mark: Any) -> None:
        super().__init__("flow nesting too deep")
        self.mark = mark


class TooMany(Exception):
    """The text holds more than MAX_NODES nodes (`mark`: where the next one starts)."""

    def __init__(self, mark: Any) -> None:
        super().__init__("too many nodes")
        self.mark = mark


class _BoundedComposer(Composer):
    """ruamel's composer, stopping after `limit` nodes: the pure-Python parser takes tens
    of microseconds a node, and the converter refuses more values anyway."""

    composed = 0
    limit = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self.composed += 1
        if self.composed > self.limit:
            raise TooMany(self.parser.peek_event().start_mark)
        return super().compose_node(parent, index)


class _BoundedScanner(Scanner):
    """ruamel's pure-Python scanner, refusing flow nesting past MAX_FLOW_DEPTH."""

    def fetch_flow_collection_start(self, TokenClass: Any, to_push: str) -> None:  # noqa: N803
        if len(self.flow_context) >= MAX_FLOW_DEPTH:
            raise TooDeep(self.reader.get_mark())
        super().fetch_flow_collection_start(TokenClass, to_push)


class _ResolverOnce(VersionedResolver):
    """ruamel's resolver, choosing its YAML version's rules once per parse: libyaml's
    composer tells it no `%YAML` directive, so the version cannot change while it composes,
    and ruamel looked it up through two failing attribute lookups for every scalar (a fifth
    of the parse of a large spec)."""

    @property
    def versioned_resolver(self) -> Any:
        rules = self.__dict__.get("_rules")
        if rules is None:
            rules = self.__dict__["_rules"] = super().versioned_resolver
        return rules


_NESTING = {SequenceStartEvent: 1, MappingStartEvent: 1, SequenceEndEvent: -1,
            MappingEndEvent: -1}


def _fits_c(events: Any) -> bool | Exception:
    """Whether the parser's events parse and nest at most _C_DEPTH deep, flow collections
    at most MAX_FLOW_DEPTH; it stops at the first level past either (libyaml's parser does
    not recurse, but its work per token grows with the flow depth). The parser's error when
    it fails on the text."""
    depth = flow = 0
    try:
        for event in events:
            step = _NESTING.get(type(event), 0)
            if step:
                depth += step
                # nothing nests in block style inside a flow collection
                if flow or (step > 0 and event.flow_style):
                    flow += step
                if depth > _C_DEPTH or flow > MAX_FLOW_DEPTH:
                    return False
    except Exception as error:  # noqa: BLE001 - the reference parser reports what is wrong
        return error
    return True


#: a colon inside a word (`mod:attr`, `https://`, `12:30`): YAML 1.2 reads it as part of a
#: plain scalar anywhere, libyaml (YAML 1.1) not in a flow collection
_INNER_COLON = re.compile(r"(?<=\S):(?=[^\s,\[\]{}])")
#: how many colons the regex misses the fast path still stands in for, one C parse each
MAX_STAND_INS = 8
#: line breaks to YAML 1.1 (libyaml counts lines by them) but not to YAML 1.2: the marks of
#: a text holding one would differ, so the pure parser takes it
_YAML11_BREAKS = "\x85\u2028\u2029"
_BREAK = re.compile("\r\n|[\r\n]")  # libyaml's line breaks in the texts it is given


def _offset(text: str, line: int, column: int) -> int | None:
    """The index in `text` of libyaml's (line, column), both counted in characters."""
    start = 0
    if line:
        for number, found in enumerate(_BREAK.finditer(text), start=1):
            if number == line:
                start = found.end()
                break
        else:
            return None
    index = start + column
    return index if index < len(text) else None


def _flow_colon(error: Exception, text: str) -> int | None:
    """Where libyaml (YAML 1.1) refused a colon inside a plain scalar of a flow collection,
    which YAML 1.2 allows (`{python: mod:attr}`), or None for any other error."""
    mark = getattr(error, "problem_mark", None)
    if getattr(error, "context", None) != "while scanning a plain scalar" or \
            getattr(error, "problem", None) != "found unexpected ':'" or mark is None:
        return None
    index = _offset(text, mark.line, mark.column)
    return index if index is not None and text[index] == ":" else None


def _stand_in(text: str) -> str | None:
    """A character that is not in `text` and that libyaml reads as part of a plain scalar."""
    return next((c for c in "\ue000\ue001\ue002\ue003" if c not in text), None)


def _restore(nodes: list[Node], stand_in: str, resolver: Any) -> bool:
    """Put the colons back in the scalars that hold a stand-in, typing the plain ones again
    as the composer would have (their type depends on their text); False when a stand-in
    went elsewhere (a tag)."""
    todo: list[Node] = list(nodes)
    seen: set[int] = set()
    while todo:
        node = todo.pop()
        if id(node) in seen:  # aliases share nodes
            continue
        seen.add(id(node))
        if stand_in in str(node.tag):
            return False
        if isinstance(node, ScalarNode):
            if stand_in in node.value:
                node.value = node.value.replace(stand_in, ":")
                if not node.style:
                    node.tag = resolver.resolve(ScalarNode, node.value, (True, False))
        elif isinstance(node, SequenceNode):
            todo.extend(node.value)
        elif isinstance(node, MappingNode):
            todo.extend(item for pair in node.value for item in pair)
    return True


def _compose_c(text: str) -> list[Node] | None:
    """The documents of `text` composed by libyaml, or None when it cannot be trusted with
    them. libyaml refuses `mod:attr` in a flow collection (YAML 1.1), which every spec with
    `{python: ...}` has: the colons inside words are replaced by a stand-in character of the
    same length, so marks do not move, and put back after composing."""
    fast = YAML(typ="safe")
    fast.Resolver = _ResolverOnce
    if fast.Parser.__name__ != "CParser" or any(c in text for c in _YAML11_BREAKS):
        return None
    stand_in = _stand_in(text)
    patched = text if stand_in is None else _INNER_COLON.sub(stand_in, text)
    for _ in range(MAX_STAND_INS + 1):
        fits = _fits_c(fast.parse(patched))
        if fits is True:
            break
        colon = None if fits is False else _flow_colon(fits, patched)
        if colon is None or stand_in is None:
            return None
        patched = patched[:colon] + stand_in + patched[colon + 1:]
    else:
        return None
    try:
        nodes = list(fast.compose_all(patched))
    except Exception:  # noqa: BLE001 - any failure is settled by the reference parser
        return None
    if stand_in is not None and patched != text and not _restore(nodes, stand_in,
                                                                  fast.resolver):
        return None
    return nodes


def compose(text: str, limit: int) -> list[Node]:
    """Compose the documents of `text` with ruamel.

    The libyaml-based C parser (ruamel.yaml.clib) is about ten times faster than the pure-Python
    one, but it scans YAML 1.1 and refuses some valid YAML 1.2, notably `{python: mod:attr}`
    in flow mappings (`_compose_c` stands in for those colons). So it is only a fast path:
    whenever it fails, the pure-Python YAML 1.2 parser decides, and its errors are the ones
    reported. Both use ruamel's resolver, so scalars resolve to the same types either way. The
    pure parser stops after `limit` nodes (TooMany), and both refuse flow nesting past
    MAX_FLOW_DEPTH (TooDeep).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. ReusedAnchorWarning: reusing anchors is legal
        nodes = _compose_c(text)
        if nodes is not None:
            return nodes
        pure = YAML(typ="safe", pure=True)
        pure.Scanner, pure.Composer = _BoundedScanner, _BoundedComposer
        pure.composer.limit = limit
        return list(pure.compose_all(text))
