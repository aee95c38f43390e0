"""The frozen agent tree: the resolved spec with every reference replaced by what it names.

Agents and tools are tagged unions of frozen dataclasses, one class per kind; consumers
dispatch with `match` and end with `assert_never`, so mypy names a consumer that misses a
kind. No pydantic object is inside: the tree is plain data.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, assert_never

__all__ = ["AgentFields", "AgentNode", "AgentToolNode", "AppNode", "Approval",
           "BuiltinToolNode", "Compaction", "DeepNode", "FilesystemNode", "JobsNode",
           "LlmFields", "LlmNode", "McpHttp", "McpStdio", "McpToolNode", "ModelNode",
           "PlannerNode", "PlannerRoles", "PyObject", "PythonToolNode", "RemoteNode",
           "RouteNode", "RouterNode", "Schema", "ToolNode", "WorkflowNode", "agents_called",
           "kind_of", "tools_of"]


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


# tools --------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class PythonToolNode:
    name: str = ""  # the spec name ("" for an inline entry)
    python: PyObject
    approval: Approval | None = None  # every tool this entry yields waits for a person


@dataclass(frozen=True, kw_only=True)
class McpStdio:
    """An MCP server started as a subprocess; `cwd` is relative to the spec's directory."""

    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] | None = None
    cwd: str | None = None
    timeout: float | None = None


@dataclass(frozen=True, kw_only=True)
class McpHttp:
    """An MCP server reached over the network."""

    url: str
    transport: Literal["sse", "http"] = "http"
    headers: tuple[tuple[str, str], ...] | None = None
    timeout: float | None = None


@dataclass(frozen=True, kw_only=True)
class McpToolNode:
    name: str = ""
    server: McpStdio | McpHttp
    filter: tuple[str, ...] | None = None
    prefix: str | None = None
    approval: Approval | None = None

    @property
    def target(self) -> str:
        """The server it starts or calls: its URL, or its command line."""
        match self.server:
            case McpHttp(url=url):
                return url
            case McpStdio(command=command, args=args):
                return " ".join((command, *args))
            case _:
                assert_never(self.server)


@dataclass(frozen=True, kw_only=True)
class BuiltinToolNode:
    name: str  # the ADK builtin


@dataclass(frozen=True, kw_only=True)
class AgentToolNode:
    """Another agent called like a tool (a single_turn / task sub-agent, or a queued job)."""

    agent: AgentNode

    @property
    def name(self) -> str:
        return self.agent.name


ToolNode = PythonToolNode | McpToolNode | BuiltinToolNode | AgentToolNode


# agents -------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class AgentFields:
    """What every agent kind has."""

    name: str
    file: str
    line: int
    description: str | None = None
    children: tuple[AgentNode, ...] = ()
    callbacks: tuple[tuple[str, tuple[PyObject, ...]], ...] = ()
    mode: str | None = None  # single_turn | task: it answers its caller
    offline: bool = False  # delegating to it queues a background job


@dataclass(frozen=True, kw_only=True)
class LlmFields(AgentFields):
    """An LLM agent, with the deep-agent harness (todos, files, task, skills, memory)."""

    model: ModelNode | None = None
    generate: tuple[tuple[str, Any], ...] = ()
    thinking: tuple[tuple[str, Any], ...] = ()
    adk_planner: str | None = None  # the spec's `planner`: ADK's plan_react | builtin
    instruction: str | None = None
    #: the file the instruction was read from (relative to the spec's directory); its text
    #: is used as it is: no `${env.X}`
    instruction_file: str | None = None
    static_instruction: str | None = None
    tools: tuple[ToolNode, ...] = ()
    output_schema: Schema | None = None
    input_schema: Schema | None = None
    output_key: str | None = None
    include_contents: str | None = None
    disallow_transfer_to_parent: bool | None = None
    disallow_transfer_to_peers: bool | None = None
    todos: bool = False
    memory: tuple[str, ...] = ()  # AGENTS.md-style files, relative to the spec's directory
    memory_edit_at: tuple[str | None, ...] = ()  # per file: its path in the file tools, if any
    filesystem: FilesystemNode | None = None
    skills: tuple[str, ...] = ()  # skill directories, relative to the spec's directory
    skill_discovery: str = "lazy"
    result_limit: int | None = None  # tokens
    task: tuple[tuple[str, AgentNode], ...] = ()  # subagent_type -> the agent it runs
    approvals: tuple[tuple[str, Approval], ...] = ()  # tool name the model sees -> settings
    #: a tool that raises: `return` its error to the model
    tool_errors: str = "return"


