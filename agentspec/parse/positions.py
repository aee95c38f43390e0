"""A tree of source positions beside plain data, keyed by the same keys and indexes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from agentspec.source import Span

__all__ = ["Key", "Path", "PosNode"]

Key = str | int
Path = tuple[Key, ...]


@dataclass(slots=True)
class PosNode:
    """Where one value (and the key that holds it, for mapping entries) was written.

    Nodes may be shared between places in a resolved tree (an inherited field points at the
    definition it came from), so resolution copies a node before changing its children.
    """

    value: Span
    key: Span | None = None
    children: dict[Key, PosNode] = field(default_factory=dict)

    def child(self, key: Key) -> PosNode | None:
        return self.children.get(key)

    def find(self, path: Path) -> PosNode | None:
        node: PosNode | None = self
        for key in path:
            if node is None:
                return None
            node = node.children.get(key)
        return node

    def nearest(self, path: Path) -> PosNode:
        """The node at `path`, or its closest ancestor that has a position."""
        node = self
        for key in path:
            nxt = node.children.get(key)
            if nxt is None:
                break
            node = nxt
        return node

    def value_span(self, path: Path) -> Span:
        return self.nearest(path).value

    def key_span(self, path: Path) -> Span:
        """The span of the key holding `path` (falls back to the value, then an ancestor)."""
        node = self.find(path)
        if node is None:
            return self.nearest(path).value
        return node.key or node.value

    def copy(self) -> PosNode:
        return PosNode(self.value, self.key, dict(self.children))

    def with_child(self, key: Key, node: PosNode) -> PosNode:
        clone = self.copy()
        clone.children[key] = node
        return clone

    def walk(self, prefix: Path = ()) -> Iterator[tuple[Path, PosNode]]:
        yield prefix, self
        for key, node in self.children.items():
            yield from node.walk((*prefix, key))
