"""A tool's `auth`: secrets only from `${env.X}`, on a tool that can carry them (a function,
or an MCP server reached over the network)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from agentspec.diagnostics import codes
from agentspec.language.adk_settings import (
    ApiKeyAuth,
    BearerAuth,
    OAuthAuth,
    OpenIdConnectAuth,
    ServiceAccountAuth,
)
from agentspec.language.tools import McpRemote, McpTool, PythonTool
from agentspec.validate.semantic.context import Context

__all__ = ["check_tool_auth", "tool_entries"]

_ENV = re.compile(r"\$\{env\.[A-Za-z_][A-Za-z0-9_]*\}")


def _secrets(auth: Any) -> Iterator[tuple[tuple[str, ...], str]]:
    if isinstance(auth, ApiKeyAuth):
        yield ("api_key", "value"), auth.api_key.value
    elif isinstance(auth, BearerAuth):
        yield ("bearer",), auth.bearer
    elif isinstance(auth, OAuthAuth):
        yield ("oauth", "client_secret"), auth.oauth.client_secret
    elif isinstance(auth, OpenIdConnectAuth):
        yield ("openid_connect", "client_secret"), auth.openid_connect.client_secret
    elif isinstance(auth, ServiceAccountAuth) and auth.service_account.key is not None:
        yield ("service_account", "key"), auth.service_account.key


def tool_entries(ctx: Context) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    for name, tool in (ctx.spec.tools or {}).items():
        yield ("tools", name), tool
    for name, agent in ctx.llm_agents():
        for index, entry in enumerate(agent.tools or ()):
            if not isinstance(entry, str):
                yield ("agents", name, "tools", index), entry


def check_tool_auth(ctx: Context) -> None:
    for where, tool in tool_entries(ctx):
        auth = getattr(tool, "auth", None)
        if auth is None:
            continue
        for path, value in _secrets(auth):
            if not _ENV.fullmatch(value):
                ctx.report(codes.AUTH_SECRET_LITERAL(
                    "a tool's credential is written into the spec", ctx.at(*where, "auth",
                                                                           *path),
                    hint="write `${env.NAME}` and set NAME where the agent runs: the secret "
                    "is then read when the app is loaded, never stored in the spec or the "
                    "generated package"))
        if isinstance(auth, ServiceAccountAuth) and \
                (auth.service_account.key is None) != auth.service_account.default:
            both = auth.service_account.default
            ctx.report(codes.SERVICE_ACCOUNT_SOURCE(
                "`service_account` has both a `key` and `default: true`" if both else
                "`service_account` has neither a `key` nor `default: true`",
                ctx.key_at(*where, "auth", "service_account"),
                hint="keep one: `key: ${env.NAME}` (the JSON key) or `default: true` "
                "(Application Default Credentials)"))
        if isinstance(tool, PythonTool) and tool.args is not None:
            ctx.report(codes.AUTH_TOOL_KIND(
                "`auth` gives a function its credential, and this entry calls a factory "
                "(`args`)", ctx.key_at(*where, "auth"),
                hint="name the function itself, or let the factory build an ADK tool that "
                "authenticates"))
        elif isinstance(tool, McpTool) and not isinstance(tool.mcp, McpRemote):
            ctx.report(codes.AUTH_TOOL_KIND(
                "`auth` sends credentials in request headers, and this MCP server is a "
                "local command (stdio) that receives none", ctx.key_at(*where, "auth"),
                hint="give a stdio server its secret through `env: {NAME: ${env.NAME}}`"))
