"""Agents: every kind with its fields, and the harness fields of LLM agents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, WithJsonSchema

from agentspec.contract.harness_names import DECISIONS, FILE_TOOLS, DecisionKind
from agentspec.language.adk_settings import CodeExecutor
from agentspec.language.common import (
    ByType,
    DirectoryPath,
    FilePath,
    Identifier,
    Model,
    PythonRef,
    keyed_union,
)
from agentspec.language.models import GenerateConfig, ThinkingConfig
from agentspec.language.prompts import Prompts
from agentspec.language.tools import ToolEntry

__all__ = ["AGENT_KINDS", "FILE_TOOLS", "KIND_MODELS", "LLM_KINDS", "Agent", "DeepAgent",
           "Defaults", "LlmAgent", "LoopAgent", "ParallelAgent", "PlannerAgent", "RemoteAgent",
           "RouterAgent", "SequentialAgent"]

Refs = list[PythonRef]


class WorkflowCallbacks(Model):
    """Callbacks every agent kind takes: lists of `module:attr`."""

    before_agent: Refs | None = Field(None, description="Run before the agent; returning "
                                      "content skips it.")
    after_agent: Refs | None = Field(None, description="Run after the agent; returning content "
                                     "adds a reply.")


class LlmCallbacks(WorkflowCallbacks):
    """The eight ADK callbacks of an LLM agent: lists of `module:attr`."""

    before_model: Refs | None = Field(None, description="`(callback_context, llm_request)`; "
                                      "returning a response skips the model.",
                                      examples=[["my_tools.guards:redact_pii"]])
    after_model: Refs | None = Field(None, description="`(callback_context, llm_response)`.")
    on_model_error: Refs | None = Field(None, description="`(callback_context, llm_request, "
                                        "error)`; returning a response recovers.")
    before_tool: Refs | None = Field(None, description="`(tool, args, tool_context)`; returning"
                                     " a dict skips the tool.")
    after_tool: Refs | None = Field(None, description="`(tool, args, tool_context, "
                                    "tool_response)`.")
    on_tool_error: Refs | None = Field(None, description="`(tool, args, tool_context, error)`.")


class PythonSchema(Model):
    """A pydantic model given by reference."""

    python: PythonRef


#: a JSON Schema mapping; `python` is no JSON Schema keyword, so a mapping with it is the
#: other form (without this, `{python: ...}` would match both members of the `oneOf`)
JsonSchema = Annotated[dict[str, Any], WithJsonSchema({
    "type": "object", "not": {"required": ["python"]},
    "description": "A JSON Schema (draft 2020-12) mapping."})]


def _schema_pick(value: object) -> str | None:
    if not isinstance(value, dict):
        return None
    return "python" if set(value) == {"python"} else "json_schema"


if TYPE_CHECKING:
    SchemaRef = dict[str, Any] | PythonSchema
else:
    SchemaRef = keyed_union("schema_ref",
                            "a schema is a JSON Schema mapping or `{python: module:Model}`",
                            {"json_schema": JsonSchema, "python": PythonSchema},
                            _schema_pick)


class FilesystemConfig(Model):
    """A backend plus the subset of file tools to offer."""

    backend: str = Field(description="Backend name from `backends`.", examples=["workspace"])
    tools: list[Literal[FILE_TOOLS]] | None = Field(  # type: ignore[valid-type]
        None, description="Offer only these file tools (default: all the backend supports).",
        examples=[["ls", "read_file", "grep"]])


class _BoolOr:
    """Picks `off` for a flag (`false`, or `true` where `true_ok`), `backend` for the
    `backend` setting's name, `settings` for a mapping."""

    def __init__(self, name: str, true_ok: bool) -> None:
        self.name, self.true_ok = name, true_ok

    def __call__(self, value: object) -> str | None:
        if isinstance(value, bool):
            return "off" if (not value or self.true_ok) else None
        if isinstance(value, str) and self.name == "backend":
            return "backend"
        return "settings" if isinstance(value, dict) else None


