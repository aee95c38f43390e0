"""Shared pieces of the harness: combining `after_tool_callback`s, and its function tools.

ADK stops at the first after-tool callback that returns a replacement, so two harness
callbacks that both rewrite results (a person's edit noted, a large result evicted) would
hide each other. `piped` runs them in order, each on the result the previous one left.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

__all__ = ["AfterTool", "BeforeTool", "HarnessTool", "piped"]

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


class HarnessTool(FunctionTool):
    """A harness function tool whose declaration is built once.

    ADK rebuilds nothing, but hands out a deep copy of a FunctionTool's declaration on every
    model request (callers may rename it); for the harness's long, nested schemas that copy
    is most of what a tool costs per request. A shallow copy leaves the name free to change
    and shares the rest, which nothing alters."""

    def _get_declaration(self) -> types.FunctionDeclaration | None:
        cached: types.FunctionDeclaration | None = self.__dict__.get("_agentspec_declaration")
        if cached is None:
            cached = super()._get_declaration()
            self.__dict__["_agentspec_declaration"] = cached
        return cached.model_copy() if cached is not None else None
