"""Map pydantic error locations to data paths and to the model that was being validated."""

from __future__ import annotations

import types
import typing
from typing import Any, Union

from pydantic import BaseModel

from agentspec.parse import Path
from agentspec.spec import Spec
from agentspec.spec.common import TAGS

__all__ = ["data_path", "is_key_error", "model_at"]


def _is_tag(element: object) -> bool:
    return isinstance(element, str) and element.startswith("<") and element.endswith(">")


def is_key_error(loc: tuple[int | str, ...]) -> bool:
    """pydantic reports a bad dict key with a trailing `[key]` element."""
    return bool(loc) and loc[-1] == "[key]"


def data_path(loc: tuple[int | str, ...]) -> Path:
    return tuple(e for e in loc if not _is_tag(e) and e != "[key]")


def _unwrap(tp: Any) -> Any:
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp = typing.get_args(tp)[0]
        elif origin in (Union, types.UnionType):
            members = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(members) != 1:
                return tp
            tp = members[0]
        else:
            return tp


def _step(tp: Any, element: int | str) -> Any:
    if _is_tag(element):
        return TAGS.get(str(element))
    tp = _unwrap(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        field = tp.model_fields.get(str(element))
        return field.annotation if field else None
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is list and isinstance(element, int):
        return args[0]
    if origin is dict and isinstance(element, str):
        return args[1]
    return None


def model_at(loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The model class that validated the mapping at `loc` (None when unknown)."""
    tp: Any = Spec
    for element in loc:
        tp = _step(tp, element)
        if tp is None:
            return None
    tp = _unwrap(tp)
    return tp if isinstance(tp, type) and issubclass(tp, BaseModel) else None