if TYPE_CHECKING:
    Filesystem = str | FilesystemConfig | Literal[False]
else:
    Filesystem = keyed_union("filesystem_setting", "`filesystem` is a backend name, "
                             "`{backend: name, tools: [...]}` or `false`",
                             {"backend": str, "settings": FilesystemConfig, "off": Literal[False]},
                             _BoolOr("backend", true_ok=False))


class TaskConfig(Model):
    """deepagents' `task` tool: delegate a task to a listed sub-agent."""

    agents: list[str] = Field(default_factory=list, description="Agents the `task` tool can "
                              "start.", examples=[["researcher", "critic"]])
    general_purpose: bool = Field(False, description="Also offer `general-purpose`: an agent "
                                  "with this agent's instruction and tools.")


if TYPE_CHECKING:
    Task = TaskConfig | bool
else:
    Task = keyed_union("task_setting", "`task` is true, false or `{agents: [...], "
                       "general_purpose: ...}`", {"settings": TaskConfig, "off": bool},
                       _BoolOr("task", true_ok=True))


class SkillsConfig(Model):
    """Skill directories plus how the model discovers them."""

    paths: list[DirectoryPath] = Field(description="Directories holding `<skill>/SKILL.md` "
                                       "folders: beside the spec, or `backend:/path` in the "
                                       "agent's file-tools backend.",
                             examples=[["./skills"]])
    discovery: Literal["lazy", "eager"] = Field(
        "lazy", description="`lazy`: a `list_skills` tool; `eager`: the catalogue is in the "
        "system prompt.")


Skills = Annotated[list[DirectoryPath] | SkillsConfig, ByType(
    "skills_setting", "`skills` is a list of directories or `{paths: [...], discovery: "
    "lazy|eager}`", paths=list, settings=dict)]


def _all_decisions() -> list[DecisionKind]:
    return list(DECISIONS)


class InterruptConfig(Model):
    """How a person may answer an interrupted tool call."""

    decisions: list[DecisionKind] = Field(
        default_factory=_all_decisions,
        min_length=1,
        description="Answers offered to the person.", examples=[["approve", "reject"]])
    hint: str | None = Field(None, description="Question shown to the person.",
                             examples=["Run this shell command?"])


Interrupt = Annotated[bool | InterruptConfig, ByType(
    "interrupt_setting", "an `interrupt_on` entry is true, false or `{decisions: [...], hint: "
    "...}`", flag=bool, settings=dict)]


class ToolResultLimit(Model):
    """Results larger than this are saved to a file; the model gets the path and a preview."""

    tokens: int = Field(ge=1, description="Size limit in tokens (about 4 characters each).",
                        examples=[20000])


def _limit_pick(value: object) -> str | None:
    if value is False:
        return "off"
    return "settings" if isinstance(value, dict) else None


if TYPE_CHECKING:
    ResultLimit = ToolResultLimit | Literal[False]
else:
    ResultLimit = keyed_union("result_limit_setting", "`tool_result_limit` is `{tokens: N}` or "
                              "`false`", {"settings": ToolResultLimit, "off": Literal[False]},
                              _limit_pick)


ToolErrors = Literal["return", "raise"]
#: what a tool that raises does when neither the agent nor `defaults` says
TOOL_ERRORS_DEFAULT: ToolErrors = "return"
TOOL_ERRORS_DOC = ("A tool that raises: `return` (the default) answers the model with "
                   "`{\"error\": \"<type>: <message>\"}` and the turn goes on; `raise` fails "
                   "the run. `callbacks.on_tool_error` is asked first either way.")


