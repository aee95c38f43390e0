"""Views of an agent several rule families share: what it can call, and whether it runs
commands."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, assert_never

from agentspec.contract.harness_names import TODO_TOOLS
from agentspec.ir.tree import (
    AgentNode,
    AgentToolNode,
    BuiltinToolNode,
    McpToolNode,
    OpenApiToolNode,
    PyObject,
    PythonToolNode,
    ToolNode,
    tools_of,
)
from agentspec.kindapi import kind_for
from agentspec.review.ruletypes import Path, llm_view

__all__ = ["capabilities", "python_text", "runs_commands", "tool_key"]


@dataclass(frozen=True)
class _Runs:
    """What runs when a tool is called: `shown` to the reader, compared by `identity` (an
    MCP server's environment and headers are compared, never shown)."""

    shown: str
    identity: Any

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Runs) and self.identity == other.identity

    def __hash__(self) -> int:
        return hash(repr(self.identity))


def python_text(obj: PyObject) -> str:
    """A python reference as shown in a change: `module:attr` and its arguments."""
    args = f" {dict(obj.args)}" if obj.args else ""
    return f"{obj.ref}{args}"


def tool_key(tool: ToolNode) -> str:
    """A tool's name as changes and approvals know it."""
    match tool:
        case PythonToolNode():
            return tool.name or f"python {tool.python.ref}"
        case McpToolNode():
            return tool.name or f"mcp {tool.target}"
        case OpenApiToolNode():
            return tool.name or f"openapi {tool.document}"
        case AgentToolNode():
            return f"agent {tool.agent.name}"
        case BuiltinToolNode():
            return tool.name
        case _:
            assert_never(tool)


def _tool_runs(tool: ToolNode) -> _Runs:
    match tool:
        case PythonToolNode():
            return _Runs(f"python {python_text(tool.python)}", tool.python)
        case McpToolNode():
            filter_ = None if tool.filter is None else list(tool.filter)
            return _Runs(f"mcp {tool.target} filter={filter_}",
                         (tool.server, tool.filter, tool.prefix))
        case OpenApiToolNode():  # its operations, server and auth: rules of their own
            return _Runs(f"openapi {tool.document} prefix={tool.prefix}",
                         (tool.document, tool.prefix))
        case AgentToolNode():
            return _Runs(f"agent {tool.agent.name}", f"agent {tool.agent.name}")
        case BuiltinToolNode():
            return _Runs(f"builtin {tool.name}", f"builtin {tool.name}")
        case _:
            assert_never(tool)


def capabilities(node: AgentNode) -> dict[str, tuple[Path, _Runs]]:
    """Tool -> (the field that gives it, what runs); agents it calls as tools (or as
    single_turn / task sub-agents) count as tools `agent NAME`."""
    found: dict[str, tuple[Path, _Runs]] = {}
    where = kind_for(node).tools_at
    for index, tool in enumerate(tools_of(node)):
        found[tool_key(tool)] = ((*where, index), _tool_runs(tool))
    for child in node.children:
        if child.mode in ("single_turn", "task"):
            runs = f"agent {child.name}"
            found[runs] = (("sub_agents",), _Runs(runs, runs))
    llm = llm_view(node)
    harness = _Runs("harness", "harness")
    for name in llm.filesystem.tools if llm.filesystem else ():
        found[name] = (("filesystem",), harness)
    if llm.todos:
        found.update(dict.fromkeys(TODO_TOOLS, (("todos",), harness)))
    if llm.task:
        found["task"] = (("task",), harness)
    return found


def runs_commands(node: AgentNode) -> bool:
    """Whether the agent's backend runs shell commands (`execute`)."""
    filesystem = llm_view(node).filesystem
    return bool(filesystem and "execute" in filesystem.tools)
