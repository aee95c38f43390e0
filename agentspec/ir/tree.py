"""The frozen agent tree: the resolved spec with every reference replaced by what it names.

Tools are a tagged union of frozen dataclasses, one class per kind; consumers dispatch with
`match` and end with `assert_never`, so mypy names a consumer that misses a kind. Agents are
frozen dataclasses too, one class per agent kind, all `AgentFields`; the stages dispatch on
them through the kinds table (`agentspec.kindapi`), whose entries every kind must give, so a
kind may define its node in its own module. No pydantic object is inside: the tree is plain
data.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar, Literal, assert_never

from agentspec.contract.backends import BackendDef
from agentspec.contract.compaction import CompactionSettings
from agentspec.contract.frozen import FrozenMap, UserData
from agentspec.contract.harness_names import DecisionKind
from agentspec.ir.observing import ObservingNode
from agentspec.kindapi import kind_for

__all__ = ["AgentFields", "AgentNode", "AgentToolNode", "AppNode", "Approval",
           "BuiltinToolNode", "CodeExecutorNode", "Compaction", "DeepNode", "FilesystemNode",
           "JobsNode", "FallbackChain", "LiteLlmEndpoint", "LlmFields", "LlmNode", "McpHttp",
           "McpStdio", "McpToolNode", "ModelNode", "ModelRoute", "OpenApiToolNode", "PlainModel",
           "members_of", "PlannerNode", "PlannerRoles", "PyObject", "PythonToolNode", "RemoteNode",
           "RouteNode", "RouterNode", "Schema", "ToolAuthNode", "ToolNode", "WorkflowNode",
           "agents_called", "evicts_to_artifacts", "kind_of", "tools_of"]


@dataclass(frozen=True)
class PyObject:
    """`module:attr`, called with `args` when they are given; `directory` holds the module."""

    ref: str
    directory: str
    args: FrozenMap[str, UserData] | None = None

    @property
    def module(self) -> str:
        return self.ref.split(":", 1)[0]

    @property
    def attr(self) -> str:
        return self.ref.split(":", 1)[1]


@dataclass(frozen=True)
class PlainModel:
    """A model id ADK's registry resolves (Gemini, or a model class registered with it)."""

    provider: ClassVar[Literal["adk"]] = "adk"
    id: str


@dataclass(frozen=True, kw_only=True)
class LiteLlmEndpoint:
    """A model LiteLLM calls, at `base_url` when one is given."""

    provider: ClassVar[Literal["litellm"]] = "litellm"
    id: str
    base_url: str | None
    api_key: str | None  # `${env.X}`, read when the app is loaded
    args: FrozenMap[str, UserData]  # more acompletion arguments


@dataclass(frozen=True, kw_only=True)
class FallbackChain:
    """Named models tried in `order` until one answers; `id` is its spec name."""

    provider: ClassVar[Literal["fallback"]] = "fallback"
    id: str
    members: FrozenMap[str, ModelNode]  # every named model it may call
    order: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class ModelRoute:
    """A model picked per call among `choices` (by state, through `map`, or by a python
    function), then `fallback` after its choice; `id` is its spec name."""

    provider: ClassVar[Literal["route"]] = "route"
    id: str
    members: FrozenMap[str, ModelNode]  # every named model it may call
    choices: tuple[str, ...]
    fallback: tuple[str, ...]
    state: str | None
    map: FrozenMap[str, str] | None
    python: PyObject | None


ModelNode = PlainModel | LiteLlmEndpoint | FallbackChain | ModelRoute


def members_of(model: ModelNode) -> FrozenMap[str, ModelNode]:
    """The named models a chain or a route may call (none for a single model)."""
    return model.members if isinstance(model, FallbackChain | ModelRoute) else FrozenMap()


@dataclass(frozen=True)
class Schema:
    """A JSON Schema mapping, or a pydantic model given by reference."""

    json: UserData = None
    python: PyObject | None = None


