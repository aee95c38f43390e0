"""An MCP server that cannot be used (down, or refusing the tool's credential) says so.

ADK lists an MCP toolset's tools when the agent is about to call its model; when that fails
it logs the error and runs the agent without the toolset, so the model is told only that
the tool it calls does not exist. This toolset stands in for each tool the spec expects
(its `filter`, prefixed; else one tool named after the spec entry) with a tool whose every
call answers an error naming the server, and logs the failure as a warning. The server's
URL is shown without its user, password or query, also where the error quotes it; the
credential is never shown.
"""

from __future__ import annotations

import logging
from typing import Any

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.auth.auth_tool import AuthConfig
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from agentspec.contract.urls import redacted, scrubbed

__all__ = ["McpServerToolset", "mcp_server"]

log = logging.getLogger("agentspec.mcp")


def _cause(error: BaseException) -> str:
    """The innermost message of a chain of causes and exception groups (ADK wraps the
    client's error twice, in task groups)."""
    while True:
        inner = error.exceptions[0] if isinstance(error, BaseExceptionGroup) else \
            error.__cause__
        if inner is None:
            return f"{type(error).__name__}: {error}"
        error = inner


class _Unavailable(BaseTool):
    """A tool of a server that could not be used: every call answers why."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(name=name, description=f"Unavailable: {message}")
        self.message = message

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(name=self.name, description=self.description)

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        return {"error": self.message}


class McpServerToolset(BaseToolset):
    """`inner` (an MCP toolset), or stand-ins answering why its server cannot be used."""

    def __init__(self, inner: BaseToolset, *, name: str, target: str,
                 tools: list[str] | None, prefix: str | None) -> None:
        super().__init__()
        self.inner = inner
        self.name = name
        self.target = target
        self.names = [f"{prefix}_{t}" if prefix else t for t in tools] if tools else [name]

    async def get_tools(self, readonly_context: ReadonlyContext | None = None
                        ) -> list[BaseTool]:
        try:
            return await self.inner.get_tools_with_prefix(readonly_context)
        except Exception as error:  # noqa: BLE001 - the server's failure, told to the model
            cause = scrubbed(_cause(error), self.target)
            message = (f"the MCP server `{self.name}` ({redacted(self.target)}) could not "
                       f"be used: {cause}. It may be down, or refuse the tool's "
                       "credential (`auth`, `headers`)")
            log.warning(message)
            return [_Unavailable(name, message) for name in self.names]

    def get_auth_config(self) -> AuthConfig | None:
        return self.inner.get_auth_config()

    async def close(self) -> None:
        await self.inner.close()


def mcp_server(inner: BaseToolset, *, name: str, target: str, tools: list[str] | None,
               prefix: str | None) -> McpServerToolset:
    """An MCP toolset for an agent: `name` is the spec entry's (or `mcp_server`), `target`
    the URL or command it reaches, `tools` its filter."""
    return McpServerToolset(inner, name=name, target=target, tools=tools, prefix=prefix)
