"""Context windows (input tokens) of models known by id, for the summarization deep agents
get by default (85% of the window, as deepagents). A model not listed needs `context_window:`
on its definition; without it, validate says so and the agent is not summarized.

The Gemini figures are Google's published input token limits of each model (every current
Gemini model takes 1,048,576 input tokens; Gemini 1.5 Pro 2,097,152).
"""

from __future__ import annotations

__all__ = ["DEEP_SUMMARY_FRACTION", "known_window"]

#: the share of the window at which a deep agent's conversation is summarized by default
DEEP_SUMMARY_FRACTION = 0.85

_WINDOWS = {
    "gemini-1.5-pro": 2_097_152, "gemini-1.5-flash": 1_048_576,
    "gemini-2.0-flash": 1_048_576, "gemini-2.0-flash-lite": 1_048_576,
    "gemini-2.5-pro": 1_048_576, "gemini-2.5-flash": 1_048_576,
    "gemini-2.5-flash-lite": 1_048_576, "gemini-3-pro-preview": 1_048_576,
    "gemini-3-flash-preview": 1_048_576,
}


def known_window(model_id: str) -> int | None:
    """The window of a model id the table knows, a dated or numbered release of one
    (`gemini-2.5-flash-001`, `-preview-05-20`) included; None otherwise."""
    if model_id in _WINDOWS:
        return _WINDOWS[model_id]
    base = max((known for known in _WINDOWS if model_id.startswith(known + "-")),
               key=len, default=None)
    return _WINDOWS[base] if base is not None else None
