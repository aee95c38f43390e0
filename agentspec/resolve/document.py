"""The unit resolution works on: plain data and its positions, side by side."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentspec.parse import Path, PosNode
from agentspec.source import Span

__all__ = ["SECTIONS", "Document"]

SECTIONS = ("models", "tools", "backends", "agents")


@dataclass
class Document:
    data: dict[str, Any]
    pos: PosNode

    def key_span(self, *path: str | int) -> Span:
        return self.pos.key_span(path)

    def value_span(self, *path: str | int) -> Span:
        return self.pos.value_span(path)

    def section(self, name: str) -> dict[str, Any]:
        value = self.data.get(name)
        return value if isinstance(value, dict) else {}

    def set(self, path: Path, value: Any, pos: PosNode) -> None:
        """Set `path` in data and positions, copying position nodes that may be shared."""
        *parents, last = path
        data: Any = self.data
        for key in parents:
            data = data[key]
        data[last] = value
        self.pos = _set_pos(self.pos, tuple(path), pos)


def _set_pos(node: PosNode, path: Path, new: PosNode) -> PosNode:
    head, *rest = path
    if not rest:
        return node.with_child(head, new)
    child = node.children.get(head) or PosNode(node.value)
    return node.with_child(head, _set_pos(child, tuple(rest), new))
