"""Backend names the compiler writes and the runtime reads."""

from __future__ import annotations

__all__ = ["DEFAULT_STATE_BACKEND"]

#: the state backend a `kind: deep` agent gets when it names none
DEFAULT_STATE_BACKEND = "__state__"