class LlmSettings(Model):
    """Fields an LLM agent can inherit from `defaults`."""

    model: str | None = Field(None, description="A name from `models` or a literal model id.",
                              examples=["smart", "gemini-2.5-flash"])
    tools: list[ToolEntry] | None = Field(None, description="Tool names, inline tool "
                                          "definitions, or `{agent: name}`.")
    generate: GenerateConfig | None = Field(None, description="Generation settings; override "
                                            "the model's.")
    thinking: ThinkingConfig | None = Field(None, description="Thinking settings; override the "
                                            "model's.")
    planner: Literal["plan_react", "builtin"] | None = Field(
        None, description="ADK planner: `plan_react` (PlanReActPlanner) or `builtin` "
        "(BuiltInPlanner with the thinking settings).")
    include_contents: Literal["default", "none"] | None = Field(
        None, description="`none`: the model sees only the current turn.")
    disallow_transfer_to_parent: bool | None = Field(None, description="Forbid transfer back "
                                                     "to the parent.")
    disallow_transfer_to_peers: bool | None = Field(None, description="Forbid transfer to "
                                                    "sibling agents.")
    callbacks: LlmCallbacks | None = Field(None, description="ADK callbacks.")
    todos: bool | None = Field(None, description="`write_todos` / `read_todos` tools over "
                               "session state.")
    filesystem: Filesystem | None = Field(None, description="File tools over a backend.",
                                          examples=["workspace"])
    task: Task | None = Field(None, description="The `task(description, subagent_type)` tool.")
    skills: Skills | None = Field(None, description="Skill directories (Agent Skills, ADK "
                                  "SkillToolset).", examples=[["./skills"]])
    memory: list[FilePath] | None = Field(None, description="AGENTS.md-style files added to "
                                          "the system prompt on every model call, verbatim: "
                                          "a path beside the spec, or `backend:/path`, a "
                                          "file of the agent's file-tools backend.",
                                     examples=[["./AGENTS.md", "backend:/memories/AGENTS.md"]])
    interrupt_on: dict[str, Interrupt] | None = Field(
        None, description="Tool name -> approval settings; the tool never runs before a "
        "person decides.", examples=[{"write_file": True, "execute": {"decisions":
                                                                      ["approve", "reject"]}}])
    tool_result_limit: ResultLimit | None = Field(None, description="Evict large tool results "
                                                  "to a file.")
    tool_errors: ToolErrors | None = Field(None, description=TOOL_ERRORS_DOC)


class Defaults(LlmSettings):
    """Fields applied to every LLM agent (`llm`, `deep`) that does not set them."""


class AgentBase(Model):
    """Fields every agent kind takes."""

    name: Identifier | None = Field(None, description="Required for inline agents; otherwise "
                                    "the key under `agents`.")
    description: str | None = Field(None, description="What the agent does; parents and "
                                    "routers read it.")
    extends: str | None = Field(None, description="Copy another agent's fields (except "
                                "`sub_agents`), then apply this one's.")
    execution_mode: Literal["realtime", "offline"] | None = Field(
        None, description="`offline`: delegating to this agent queues a background job.")


class LlmAgent(AgentBase, LlmSettings):
    """An LLM agent (ADK `LlmAgent`)."""

    kind: Literal["llm"] = Field("llm", description="Agent kind.")
    instruction: str | None = Field(None, description="System instruction; `{key}` is replaced "
                                    "from session state, `{key?}` when present, `{{` and `}}` "
                                    "are literal braces.", examples=["Research {topic?}."])
    instruction_file: FilePath | None = Field(None, description="Instruction read from a "
                                              "file "
                                         "relative to the spec.",
                                         examples=["prompts/coordinator.md"])
    static_instruction: str | None = Field(None, description="A verbatim, cacheable system "
                                           "instruction (no templating).")
    sub_agents: list[AgentEntry] | None = Field(None, description="Agent names or inline "
                                                "agents; transfer targets or delegated tools "
                                                "by their `mode`.")
    mode: Literal["chat", "single_turn", "task"] | None = Field(
        None, description="How an LLM parent invokes this agent: `chat` (transfer), "
        "`single_turn` or `task` (as a tool).")
    output_schema: SchemaRef | None = Field(None, description="JSON Schema mapping or "
                                            "`{python: module:Model}` for structured output.")
    output_key: str | None = Field(None, description="Session-state key that receives the "
                                   "final answer.", examples=["draft"], min_length=1)
    input_schema: SchemaRef | None = Field(None, description="Arguments when used as a tool.")
    code_executor: CodeExecutor | None = Field(
        None, description="Run the code blocks the model writes: `builtin` (Gemini's own "
        "code execution) or `{backend: name}` (Python in a `type: sandbox` backend).",
        examples=["builtin", {"backend": "box"}])
    prompts: Prompts | None = Field(None, description="The harness's sections of the system "
                                    "prompt (one per feature the agent has), each `false` or a "
                                    "replacement file.", examples=[{"filesystem": False}])


