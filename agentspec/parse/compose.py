"""Composing YAML text into nodes with bounded work, whatever the text: libyaml's parser
when the text fits it, else ruamel's pure-Python parser, both refusing flow collections
nested past MAX_FLOW_DEPTH."""

from __future__ import annotations

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
from ruamel.yaml.nodes import Node
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


_NESTING = {SequenceStartEvent: 1, MappingStartEvent: 1, SequenceEndEvent: -1,
            MappingEndEvent: -1}


def _fits_c(events: Any) -> bool:
    """Whether the parser's events parse and nest at most _C_DEPTH deep, flow collections
    at most MAX_FLOW_DEPTH; it stops at the first level past either (libyaml's parser does
    not recurse, but its work per token grows with the flow depth)."""
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
    except Exception:  # noqa: BLE001 - the reference parser reports what is wrong
        return False
    return True


def compose(text: str, limit: int) -> list[Node]:
    """Compose the documents of `text` with ruamel.

    The libyaml-based C parser (ruamel.yaml.clib) is about ten times faster than the pure-Python
    one, but it scans YAML 1.1 and refuses some valid YAML 1.2, notably `{python: mod:attr}`
    in flow mappings. So it is only a fast path: whenever it fails, the pure-Python YAML 1.2
    parser decides, and its errors are the ones reported. Both use ruamel's resolver, so
    scalars resolve to the same types either way. The pure parser stops after `limit`
    nodes (TooMany), and both refuse flow nesting past MAX_FLOW_DEPTH (TooDeep).
    """
    fast = YAML(typ="safe")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. ReusedAnchorWarning: reusing anchors is legal
        if fast.Parser.__name__ == "CParser" and _fits_c(fast.parse(text)):
            try:
                return list(fast.compose_all(text))
            except Exception:  # noqa: BLE001 - any failure is settled by the reference parser
                pass
        pure = YAML(typ="safe", pure=True)
        pure.Scanner, pure.Composer = _BoundedScanner, _BoundedComposer
        pure.composer.limit = limit
        return list(pure.compose_all(text))
