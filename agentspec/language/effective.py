"""What an agent really gets once kind defaults apply: shared by validation and lowering."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from agentspec.contract.backends import DEFAULT_STATE_BACKEND, RUNNING_TYPES, executor
from agentspec.contract.harness_names import FILE_TOOLS, TODO_TOOLS
from agentspec.language.agents import DeepAgent, LlmAgent, TaskConfig, ToolResultLimit
from agentspec.language.common import Model
from agentspec.language.tools import AgentTool, BuiltinTool, McpTool, OpenApiTool, PythonTool

__all__ = ["DEEP_RESULT_LIMIT", "DEFAULT_STATE_BACKEND", "MODEL_SIDE_BUILTINS", "Harness",
           "can_execute", "harness", "tool_names"]

#: builtins that never run as a function call the agent executes: nothing to approve
MODEL_SIDE_BUILTINS = ("google_search", "url_context", "preload_memory")
DEEP_RESULT_LIMIT = 20_000
SKILL_TOOLS = ("list_skills", "load_skill", "load_skill_resource")


@dataclass(frozen=True)
class Harness:
    """The harness features an LLM agent ends up with."""

    todos: bool = False
    backend: str | None = None
    file_tools: tuple[str, ...] = ()
    task: TaskConfig | None = None
    result_limit: int | None = None


def can_execute(backend: str | None, backends: Mapping[str, Model]) -> bool:
    """Shell and sandbox backends run commands; a composite runs them on its default
    backend."""
    if backend is None:
        return False
    definition = backends.get(executor(backend, backends))
    return getattr(definition, "type", None) in RUNNING_TYPES


def _filesystem(agent: LlmAgent) -> tuple[str | None, tuple[str, ...] | None]:
    setting = agent.filesystem
    if setting is False:
        return None, None
    if isinstance(setting, str):
        return setting, None
    if setting is not None:
        return setting.backend, tuple(setting.tools) if setting.tools else None
    return (DEFAULT_STATE_BACKEND, None) if isinstance(agent, DeepAgent) else (None, None)


def harness(agent: LlmAgent, backends: Mapping[str, Model]) -> Harness:
    deep = isinstance(agent, DeepAgent)
    backend, chosen = _filesystem(agent)
    tools: tuple[str, ...] = ()
    if backend is not None:
        offered = FILE_TOOLS if can_execute(backend, backends) else FILE_TOOLS[:-1]
        tools = chosen if chosen is not None else offered
    task = agent.task
    if task is True or (task is None and deep):
        task = TaskConfig(general_purpose=True)
    limit = agent.tool_result_limit
    tokens = limit.tokens if isinstance(limit, ToolResultLimit) else (
        DEEP_RESULT_LIMIT if limit is None and deep else None)
    return Harness(todos=agent.todos if agent.todos is not None else deep, backend=backend,
                   file_tools=tools, task=task if isinstance(task, TaskConfig) else None,
                   result_limit=tokens)


@dataclass
class ToolNames:
    """Names the model will see for an agent's tools; `opaque` when some cannot be known
    without importing code (toolsets, factories, MCP servers without a filter)."""

    names: set[str] = field(default_factory=set)
    opaque: bool = False


def _entry_names(entry: object, tools: Mapping[str, Model], found: ToolNames) -> None:
    if isinstance(entry, str):
        found.names.add(entry)
        entry = tools.get(entry)
    if isinstance(entry, PythonTool):
        found.names.add(entry.python.rsplit(":", 1)[-1].rsplit(".", 1)[-1])
        found.opaque = True  # the attribute may be a toolset, or a function of another name
    elif isinstance(entry, McpTool | OpenApiTool):
        chosen = entry.filter if isinstance(entry, McpTool) else entry.operations
        if chosen is None:  # an OpenAPI document's names are checked with the document
            found.opaque = True
        for name in chosen or ():
            found.names.add(f"{entry.prefix}_{name}" if entry.prefix else name)
            found.names.add(name)
    elif isinstance(entry, BuiltinTool) and entry.builtin not in MODEL_SIDE_BUILTINS:
        found.names.add(entry.builtin)
    elif isinstance(entry, AgentTool):
        found.names.add(entry.agent)


def tool_names(agent: LlmAgent, tools: Mapping[str, Model], backends: Mapping[str, Model],
               sub_agent_modes: Mapping[str, str | None]) -> ToolNames:
    """Every tool name the agent can be asked to approve."""
    found = ToolNames()
    for entry in agent.tools or ():
        _entry_names(entry, tools, found)
    kit = harness(agent, backends)
    found.names.update(kit.file_tools)
    if kit.todos:
        found.names.update(TODO_TOOLS)
    if kit.task is not None:
        found.names.add("task")
    if agent.skills is not None:
        found.names.update(SKILL_TOOLS)
    found.names.update(n for n, mode in sub_agent_modes.items() if mode in ("single_turn", "task"))
    return found
