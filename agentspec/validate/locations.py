"""Map pydantic error locations to data paths, walking the language models beside them.

A location mixes data keys with pydantic's own elements: union tags (`<agent_kind.llm>`,
or a member's name such as `str` in an untagged union) and the `[key]` that marks a bad
mapping key. Any of those can also be a key a user wrote, so an element is read by where it
stands in the models, never by its shape: after a union it is a tag, in a mapping a key, in a
model a field name.
"""

from __future__ import annotations

import functools
import types
import typing
from dataclasses import dataclass
from typing import Any, Union

from pydantic import BaseModel

from agentspec.language import Spec
from agentspec.language.common import TAGS, ByType
from agentspec.parse import Path

__all__ = ["Location", "locate"]

_KEY_MARK = "[key]"


@dataclass(frozen=True)
class Location:
    """Where an error is in the data; `key_error` when the mapping key at `path` is wrong;
    `model` validated the mapping that holds `path[-1]` (None when not a model)."""

    path: Path
    key_error: bool = False
    model: type[BaseModel] | None = None


def _unwrap(tp: Any, tags: dict[str, Any] | None = None) -> Any:
    """`tp` without `Annotated` and without `None` as a union member; the tags of the `ByType`
    unions it is annotated with are added to `tags`."""
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            source, *notes = typing.get_args(tp)
            for note in notes:
                if tags is not None and isinstance(note, ByType):
                    tags.update(note.tags(source))
            tp = source
        elif origin in (Union, types.UnionType):
            members = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(members) != 1:
                return tp
            tp = members[0]
        else:
            return tp


@functools.cache
def _fields(model: type[BaseModel]) -> dict[str, Any]:
    """The types of a model's fields, forward references resolved (the models defer their
    build, so `model_fields` may still hold them unresolved)."""
    hints = typing.get_type_hints(model, include_extras=True)
    return {name: hints[name] for name in model.model_fields}


def _member(union: Any, tag: object) -> Any:
    """The member of `union` that pydantic's tag names (None when unknown)."""
    if isinstance(tag, str) and tag in TAGS:
        return TAGS[tag]
    for member in typing.get_args(union):
        if getattr(_unwrap(member), "__name__", None) == tag:
            return member
    return None


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (Union, types.UnionType)


def locate(loc: tuple[int | str, ...], root: Any = Spec) -> Location:
    """Read a pydantic error location against the models of the language (from `root`: the
    spec, or another file's type such as a scenario file's)."""
    tp: Any = root
    path: list[int | str] = []
    model: type[BaseModel] | None = None
    index = 0
    while index < len(loc):
        tags: dict[str, Any] = {}
        element, base = loc[index], _unwrap(tp, tags)
        index += 1
        if _is_union(base):  # a tag: which member was being validated
            tp = tags[element] if element in tags else _member(base, element)
            continue
        path.append(element)
        model = base if isinstance(base, type) and issubclass(base, BaseModel) else None
        origin, args = typing.get_origin(base), typing.get_args(base)
        if model is not None:
            tp = _fields(model).get(str(element))
        elif origin is dict:
            if index == len(loc) - 1 and loc[index] == _KEY_MARK:
                return Location(tuple(path), key_error=True)
            tp = args[1]
        elif origin is list:
            tp = args[0]
        else:
            tp = None
    return Location(tuple(path), model=model)