class DeepAgent(LlmAgent):
    """An LLM agent with deepagents' defaults: todos, a state filesystem, `task` with the
    general-purpose agent, and a 20000-token tool result limit."""

    kind: Literal["deep"] = Field(description="Agent kind.")  # type: ignore[assignment]


class WorkflowAgent(AgentBase):
    sub_agents: list[AgentEntry] | None = Field(None, description="Children, by name or inline.")
    callbacks: WorkflowCallbacks | None = Field(None, description="ADK agent callbacks.")


class SequentialAgent(WorkflowAgent):
    """Runs its sub-agents in order, sharing session state."""

    kind: Literal["sequential"] = Field(description="Agent kind.")


class ParallelAgent(WorkflowAgent):
    """Runs its sub-agents concurrently; state is shared."""

    kind: Literal["parallel"] = Field(description="Agent kind.")


class LoopAgent(WorkflowAgent):
    """Runs its sub-agents repeatedly until `max_iterations` or a child calls `exit_loop`."""

    kind: Literal["loop"] = Field(description="Agent kind.")
    max_iterations: int | None = Field(None, description="At least 1.", examples=[5],
                                       json_schema_extra={"minimum": 1})


class Route(Model):
    """How a router picks a child: exactly one of `state`, `model`, `python`."""

    state: str | None = Field(None, description="Session-state key whose value names the agent.",
                              examples=["ticket_type"])
    map: dict[str, str] | None = Field(None, description="With `state`: state value -> agent.")
    model: str | None = Field(None, description="An LLM classifier over the children's "
                              "descriptions.", examples=["fast"])
    instruction: str | None = Field(None, description="With `model`: extra guidance.")
    python: PythonRef | None = Field(None, description="`fn(keys, ctx, failed) -> key | None` "
                                     "(with an `attempts` parameter it also gets the failed "
                                     "attempts: agent, key, error).")
    routes: dict[str, str] | None = Field(None, description="With any method: the key the route "
                                          "gives -> the agent that runs.",
                                          examples=[{"invoice": "billing"}], min_length=1)


class RouterAgent(WorkflowAgent):
    """Runs exactly one of its sub-agents per invocation, with fallback."""

    kind: Literal["router"] = Field(description="Agent kind.")
    route: Route = Field(description="The route method.")
    default: str | None = Field(None, description="Child used when the route gives nothing "
                                "usable.")
    fallback: list[str] | None = Field(None, description="Children tried in order when the "
                                       "chosen one fails before emitting anything.")


class PlannerWorker(Model):
    """The LLM workers at the planner's leaves."""

    model: str | None = Field(None, description="Model name or id.")
    instruction: str | None = Field(None, description="Extra instruction for every worker.")
    tools: list[ToolEntry] | None = Field(None, description="Tools every worker gets.")
    tool_errors: ToolErrors | None = Field(None, description=TOOL_ERRORS_DOC)


class PlannerSynthesizer(Model):
    """The LLM that merges parallel results."""

    model: str | None = Field(None, description="Model name or id.")
    instruction: str | None = Field(None, description="Extra instruction for merging.")


