"""Tools: python references, MCP servers, ADK builtins, agents used as tools."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field

from agentspec.language.adk_settings import ToolAuth
from agentspec.language.common import (
    Arguments,
    ByType,
    DirectoryPath,
    FilePath,
    Model,
    PythonRef,
    one_key_union,
)

__all__ = ["BUILTIN_TOOLS", "AgentTool", "BuiltinTool", "McpRemote", "McpStdio", "McpTool",
           "OpenApiTool", "PythonTool", "ToolDef", "ToolEntry"]

BUILTIN_TOOLS = ("google_search", "url_context", "load_memory", "preload_memory", "exit_loop",
                 "get_user_choice", "load_artifacts")


class PythonTool(Model):
    """A Python function (a function tool), a tool or toolset object, or a factory."""

    python: PythonRef = Field(description="`module:attribute`. A function becomes a function "
                              "tool; an ADK tool or toolset object is used as is.")
    args: Arguments | None = Field(None, description="When set, the attribute is "
                                            "called with these keyword arguments (names are "
                                            "Python identifiers) and the result is the tool or "
                                            "toolset.", examples=[{"max_results": 5}])
    auth: ToolAuth | None = Field(None, description="How the function authenticates: it "
                                  "receives ADK's credential as its `credential` argument.")


class McpStdio(Model):
    """An MCP server started as a subprocess speaking stdio."""

    command: str = Field(description="Executable to start.", examples=["npx"], min_length=1)
    args: list[str] = Field(default_factory=list, description="Its arguments.")
    env: dict[str, str] | None = Field(None, description="Environment for the server; use "
                                       "`${env.X}` for secrets.")
    cwd: DirectoryPath | None = Field(None, description="Working directory, relative to the "
                                      "spec.")
    timeout: float | None = Field(None, gt=0, description="Seconds to wait for the server.")


class McpRemote(Model):
    """An MCP server reached over the network."""

    url: str = Field(description="Server URL.", examples=["https://example.invalid/mcp"],
                     pattern=r"^https?://")
    transport: Literal["sse", "http"] = Field("http", description="`http` (streamable HTTP) "
                                              "or `sse`.")
    headers: dict[str, str] | None = Field(None, description="Request headers; use `${env.X}`"
                                           " for tokens.")
    timeout: float | None = Field(None, gt=0, description="Seconds to wait for the server.")


if TYPE_CHECKING:
    McpServer = McpStdio | McpRemote
else:
    McpServer = one_key_union("mcp_server", "an MCP server",
                              {"command": McpStdio, "url": McpRemote})


class McpTool(Model):
    """The tools of an MCP server, optionally filtered and prefixed."""

    mcp: McpServer = Field(description="`command` (stdio) or `url` (remote).")
    filter: list[str] | None = Field(None, description="Only these tools of the server.",
                                     examples=[["list_issues", "get_issue"]])
    prefix: str | None = Field(None, description="Prefix added to every tool name.",
                               pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    auth: ToolAuth | None = Field(None, description="How the server authenticates its "
                                  "callers (ADK adds the header to each request).")


class OpenApiTool(Model):
    """The operations of a REST API an OpenAPI 3 document describes, one tool each (ADK's
    `OpenAPIToolset`)."""

    openapi: FilePath = Field(description="The OpenAPI 3 document (YAML or JSON), a file of "
                              "the project relative to the spec; read by `validate` and "
                              "again when the app is loaded, never fetched.",
                              examples=["apis/petstore.yaml"])
    operations: list[str] | None = Field(None, min_length=1, description="Only these "
                                         "operations (the tool names ADK gives them: the "
                                         "`operationId` in snake_case).",
                                         examples=[["list_pets", "show_pet_by_id"]])
    prefix: str | None = Field(None, description="Prefix added to every tool name.",
                               pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    server: str | None = Field(None, description="The API's base URL, in place of the "
                               "document's first `servers` entry (may be `${env.X}`).",
                               examples=["${env.PETSTORE_URL}"])
    private_network: bool = Field(False, description="Allow calls to loopback, private and "
                                  "link-local addresses (ADK refuses them by default, so a "
                                  "model cannot be steered into the internal network).")
    auth: ToolAuth | None = Field(None, description="How the API authenticates its callers "
                                  "(ADK adds the credential to each request).")


class BuiltinTool(Model):
    """A tool that ships with ADK."""

    builtin: Literal[BUILTIN_TOOLS] = Field(  # type: ignore[valid-type]
        description="The ADK builtin tool.", examples=["google_search"])


class AgentTool(Model):
    """Another agent of the spec, called like a tool."""

    agent: str = Field(description="Name of the agent.", examples=["fact_checker"])


if TYPE_CHECKING:
    ToolDef = PythonTool | McpTool | OpenApiTool | BuiltinTool | AgentTool
else:
    ToolDef = one_key_union("tool_kind", "a tool", {
        "python": PythonTool, "mcp": McpTool, "openapi": OpenApiTool, "builtin": BuiltinTool,
        "agent": AgentTool})


ToolEntry = Annotated[str | ToolDef, ByType(
    "tool_entry", "a tool entry is a tool name or a tool mapping", name=str, inline=dict)]
