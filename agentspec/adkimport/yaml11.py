"""What ADK reads: Agent Config files go through PyYAML (YAML 1.1), agentspec's reader is
YAML 1.2; where the two differ, ADK's value is the one converted, with a warning."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agentspec.parse import Key

__all__ = ["adk_reading", "adopt", "describe", "differences"]


def adk_reading(text: str) -> Any:
    """The file as ADK's `yaml.safe_load` reads it (None when PyYAML refuses it)."""
    import yaml  # type: ignore[import-untyped]  # ADK's own reader (PyYAML)

    try:
        return yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError, ValueError):
        return None


def differences(ours: Any, theirs: Any,
                path: tuple[Key, ...] = ()) -> Iterator[tuple[tuple[Key, ...], Any]]:
    """Paths where ADK reads another scalar than agentspec, with ADK's value. Structures that
    differ (a key read as a boolean, say) are reported at the enclosing value."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        if set(ours) != set(theirs):
            yield path, theirs
            return
        for key, value in ours.items():
            yield from differences(value, theirs[key], (*path, key))
    elif isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        for index, (mine, adks) in enumerate(zip(ours, theirs, strict=True)):
            yield from differences(mine, adks, (*path, index))
    elif type(ours) is not type(theirs) or ours != theirs:
        yield path, theirs


def adopt(data: Any, path: tuple[Key, ...], value: Any) -> Any:
    """`data` with the value at `path` replaced (a copy along the path)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(data, dict):
        return {**data, head: adopt(data[head], rest, value)}
    copy = list(data)
    copy[head] = adopt(copy[head], rest, value)  # type: ignore[index]
    return copy


def describe(value: Any) -> str:
    """How a message names ADK's value (never the text itself: it may be a secret)."""
    if isinstance(value, bool) or value is None:
        return f"`{str(value).lower() if value is not None else 'null'}`"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, dict):
        return "a mapping with other keys"
    return "a date" if type(value).__name__ in ("date", "datetime") else "other data"
