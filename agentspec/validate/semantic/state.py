"""The initial session state: values a session service can store."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from agentspec.diagnostics import codes
from agentspec.parse import Path
from agentspec.validate.semantic.context import Context

__all__ = ["check_state"]


def _not_json(value: Any, path: Path) -> Iterator[tuple[Path, float]]:
    """Where `value` holds a number JSON has no spelling for (NaN, infinities)."""
    if isinstance(value, float) and not math.isfinite(value):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _not_json(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _not_json(item, (*path, index))


def check_state(ctx: Context) -> None:
    for path, number in _not_json(ctx.spec.state or {}, ("state",)):
        ctx.report(codes.INVALID_VALUE(
            f"`{'.'.join(map(str, path))}` is `{number}`, which session state cannot hold",
            ctx.at(*path), hint="state is stored as JSON: use a finite number, or quote it"))
