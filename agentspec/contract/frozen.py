"""`FrozenMap`: the mapping type of frozen contract values (the agent tree, backend
definitions). A dict would make them unhashable and mutable; a tuple of pairs hides what
it is from the type checker and from readers."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeVar

__all__ = ["FrozenMap", "UserData"]

K = TypeVar("K")
V = TypeVar("V")

#: a value that is user data by nature (YAML data of the spec: tool arguments, JSON
#: Schemas, state, model call arguments): it stays untyped, and `tests/test_contract.py`
#: lists every field that holds one
UserData = Any


class FrozenMap(Mapping[K, V]):
    """An immutable mapping that keeps its order; equal to any mapping with the same
    items, in any order (as a dict is)."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> None:
        self._items: dict[K, V] = dict(items)

    def __getitem__(self, key: K) -> V:
        return self._items[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:  # equal maps (in any order) hash alike
        return hash(frozenset(self._items.items()))

    def __repr__(self) -> str:
        return f"FrozenMap({self._items!r})"
