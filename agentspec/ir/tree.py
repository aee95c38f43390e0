"""The frozen agent tree: the resolved spec with every reference replaced by what it names."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["AgentNode", "AppNode", "Approval", "Compaction", "FilesystemNode", "JobsNode",
           "ModelNode", "PlanSettings", "PyObject", "RouteNode", "Schema", "ToolNode"]


@dataclass(frozen=True)
class PyObject:
    """`module:attr`, called with `args` when they are given; `directory` holds the module."""

    ref: str
    directory: str
    args: tuple[tuple[str, Any], ...] | None = None

    @property
    def module(self) -> str:
        return self.ref.split(":", 1)[0]

    @property
    def attr(self) -> str:
        return self.ref.split(":", 1)[1]


@dataclass(frozen=True)
class ModelNode:
    """A model: an id for ADK's registry or LiteLLM, or (`fallback`, `route`) a model made of
    named models, whose `id` is then its spec name."""

    id: str
    provider: str = "adk"  # adk | litellm | fallback | route
    base_url: str | None = None  # litellm
    api_key: str | None = None  # litellm: `${env.X}`, read when the app is loaded
    args: tuple[tuple[str, Any], ...] = ()  # litellm: more acompletion arguments
    #: fallback, route: every named model it may call, name -> model
    members: tuple[tuple[str, ModelNode], ...] = ()
    choices: tuple[str, ...] = ()  # route: the names it picks among
    fallback: tuple[str, ...] = ()  # fallback: the chain; route: tried after its choice
    route_state: str | None = None
    route_map: tuple[tuple[str, str], ...] | None = None
    route_python: PyObject | None = None


@dataclass(frozen=True)
class Schema:
    """A JSON Schema mapping, or a pydantic model given by reference."""

    json: Any = None
    python: PyObject | None = None


@dataclass(frozen=True)
class Approval:
    """`interrupt_on` settings of one tool: the answers a person may give, and the question."""

    decisions: tuple[str, ...]
    hint: str | None = None


@dataclass(frozen=True)
class ToolNode:
    kind: str  # python | mcp | builtin | agent
    name: str = ""  # the spec name, or the builtin / agent name
    python: PyObject | None = None
    mcp: Any = None  # spec.tools.McpTool
    mcp_cwd: str | None = None  # its working directory, relative to the spec's directory
    agent: AgentNode | None = None
    approval: Approval | None = None  # every tool this entry yields waits for a person


@dataclass(frozen=True)
class RouteNode:
    """How a router picks its child: exactly one of `state`, `python`, `model` is set."""

    state: str | None = None
    map: tuple[tuple[str, str], ...] | None = None
    python: PyObject | None = None
    model: ModelNode | None = None
    instruction: str | None = None
    default: str | None = None
    fallback: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlanSettings:
    """A recursive planner's roles and bounds."""

    model: ModelNode | None
    instruction: str | None
    max_depth: int
    max_subtasks: int
    worker_model: ModelNode | None = None
    worker_instruction: str | None = None
    worker_tools: tuple[ToolNode, ...] = ()
    synthesizer_model: ModelNode | None = None
    synthesizer_instruction: str | None = None
    #: (role, generate, thinking) of the models' definitions, for planner, worker, synthesizer
    settings: tuple[tuple[str, tuple[tuple[str, Any], ...], tuple[tuple[str, Any], ...]],
                    ...] = ()


@dataclass(frozen=True)
class AgentNode:
    name: str
    kind: str  # llm | deep | sequential | parallel | loop | router | planner
    file: str
    line: int
    description: str | None = None
    model: ModelNode | None = None
    generate: tuple[tuple[str, Any], ...] = ()
    thinking: tuple[tuple[str, Any], ...] = ()
    planner: str | None = None
    instruction: str | None = None
    #: the file the instruction was read from (relative to the spec's directory); its text
    #: is used as it is: no `${env.X}`
    instruction_file: str | None = None
    static_instruction: str | None = None
    tools: tuple[ToolNode, ...] = ()
    children: tuple[AgentNode, ...] = ()
    mode: str | None = None
    output_schema: Schema | None = None
    input_schema: Schema | None = None
    output_key: str | None = None
    include_contents: str | None = None
    disallow_transfer_to_parent: bool | None = None
    disallow_transfer_to_peers: bool | None = None
    callbacks: tuple[tuple[str, tuple[PyObject, ...]], ...] = ()
    max_iterations: int | None = None
    todos: bool = False
    memory: tuple[str, ...] = ()  # AGENTS.md-style files, relative to the spec's directory
    memory_edit_at: tuple[str | None, ...] = ()  # per file: its path in the file tools, if any
    filesystem: FilesystemNode | None = None
    skills: tuple[str, ...] = ()  # skill directories, relative to the spec's directory
    result_limit: int | None = None  # tokens
    task: tuple[tuple[str, AgentNode], ...] = ()  # subagent_type -> the agent it runs
    skill_discovery: str = "lazy"
    approvals: tuple[tuple[str, Approval], ...] = ()  # tool name the model sees -> settings
    route: RouteNode | None = None  # kind: router
    plan: PlanSettings | None = None  # kind: planner
    offline: bool = False  # delegating to it queues a background job
    #: a tool that raises (its own, a planner's workers'): `return` its error to the model
    tool_errors: str = "return"


@dataclass(frozen=True)
class FilesystemNode:
    """File tools over `backend`; `definitions` holds it and the backends it routes to,
    with directory roots relative to the spec's directory."""

    backend: str
    tools: tuple[str, ...]
    definitions: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class Compaction:
    """ADK events compaction settings, already paired the way ADK wants them."""

    settings: tuple[tuple[str, int], ...]
    model: ModelNode | None = None
    #: `history`: a directory of `filesystem`'s file tools (the root agent's) that receives
    #: the events each summary replaces
    history: str | None = None
    filesystem: FilesystemNode | None = None


@dataclass(frozen=True)
class JobsNode:
    """The job store and its settings; `sqlite_path` is an SQLite store's file, relative to
    the spec's directory unless absolute."""

    store: str
    sqlite_path: str | None = None
    max_attempts: int = 3
    lease_seconds: int = 60
    webhook: str | None = None
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class AppNode:
    name: str
    description: str | None
    spec_file: str
    root: AgentNode
    plugins: tuple[PyObject, ...] = ()
    global_instruction: str | None = None
    #: the initial session state: key -> YAML data (strings may hold `${env.X}`)
    state: tuple[tuple[str, Any], ...] = ()
    compaction: Compaction | None = None
    resumable: bool = False  # a run can pause for a person and resume where it stopped
    jobs: JobsNode | None = None
    module_dirs: tuple[str, ...] = field(default=())
    #: `outside_project`: directories outside the project the spec may name (relative to the
    #: spec's directory, or absolute); build ignores it, diff reports it
    outside_project: tuple[str, ...] = ()