@dataclass(frozen=True)
class Approval:
    """`interrupt_on` settings of one tool: the answers a person may give, and the question."""

    decisions: tuple[DecisionKind, ...]
    hint: str | None


# tools --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolAuthNode:
    """A tool's `auth`: `api_key`, `bearer`, `oauth`, `service_account` or
    `openid_connect`, with its settings (secrets as the spec writes them: `${env.X}`, read
    when the app is loaded)."""

    kind: str
    settings: FrozenMap[str, str | bool]
    #: `oauth`'s scopes: scope -> what it allows
    scopes: FrozenMap[str, str] | None = None
    #: the scopes of `service_account` and `openid_connect`
    scope_list: tuple[str, ...] | None = None


@dataclass(frozen=True, kw_only=True)
class PythonToolNode:
    name: str = ""  # the spec name ("" for an inline entry)
    python: PyObject
    approval: Approval | None = None  # every tool this entry yields waits for a person
    auth: ToolAuthNode | None = None


@dataclass(frozen=True, kw_only=True)
class McpStdio:
    """An MCP server started as a subprocess; `cwd` is relative to the spec's directory."""

    command: str
    args: tuple[str, ...] = ()
    env: FrozenMap[str, str] | None = None
    cwd: str | None = None
    timeout: float | None = None


@dataclass(frozen=True, kw_only=True)
class McpHttp:
    """An MCP server reached over the network."""

    url: str
    transport: Literal["sse", "http"] = "http"
    headers: FrozenMap[str, str] | None = None
    timeout: float | None = None


@dataclass(frozen=True, kw_only=True)
class McpToolNode:
    name: str = ""
    server: McpStdio | McpHttp
    filter: tuple[str, ...] | None = None
    prefix: str | None = None
    approval: Approval | None = None
    auth: ToolAuthNode | None = None

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
class OpenApiToolNode:
    """The operations of an OpenAPI document (`document`: relative to the spec's directory,
    read when the app is loaded); `offered`: the tool names the document gave when the
    spec was checked, before `operations` filters them."""

    name: str = ""
    document: str
    offered: tuple[str, ...]
    operations: tuple[str, ...] | None = None
    prefix: str | None = None
    server: str | None = None
    private_network: bool
    approval: Approval | None = None
    auth: ToolAuthNode | None = None

    @property
    def called(self) -> tuple[str, ...]:
        """The operations the model gets (unprefixed)."""
        return self.offered if self.operations is None else tuple(
            o for o in self.offered if o in self.operations)


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


ToolNode = PythonToolNode | McpToolNode | OpenApiToolNode | BuiltinToolNode | AgentToolNode


# agents -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CodeExecutorNode:
    """Where the code blocks a model writes run: `builtin` (Gemini's code execution), or
    `sandbox` (Python in the `type: sandbox` backend `filesystem.backend`)."""

    kind: Literal["builtin", "sandbox"]
    filesystem: FilesystemNode | None = None

    @property
    def label(self) -> str:
        if self.filesystem is None:
            return "Gemini's built-in code execution"
        return f"run in the sandbox backend `{self.filesystem.backend}`"


@dataclass(frozen=True, kw_only=True)
class AgentFields:
    """What every agent kind has."""

    name: str
    file: str
    line: int
    description: str | None = None
    children: tuple[AgentNode, ...] = ()
    callbacks: FrozenMap[str, tuple[PyObject, ...]] = FrozenMap()
    mode: str | None = None  # single_turn | task: it answers its caller
    offline: bool = False  # delegating to it queues a background job


@dataclass(frozen=True, kw_only=True)
class LlmFields(AgentFields):
    """An LLM agent, with the deep-agent harness (todos, files, task, skills, memory)."""

    model: ModelNode | None = None
    generate: FrozenMap[str, UserData] = FrozenMap()
    thinking: FrozenMap[str, UserData] = FrozenMap()
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
    task: FrozenMap[str, AgentNode] = FrozenMap()  # subagent_type -> the agent it runs
    approvals: FrozenMap[str, Approval] = FrozenMap()  # tool name the model sees -> settings
    #: a tool that raises: `return` its error to the model, or `raise`
    tool_errors: Literal["return", "raise"]
    code_executor: CodeExecutorNode | None = None
    #: the harness's prompt sections the spec changed: section -> False (off) or the text
    #: of its replacement file (agentspec/ir/harness_prompts.py)
    prompts: FrozenMap[str, str | bool] = FrozenMap()


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
    map: FrozenMap[str, str] | None = None
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
    settings: tuple[tuple[str, FrozenMap[str, UserData], FrozenMap[str, UserData]],
                    ...] = ()


