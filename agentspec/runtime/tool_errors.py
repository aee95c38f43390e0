"""`tool_errors: return` (the default): a tool that raises answers the model with its error.

As in deepagents and ADK's own tool pipeline, a failed call is something the model can
recover from (a wrong path, a record that does not exist): the call's result is
`{"error": "<type>: <message>"}` and the turn goes on, with the error in the event log like
any result. It is the agent's last `on_tool_error_callback`, after the spec's own
(`callbacks.on_tool_error`), which still decide first; `tool_errors: raise` leaves it out.

An MCP tool that fails does not raise in the client: the server answers with an error result
(`isError`). `mcp_errors` gives such a result the same shape, or raises it for `raise`.
"""

from __future__ import annotations

import functools
from typing import Any

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext

from agentspec.runtime.adk import DynamicNodeFailError
from agentspec.runtime.failures import error_text
from agentspec.runtime.harness.callbacks import AfterTool

__all__ = ["McpToolError", "error_result", "mcp_errors"]


class McpToolError(RuntimeError):
    """An MCP tool answered with an error, and the agent's `tool_errors` is `raise`."""


async def error_result(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext,
                       error: BaseException) -> dict[str, Any] | None:
    """The error as the call's result; None (ADK decides) for a cancelled call, and for a
    tool name the model made up, which ADK answers with the tools there are."""
    if not isinstance(error, Exception) or type(tool) is BaseTool:
        return None
    if isinstance(error, DynamicNodeFailError):  # an agent the tool ran (`task`) failed
        error = error.error
    return {"error": f"{type(error).__name__}: {error}"}


@functools.cache
def _mcp_tool_class() -> type | None:
    try:  # the `mcp` extra may be missing; then there are no MCP tools either
        from google.adk.tools.mcp_tool.mcp_tool import McpTool
    except ImportError:
        return None
    return McpTool


def _is_mcp(tool: BaseTool) -> bool:
    kind = _mcp_tool_class()
    return kind is not None and isinstance(tool, kind)


def mcp_errors(mode: str) -> AfterTool:
    """An after-tool callback for MCP tools' error results: `{"error": ...}` (`return`) or
    McpToolError (`raise`)."""

    async def after_tool_callback(tool: BaseTool, args: dict[str, Any],
                                  tool_context: ToolContext,
                                  tool_response: Any) -> dict[str, Any] | None:
        text = error_text(tool_response) if _is_mcp(tool) else None
        if text is None:
            return None
        if mode == "raise":
            raise McpToolError(f"{tool.name}: {text}")
        return {"error": text}

    return after_tool_callback
