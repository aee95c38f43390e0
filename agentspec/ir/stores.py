"""Lowering a `type: store` backend: the database it keeps files in, and its namespace's app."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentspec.language.document import Spec

__all__ = ["store_data"]

#: `spec_relative`: a path written at a spec position, relative to the spec's directory
Relative = Callable[..., str]


def store_data(name: str, data: dict[str, Any], spec: Spec, relative: Relative,
               default_sessions: str | None) -> dict[str, Any]:
    """A store backend's plain data (`StoreDef`): its own `url`, else the conversation
    store's (`sessions`, else `default_sessions`, which jobs that resume their parent get);
    an SQLite file without `${env.X}` as `sqlite`, relative to the spec's directory."""
    url = data.pop("url", None)
    written: tuple[str | int, ...] | None = ("backends", name, "url")
    if url is None:
        url, written = spec.sessions, ("sessions",)
        if url is None:
            url, written = default_sessions, None
    data["app"] = spec.name
    if url is not None and url.startswith("sqlite:///") and "${" not in url:
        path = url.removeprefix("sqlite:///")
        data["sqlite"] = relative(path, *written) if written is not None else path
    else:
        data["url"] = url
    return data
