"""Every path a spec names stays inside its project, unless `outside_project` allows it.

The paths are found by type: spec model fields annotated with `PathField` (`FilePath`,
`DirectoryPath`, an SQLite store URL), so a new path field is checked as soon as it is
declared with one of those types. `imports` are checked while importing, before anything is
read; skill folders inside a skills directory by the skills check.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator
from enum import Enum
from functools import cache
from typing import Any

from pydantic import BaseModel

from agentspec.contract.backend_sources import backend_path
from agentspec.diagnostics import codes
from agentspec.language.common import PathField
from agentspec.parse import Path
from agentspec.validate.semantic.context import Context

__all__ = ["check_project", "path_fields", "path_marker", "spec_paths"]

_WHAT = {"instruction_file": "instruction file", "memory": "memory file",
         "skills": "skills directory", "paths": "skills directory", "root": "backend root",
         "cwd": "working directory", "store": "job store file", "imports": "imported file",
         "mounts": "sandbox mount"}
SQLITE = "sqlite:///"


def path_marker(annotation: Any) -> PathField | None:
    """The PathField anywhere in a field's type (`list[FilePath] | None`, a keyed union)."""
    if isinstance(annotation, PathField):
        return annotation
    for part in (*typing.get_args(annotation), *getattr(annotation, "__metadata__", ())):
        found = path_marker(part)
        if found is not None:
            return found
    return None


def _strings(value: Any, path: Path) -> Iterator[tuple[Path, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, (*path, index))


_SCALARS = (str, int, float, bool, type(None))


def _holds_paths(annotation: Any, seen: frozenset[type] = frozenset()) -> bool:
    """Whether a value of type `annotation` may hold a path below it: False only for types
    made of scalars and of models none of whose fields may (a model met again on its own
    path, a recursive one, is answered by its other fields)."""
    if path_marker(annotation) is not None:
        return True
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation not in seen and any(
            marker is not None or _holds_paths(info.annotation, seen | {annotation})
            for info, marker in ((i, _marker(i)) for i in annotation.model_fields.values()))
    if annotation in _SCALARS or typing.get_origin(annotation) is typing.Literal \
            or isinstance(annotation, type) and issubclass(annotation, Enum):
        return False
    args = typing.get_args(annotation)
    if not args:  # Any, object, a bare container: anything may be in it
        return True
    return any(_holds_paths(arg, seen) for arg in args if not isinstance(arg, PathField))


def _marker(info: Any) -> PathField | None:
    return path_marker(info.annotation) or next(
        (m for m in info.metadata if isinstance(m, PathField)), None)


@cache
def _markers(model: type[BaseModel]) -> tuple[tuple[str, PathField | None, bool], ...]:
    """The fields of a spec model that may hold a path: each with the PathField of its type
    and whether a path may be below it (types never change)."""
    found = ((name, _marker(info), _holds_paths(info.annotation))
             for name, info in model.model_fields.items())
    return tuple(field for field in found if field[1] is not None or field[2])


def path_fields(value: Any, path: Path = ()) -> Iterator[tuple[Path, str, str]]:
    """(where, text, kind) of every path in a validated spec (or a part of one)."""
    if isinstance(value, BaseModel):
        for name, marker, below in _markers(type(value)):
            field_value = getattr(value, name)
            if marker is not None:
                for where, text in _strings(field_value, (*path, name)):
                    yield where, text, marker.kind
            if below and not isinstance(field_value, _SCALARS):
                yield from path_fields(field_value, (*path, name))
    elif isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(item, _SCALARS):
                yield from path_fields(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if not isinstance(item, _SCALARS):
                yield from path_fields(item, (*path, index))


def spec_paths(ctx: Context) -> list[tuple[Path, str, str]]:
    """`path_fields` of the context's spec, walked once per context."""
    if ctx.paths is None:
        ctx.paths = list(path_fields(ctx.spec))
    return ctx.paths


def _file_path(text: str, kind: str) -> str | None:
    """The file system path a value names (None: not a path, or one read at run time)."""
    if kind == "sqlite":
        return text.removeprefix(SQLITE) if text.startswith(SQLITE) and "${" not in text \
            else None
    if backend_path(text) is not None:  # read through the agent's backend, not the host
        return None
    return None if "${" in text else text  # `${...}` in a path is reported where it is read


def _allowances(ctx: Context) -> None:
    for index, entry in enumerate(ctx.spec.outside_project or ()):
        if "${" in entry:
            ctx.report(codes.BAD_INTERPOLATION(
                f"`outside_project` entries are written literally, not `{entry}`",
                ctx.at("outside_project", index),
                hint="name the directory itself, so every reviewer sees what it allows"))


def check_project(ctx: Context) -> None:
    _allowances(ctx)
    for where, text, kind in spec_paths(ctx):
        if where[0] == "imports":  # checked while importing, before anything is read
            continue
        relative = _file_path(text, kind)
        if relative is None:
            continue
        span = ctx.at(*where)
        label = next((_WHAT[p] for p in reversed(where) if p in _WHAT), "path")
        ctx.outside(ctx.directory_of(span) / relative, span, label, text)
