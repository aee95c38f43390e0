"""`backend:/path` entries of `memory:` (and `skills:`): files read through the agent's own
file-tools backend at run time instead of from the host, so a `state` or `sandbox` backend
can hold them."""

from __future__ import annotations

__all__ = ["BACKEND_PREFIX", "backend_path"]

BACKEND_PREFIX = "backend:"


def backend_path(entry: str) -> str | None:
    """The virtual path of a `backend:/path` entry (None: a host path)."""
    return entry[len(BACKEND_PREFIX):] if entry.startswith(BACKEND_PREFIX) else None
