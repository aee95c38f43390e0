"""Combining the harness's `after_tool_callback`s.

ADK stops at the first after-tool callback that returns a replacement, so two harness
callbacks that both rewrite results (a person's edit noted, a large result evicted) would
hide each other. `piped` runs them in order, each on the result the previous one left.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext

__all__ = ["AfterTool", "BeforeTool", "piped"]

BeforeTool = Callable[[BaseTool, dict[str, Any], ToolContext],
                      Awaitable[dict[str, Any] | None]]
AfterTool = Callable[[BaseTool, dict[str, Any], ToolContext, Any],
                     Awaitable[dict[str, Any] | None]]


def piped(*callbacks: AfterTool) -> AfterTool:
    """One after-tool callback running `callbacks` in turn on the evolving result; None
    (keep the tool's own result) when none of them changed it."""

    async def after_tool_callback(tool: BaseTool, args: dict[str, Any],
                                  tool_context: ToolContext,
                                  tool_response: Any) -> dict[str, Any] | None:
        changed: dict[str, Any] | None = None
        for callback in callbacks:
            replaced = await callback(tool, args, tool_context,
                                      tool_response if changed is None else changed)
            if replaced is not None:
                changed = replaced
        return changed

    return after_tool_callback
