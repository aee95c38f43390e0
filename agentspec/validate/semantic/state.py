"""The session state a spec declares: initial values a session service can store, and keys
the session's creator supplies (`required: true`)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from agentspec.diagnostics import codes
from agentspec.language.document import StateInput, initial_state
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
    for key, entry in (ctx.spec.state or {}).items():
        if isinstance(entry, StateInput) and not entry.required:
            ctx.report(codes.STATE_INPUT_NOT_REQUIRED(
                f"`{key}` has `required: false` and no value", ctx.at("state", key, "required"),
                hint=f"give `{key}` an initial value instead, or write `required: true` if "
                "the session's creator must supply it"))
    for path, number in _not_json(initial_state(ctx.spec), ("state",)):
        ctx.report(codes.INVALID_VALUE(
            f"`{'.'.join(map(str, path))}` is `{number}`, which session state cannot hold",
            ctx.at(*path), hint="state is stored as JSON: use a finite number, or quote it"))
