"""The rules about what an agent can call: its tools, agents called as tools, harness
tools and the shell."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agentspec.diagnostics import codes
from agentspec.diagnostics.model import Risk
from agentspec.ir.tree import AgentNode, McpToolNode, OpenApiToolNode, PythonToolNode, tools_of
from agentspec.review.rules.views import capabilities, runs_commands, tool_key
from agentspec.review.ruletypes import AgentPair, Found, Rule

__all__ = ["RULES"]


def _tool_added(pair: AgentPair) -> Iterator[Found]:
    old, new = capabilities(pair.before), capabilities(pair.after)
    for tool in sorted(new.keys() - old.keys() - {"execute"}):  # execute: AS512
        yield Found(Risk.HIGH, f"gains `{tool}`: a new capability", None, new[tool][0])


def _tool_removed(pair: AgentPair) -> Iterator[Found]:
    old, new = capabilities(pair.before), capabilities(pair.after)
    for tool in sorted(old.keys() - new.keys() - {"execute"}):
        yield Found(Risk.LOW, f"loses `{tool}`", old[tool][0], None)


def _tool_changed(pair: AgentPair) -> Iterator[Found]:
    old, new = capabilities(pair.before), capabilities(pair.after)
    for tool in sorted(old.keys() & new.keys()):
        was, now = old[tool][1], new[tool][1]
        if was == now:
            continue
        reason = f"`{tool}` now runs {now.shown} (was {was.shown})" if now.shown != was.shown \
            else f"`{tool}` runs {now.shown} set up differently (its environment, headers, " \
            "working directory, prefix or module directory)"
        # positioned at the definition, where it changed
        yield Found(Risk.HIGH, reason,
                    pair.old.defined("tools", tool) or old[tool][0],
                    pair.new.defined("tools", tool) or new[tool][0])


def _execute_gained(pair: AgentPair) -> Iterator[Found]:
    if runs_commands(pair.after) and not runs_commands(pair.before):
        yield Found(Risk.HIGH, "can now run shell commands", None, ("filesystem",))


def _execute_lost(pair: AgentPair) -> Iterator[Found]:
    if runs_commands(pair.before) and not runs_commands(pair.after):
        yield Found(Risk.LOW, "can no longer run shell commands", ("filesystem",), None)


_TOOLS = ("LlmFields.tools", "AgentFields.children", "AgentFields.mode", "LlmFields.todos",
          "LlmFields.task", "LlmFields.filesystem", "PlannerRoles.worker_tools",
          "FilesystemNode.tools", "PythonToolNode.name", "PythonToolNode.python",
          "McpToolNode.name", "McpToolNode.server", "McpToolNode.filter", "McpToolNode.prefix",
          "McpStdio.*", "McpHttp.*", "OpenApiToolNode.name", "OpenApiToolNode.document",
          "OpenApiToolNode.prefix", "BuiltinToolNode.name", "AgentToolNode.agent", "PyObject.*")


def _auths(node: AgentNode) -> dict[str, Any]:
    """Tool -> its `auth` (None: none), for the tools that can carry one."""
    return {tool_key(t): t.auth for t in tools_of(node)
            if isinstance(t, PythonToolNode | McpToolNode | OpenApiToolNode)}


def _tool_auth(pair: AgentPair) -> Iterator[Found]:
    """Another way to authenticate a tool the agent keeps (whose account it acts as, which
    person signs in); secrets are never shown, only where they are read from."""
    old, new = _auths(pair.before), _auths(pair.after)
    for tool in sorted(old.keys() & new.keys()):
        was, now = old[tool], new[tool]
        if was != now:
            def shown(auth: Any) -> str:
                return "none" if auth is None else auth.kind + "".join(
                    f", {k} {v}" for k, v in auth.settings.items()
                    if k in ("header", "authorization_url", "token_url", "client_id",
                             "default", "audience")
                    or "${env." in str(v))
            yield Found(Risk.HIGH, f"`{tool}` authenticates with {shown(now)} (was {shown(was)})",
                        pair.old.defined("tools", tool) or ("tools",),
                        pair.new.defined("tools", tool) or ("tools",))


RULES: tuple[Rule[AgentPair], ...] = (
    Rule(codes.TOOL_ADDED, _TOOLS, _tool_added, on_new_agent=True),
    Rule(codes.TOOL_REMOVED, _TOOLS, _tool_removed),
    Rule(codes.TOOL_CHANGED, _TOOLS, _tool_changed),
    Rule(codes.TOOL_AUTH_CHANGED, ("PythonToolNode.auth", "McpToolNode.auth",
                                   "OpenApiToolNode.auth", "ToolAuthNode.*"), _tool_auth),
    Rule(codes.EXECUTE_GAINED, ("FilesystemNode.tools",), _execute_gained, on_new_agent=True),
    Rule(codes.EXECUTE_LOST, ("FilesystemNode.tools",), _execute_lost),
)