class PlannerAgent(AgentBase):
    """The recursive planner: one LLM call, or parallel / sequential subtasks, to `max_depth`."""

    kind: Literal["planner"] = Field(description="Agent kind.")
    model: str | None = Field(None, description="The planner's model.")
    instruction: str | None = Field(None, description="Guidance for planning.")
    max_depth: int = Field(3, description="Deepest level of planning (1 to 6).",
                           json_schema_extra={"minimum": 1, "maximum": 6})
    max_subtasks: int = Field(3, description="Most subtasks per node (1 to 16).",
                              json_schema_extra={"minimum": 1, "maximum": 16})
    worker: PlannerWorker | None = Field(None, description="Leaf workers.")
    synthesizer: PlannerSynthesizer | None = Field(None, description="Merges parallel results.")
    output_key: str | None = Field(None, description="Session-state key that receives the "
                                   "plan's final answer.", examples=["report"], min_length=1)
    results_key: str | None = Field(None, description="Session-state key that receives every "
                                    "node's task and result (Markdown, root first), for later "
                                    "agents.", examples=["findings"], min_length=1)
    callbacks: WorkflowCallbacks | None = Field(None, description="ADK agent callbacks.")


class RemoteAgent(AgentBase):
    """An agent served elsewhere over A2A (ADK `RemoteA2aAgent`), named by its agent card;
    `description` defaults to the card's."""

    kind: Literal["remote"] = Field(description="Agent kind.")
    url: str | None = Field(None, description="The URL of its agent card (`http(s)://`; a "
                            "base URL is read at `/.well-known/agent-card.json`).",
                            examples=["http://localhost:8001/.well-known/agent-card.json"])
    card: FilePath | None = Field(None, description="An agent card file, instead of `url`.")
    headers: dict[str, str] | None = Field(
        None, description="HTTP headers sent with every request; write secrets as "
        "`${env.X}`.", examples=[{"Authorization": "Bearer ${env.REMOTE_TOKEN}"}])
    timeout: float = Field(120.0, gt=0, le=86400, description="Seconds to wait for the card "
                           "and for each answer (at most a day).", examples=[30])
    callbacks: WorkflowCallbacks | None = Field(None, description="ADK agent callbacks.")


#: the one list of the language's agent kinds: `kind:` value -> its model
KIND_MODELS: dict[str, type[AgentBase]] = {
    "llm": LlmAgent, "deep": DeepAgent, "sequential": SequentialAgent,
    "parallel": ParallelAgent, "loop": LoopAgent, "router": RouterAgent, "planner": PlannerAgent,
    "remote": RemoteAgent}
AGENT_KINDS = tuple(KIND_MODELS)
#: the kinds that are LLM agents (they take `defaults`, `mode`, and transfer)
LLM_KINDS = tuple(kind for kind, model in KIND_MODELS.items() if issubclass(model, LlmAgent))


def _agent_kind(value: object) -> str | None:
    if not isinstance(value, dict):
        return None
    kind = value.get("kind", "llm")
    return kind if kind in AGENT_KINDS else None


if TYPE_CHECKING:
    Agent = (LlmAgent | DeepAgent | SequentialAgent | ParallelAgent | LoopAgent | RouterAgent
             | PlannerAgent | RemoteAgent)
else:
    Agent = keyed_union("agent_kind", "an agent is a mapping whose `kind` is one of "
                        + ", ".join(AGENT_KINDS),
                        dict(KIND_MODELS), _agent_kind)


AgentEntry = Annotated[str | Agent, ByType(
    "agent_entry", "a sub-agent is an agent name or an inline agent", name=str, inline=dict)]


def kinds_taking(field: str) -> list[str]:
    """The agent kinds that take `field`."""
    return [kind for kind, model in KIND_MODELS.items() if field in model.model_fields]
