"""The names a scenario may use, read from the compiled agent tree (`agentspec.ir`): the
agents that act, the agents with a model (what `replies` scripts), and the tools a model can
call (what `expect.tools`, `not_tools` and `stubs` name). Imports no ADK, so `validate` can
use it; `tests/test_scenario_names.py` holds it to the agents a build really makes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentspec.contract.harness_names import TODO_TOOLS
from agentspec.ir.tree import (
    AgentNode,
    AgentToolNode,
    AppNode,
    BuiltinToolNode,
    LlmFields,
    McpToolNode,
    OpenApiToolNode,
    PythonToolNode,
    ToolNode,
    agents_called,
    evicts_to_artifacts,
    tools_of,
)
from agentspec.kindapi import kind_for
from agentspec.language.document import state_inputs
from agentspec.language.effective import MODEL_SIDE_BUILTINS, SKILL_TOOLS
from agentspec.project_files import Project, project_root
from agentspec.validate.check import CheckResult

__all__ = ["SpecContext", "SpecNames", "loose_context", "spec_context", "spec_names"]

#: what scripts call the summarizer of `summarization:` (`agentspec.testing.scripted`)
SUMMARIZER = "summarizer"


@dataclass
class SpecNames:
    """`agents`: every agent of the tree; `scripted`: those that call a model; `tools`: the
    names the models can call, `opaque` when some cannot be known without importing code
    (a python entry may be a toolset, an MCP server without a filter lists its own)."""

    agents: set[str] = field(default_factory=set)
    scripted: set[str] = field(default_factory=set)
    tools: set[str] = field(default_factory=set)
    opaque: bool = False
    #: regular expressions of the agents named as they run (a planner's nodes)
    patterns: set[str] = field(default_factory=set)

    def is_agent(self, name: str) -> bool:
        return name in self.agents or any(re.fullmatch(p, name) for p in self.patterns)


def _tool(tool: ToolNode, found: SpecNames) -> None:
    match tool:
        case PythonToolNode(name=name, python=python):
            found.tools.update(n for n in (name, python.attr.rsplit(".", 1)[-1]) if n)
            found.opaque = True  # the attribute may be a toolset, or a function named otherwise
        case McpToolNode(filter=None):
            found.opaque = True
        case McpToolNode(filter=names, prefix=prefix):
            found.tools.update(f"{prefix}_{n}" if prefix else n for n in names or ())
        case OpenApiToolNode(prefix=prefix):
            found.tools.update(f"{prefix}_{n}" if prefix else n for n in tool.called)
        case BuiltinToolNode(name=name):
            if name not in MODEL_SIDE_BUILTINS:  # these run inside the model: never a call
                found.tools.add(name)
        case AgentToolNode(agent=agent):
            found.tools.add(agent.name)


def _agent(node: AgentNode, found: SpecNames, seen: set[int]) -> None:
    if id(node) in seen:
        return
    seen.add(id(node))
    found.agents.add(node.name)
    for tool in tools_of(node):
        _tool(tool, found)
    if isinstance(node, LlmFields):
        found.scripted.add(node.name)
        found.tools.update(node.filesystem.tools if node.filesystem else ())
        found.tools.update(TODO_TOOLS if node.todos else ())
        found.tools.update(SKILL_TOOLS if node.skills else ())
        found.tools.update(("task",) if node.task else ())
        found.tools.update(("finish_task",) if node.mode == "task" else ())  # ADK's, to answer
        found.tools.update(("load_artifacts",) if evicts_to_artifacts(node) else ())
        found.tools.update(c.name for c in node.children if c.mode in ("single_turn", "task"))
        if any(isinstance(t, AgentToolNode) and t.agent.offline for t in node.tools) or any(
                agent.offline for _, agent in node.task.items()):
            found.tools.add("job_status")
        if node.children:
            found.tools.add("transfer_to_agent")
    kind = kind_for(node)
    made = tuple(kind.model_agents(node))
    found.scripted.update(made)
    found.agents.update(made)
    if (pattern := kind.runs_agents(node)) is not None:
        found.patterns.add(pattern)
    for child in agents_called(node):
        if isinstance(node, LlmFields) and child in node.children:
            found.tools.add("transfer_to_agent")  # a sub-agent may transfer back
        _agent(child, found, seen)


def spec_names(app: AppNode) -> SpecNames:
    found = SpecNames()
    _agent(app.root, found, set())
    if app.compaction is not None:
        found.scripted.add(SUMMARIZER)
        found.agents.add(SUMMARIZER)
    return found


@dataclass(frozen=True)
class SpecContext:
    """What a spec tells the check of its scenario files: the state keys the session's
    creator supplies, where the files may be, and the names the scenarios may use (None
    when the spec does not compile: its own diagnostics say why)."""

    required: Mapping[str, str | None]
    project: Project | None
    names: SpecNames | None


def spec_context(result: CheckResult) -> SpecContext:
    from agentspec.ir.lower import lower

    app, _ = lower(result)
    return SpecContext(state_inputs(result.spec), result.project,
                       None if app is None else spec_names(app))


def loose_context() -> SpecContext:
    """For scenario files checked without a spec: they stay in the working directory's
    project."""
    return SpecContext({}, Project(project_root(Path.cwd() / "scenarios")), None)