@dataclass(frozen=True, kw_only=True)
class PlannerNode(AgentFields):
    roles: PlannerRoles
    #: a worker's tool that raises: `return` its error to the model, or `raise`
    tool_errors: Literal["return", "raise"]
    #: the state key the final (synthesized) answer is written to
    output_key: str | None = None
    #: the state key every node's task and result are written to (Markdown)
    results_key: str | None = None


@dataclass(frozen=True, kw_only=True)
class RemoteNode(AgentFields):
    """`kind: remote`: an A2A agent named by its card's `url` or a `card` file (relative to
    the spec's directory); `headers` values may hold `${env.X}`, read when it is built."""

    url: str | None = None
    card: str | None = None
    headers: FrozenMap[str, str] = FrozenMap()
    timeout: float


#: an agent of the tree: the node of one agent kind (the classes above, or a kind's own)
AgentNode = AgentFields


def kind_of(node: AgentNode) -> str:
    """The spec's `kind` of an agent."""
    return kind_for(node).name_of(node)


def tools_of(node: AgentNode) -> tuple[ToolNode, ...]:
    """The tools an agent's model can call: an LLM agent's, a planner's workers'."""
    return kind_for(node).tools(node)


def agents_called(node: AgentNode) -> Iterator[AgentNode]:
    """The agents `node` runs: its children, the agents its tools call, the agents of
    `task` (the general-purpose copy too)."""
    yield from node.children
    yield from (t.agent for t in tools_of(node) if isinstance(t, AgentToolNode))
    if isinstance(node, LlmFields):
        yield from (agent for _, agent in node.task.items())


def evicts_to_artifacts(node: LlmFields) -> bool:
    """Large results go to artifacts when the agent cannot `read_file` them back; it then
    needs `load_artifacts` (unless it lists it already)."""
    if node.result_limit is None:
        return False
    if node.filesystem is not None and "read_file" in node.filesystem.tools:
        return False
    return not any(isinstance(t, BuiltinToolNode) and t.name == "load_artifacts"
                   for t in node.tools)


@dataclass(frozen=True)
class FilesystemNode:
    """File tools over `backend`; `definitions` holds it and the backends it routes to,
    with directory roots relative to the spec's directory."""

    backend: str
    tools: tuple[str, ...]
    definitions: FrozenMap[str, BackendDef]


@dataclass(frozen=True)
class Compaction:
    """ADK events compaction: when it runs and what it keeps."""

    settings: CompactionSettings
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
    headers: FrozenMap[str, str]
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
    state: FrozenMap[str, UserData] = FrozenMap()
    #: state keys the session's creator supplies (`required: true`): key -> description
    inputs: FrozenMap[str, str | None] = FrozenMap()
    compaction: Compaction | None = None
    resumable: bool = False  # a run can pause for a person and resume where it stopped
    jobs: JobsNode | None = None
    #: where conversations are kept for `run` and `worker` (None: in memory)
    sessions: SessionsNode | None = None
    module_dirs: tuple[str, ...] = field(default=())
    #: `outside_project`: directories outside the project the spec may name (relative to the
    #: spec's directory, or absolute); build ignores it, diff reports it
    outside_project: tuple[str, ...] = ()
    #: `telemetry`, `budget` and models' `price` (None: none of them)
    observing: ObservingNode | None = None
    #: `context_cache`: ADK's ContextCacheConfig settings as the spec gives them (None: off)
    context_cache: FrozenMap[str, int | float] | None = None
