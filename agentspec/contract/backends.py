"""Backend names the compiler writes and the runtime reads."""

from __future__ import annotations

__all__ = ["DEFAULT_STATE_BACKEND", "LARGE_RESULTS"]

#: the state backend a `kind: deep` agent gets when it names none
DEFAULT_STATE_BACKEND = "__state__"

#: the folder of a backend that large tool results are saved in (`tool_result_limit`), one
#: folder per user below it; a bundle never ships it
LARGE_RESULTS = "/large_tool_results"