@dataclass(frozen=True, kw_only=True)
class LlmNode(LlmFields):
    """`kind: llm`."""


@dataclass(frozen=True, kw_only=True)
class DeepNode(LlmFields):
    """`kind: deep`, lowered: an LLM agent with the harness defaults of `kind: deep`
    already applied."""


@dataclass(frozen=True, kw_only=True)
class WorkflowNode(AgentFields):
    kind: Literal["sequential", "parallel", "loop"]
    max_iterations: int | None = None


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


@dataclass(frozen=True, kw_only=True)
class RouterNode(AgentFields):
    route: RouteNode


@dataclass(frozen=True)
class PlannerRoles:
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


@dataclass(frozen=True, kw_only=True)
class PlannerNode(AgentFields):
    roles: PlannerRoles
    #: a worker's tool that raises: `return` its error to the model
    tool_errors: str = "return"
    #: the state key the final (synthesized) answer is written to
    output_key: str | None = None


@dataclass(frozen=True, kw_only=True)
class RemoteNode(AgentFields):
    """`kind: remote`: an A2A agent named by its card's `url` or a `card` file (relative to
    the spec's directory); `headers` values may hold `${env.X}`, read when it is built."""

    url: str | None = None
    card: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    timeout: float = 120.0


AgentNode = LlmNode | DeepNode | WorkflowNode | RouterNode | PlannerNode | RemoteNode


def kind_of(node: AgentNode) -> str:
    """The spec's `kind` of an agent."""
    match node:
        case LlmNode():
            return "llm"
        case DeepNode():
            return "deep"
        case WorkflowNode(kind=kind):
            return kind
        case RouterNode():
            return "router"
        case PlannerNode():
            return "planner"
        case RemoteNode():
            return "remote"
        case _:
            assert_never(node)


def tools_of(node: AgentNode) -> tuple[ToolNode, ...]:
    """The tools an agent's model can call: an LLM agent's, a planner's workers'."""
    match node:
        case LlmNode() | DeepNode():
            return node.tools
        case PlannerNode():
            return node.roles.worker_tools
        case WorkflowNode() | RouterNode() | RemoteNode():
            return ()
        case _:
            assert_never(node)


def agents_called(node: AgentNode) -> Iterator[AgentNode]:
    """The agents `node` runs: its children, the agents its tools call, the agents of
    `task` (the general-purpose copy too)."""
    yield from node.children
    yield from (t.agent for t in tools_of(node) if isinstance(t, AgentToolNode))
    if isinstance(node, LlmFields):
        yield from (agent for _, agent in node.task)


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
    sqlite_path: str | None
    max_attempts: int  # no defaults here: the spec model's are the only ones
    lease_seconds: int
    webhook: str | None
    headers: tuple[tuple[str, str], ...]
    on_done: Literal["wait", "resume"]  # resume: a worker resumes the parent when a job ends


@dataclass(frozen=True)
class SessionsNode:
    """The conversation store's URL (may hold `${env.X}`); `sqlite_path` is an SQLite
    store's file, relative to the spec's directory unless absolute."""

    url: str
    sqlite_path: str | None = None


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
    #: state keys the session's creator supplies (`required: true`): key -> description
    inputs: tuple[tuple[str, str | None], ...] = ()
    compaction: Compaction | None = None
    resumable: bool = False  # a run can pause for a person and resume where it stopped
    jobs: JobsNode | None = None
    #: where conversations are kept for `run` and `worker` (None: in memory)
    sessions: SessionsNode | None = None
    module_dirs: tuple[str, ...] = field(default=())
    #: `outside_project`: directories outside the project the spec may name (relative to the
    #: spec's directory, or absolute); build ignores it, diff reports it
    outside_project: tuple[str, ...] = ()
