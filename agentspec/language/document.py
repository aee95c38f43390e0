"""The top level of a spec: sections, summarization, jobs, plugins, environments."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, StringConstraints, WithJsonSchema, field_validator

from agentspec.language.adk_settings import ContextCache
from agentspec.language.agents import Agent, Defaults
from agentspec.language.backends import Backend
from agentspec.language.common import (
    Arguments,
    ByType,
    CodeName,
    FilePath,
    Identifier,
    Model,
    PathField,
    PythonRef,
    keyed_union,
    one_key_union,
)
from agentspec.language.models import ModelEntry
from agentspec.language.observing import Budget, Telemetry
from agentspec.language.tools import ToolDef

__all__ = ["OVERLAY_FORBIDDEN", "STATE_KEY", "TOP_LEVEL_KEYS", "Jobs", "Plugin", "Spec",
           "StateInput", "Summarization", "initial_state", "is_state_input", "state_inputs"]


class TokensTrigger(Model):
    tokens: int = Field(ge=1, description="Summarize once a request reaches this many tokens.",
                        examples=[120000])


class FractionTrigger(Model):
    fraction: float = Field(gt=0, le=1, description="Share of the smallest declared "
                            "`context_window` among the LLM agents' models.", examples=[0.85])


class InvocationsTrigger(Model):
    invocations: int = Field(ge=1, description="Summarize every N user turns.", examples=[20])


#: what `summarization.keep` keeps when the spec says nothing: events after a token
#: summary, invocations overlapped into an invocation summary
KEEP_EVENTS = 6
KEEP_INVOCATIONS = 1


class KeepEvents(Model):
    events: int = Field(ge=0, description="Raw events kept after a token summary.",
                        examples=[8])


class KeepInvocations(Model):
    invocations: int = Field(ge=0, description="Earlier turns overlapped into each summary.",
                             examples=[2])


if TYPE_CHECKING:
    Trigger = TokensTrigger | FractionTrigger | InvocationsTrigger
    Keep = KeepEvents | KeepInvocations
else:
    Trigger = one_key_union("trigger_kind", "a summarization trigger", {
        "tokens": TokensTrigger, "fraction": FractionTrigger, "invocations": InvocationsTrigger})
    Keep = one_key_union("keep_kind", "`keep`",
                         {"events": KeepEvents, "invocations": KeepInvocations})


VarValue = Annotated[str | int | float | bool, ByType(
    "var_value", "a variable is text, a number or true or false", text=str, whole=int,
    number=float, flag=bool), WithJsonSchema({"type": ["string", "number", "boolean"]})]


#: a key of ADK session state that an instruction placeholder can name: a name, or one with
#: ADK's `app:` (shared by every user) or `user:` (shared by a user's sessions) prefix
STATE_KEY = r"^((app|user):)?[A-Za-z_][A-Za-z0-9_]*$"
StateKey = Annotated[str, StringConstraints(pattern=STATE_KEY)]


class StateInput(Model):
    """A state key without an initial value: whoever creates the session supplies it (`run
    --state KEY=VALUE`, a scenario's `state:`, the caller of ADK's session service)."""

    required: bool = Field(description="`true`: the session's creator must supply the key.")
    description: str | None = Field(None, description="What the key holds, for whoever "
                                    "supplies it (`agentspec run` shows it when it asks).")


def is_state_input(value: object) -> bool:
    """A `state:` entry that declares a key for the session's creator rather than giving it
    an initial value: a mapping with `required`."""
    return isinstance(value, (dict, StateInput)) and (
        isinstance(value, StateInput) or "required" in value)


def _state_pick(value: Any) -> str:
    return "input" if is_state_input(value) else "value"


if TYPE_CHECKING:
    StateValue = StateInput | Any
else:
    StateValue = keyed_union(
        "state_value", "a state entry is an initial value, or `{required: true}`",
        {"input": StateInput, "value": Annotated[Any, WithJsonSchema(
            {"not": {"type": "object", "required": ["required"]}})]},
        _state_pick)


class Summarization(Model):
    """Conversation compaction, compiled to ADK events compaction on the App: a `tokens` or
    `fraction` trigger is checked before each model call and after each turn."""

    trigger: Trigger = Field(description="When to summarize.")
    keep: Keep | None = Field(None, description="What stays verbatim (default: "
                              f"{KEEP_EVENTS} events for token triggers, {KEEP_INVOCATIONS} "
                              "invocation for invocation triggers).")
    model: str | None = Field(None, description="The summarizer's model (default: the root "
                              "agent's). Scripts address it as `summarizer`.",
                              examples=["fast"])
    history: str | None = Field(
        None, description="A directory of the root agent's file tools (a virtual path such "
        "as `/conversation_history`): the events each summary replaces are appended as "
        "Markdown to `<history>/<user id>/<session id>.md` there (other users' file tools "
        "cannot reach it), and the summary tells the "
        "agents the file's path, so they can read their own past with `read_file`. Needs "
        "`filesystem` on the root agent, on a directory backend.",
        examples=["/conversation_history"], min_length=1, max_length=1024)


def _summarization_pick(value: object) -> str | None:
    if value is False:
        return "off"
    return "settings" if isinstance(value, dict) else None


if TYPE_CHECKING:
    SummarizationSetting = Summarization | Literal[False]
else:
    SummarizationSetting = keyed_union(
        "summarization_setting", "`summarization` is `{trigger: ...}` or `false`",
        {"settings": Summarization, "off": Literal[False]}, _summarization_pick)


class Notify(Model):
    webhook: str = Field(description="URL that receives the job record (POST) when a job "
                         "finishes.", pattern=r"^https?://")
    headers: dict[str, str] | None = Field(None, description="Request headers.")


class Jobs(Model):
    """The background job store used by `execution_mode: offline` agents."""

    store: Annotated[str, PathField("sqlite")] = Field(
        "sqlite:///.agentspec/jobs.db", description="`memory://`, "
                       "`sqlite:///path`, `postgresql://...` or "
                       "`temporal://HOST:PORT/NAMESPACE?task_queue=QUEUE`.",
                       examples=["sqlite:///.agentspec/jobs.db"])
    max_attempts: int = Field(3, ge=1, le=100, description="Runs of a job before it is FAILED.")
    lease_seconds: int = Field(60, ge=5, le=86400, description="A worker's claim on a job; "
                               "renewed while it runs.")
    notify: Notify | None = Field(None, description="Notification when a job finishes.")
    on_done: Literal["wait", "resume"] = Field(
        "wait", description="What a finished job does: `wait` is delivered into its "
        "conversation on the next turn; `resume` is delivered by the worker at once, which "
        "then runs the parent for one turn (no user message) through the `sessions:` store.")


class Plugin(Model):
    """An ADK plugin installed on the App."""

    python: PythonRef = Field(description="A plugin object, or a class / factory when `args` "
                              "is set.")
    args: Arguments | None = Field(None, description="Keyword arguments for the "
                                            "factory; names are Python identifiers.")


TOP_LEVEL_KEYS = ("agentspec", "name", "description", "root", "imports", "vars", "state",
                  "models", "defaults", "tools", "backends", "agents", "summarization", "jobs",
                  "sessions", "environments", "global_instruction", "plugins", "outside_project",
                  "telemetry", "budget", "context_cache")
OVERLAY_FORBIDDEN = ("agentspec", "imports", "environments", "outside_project")


class Spec(Model):
    """An agentspec file: agents and what they use, for Google ADK."""

    agentspec: Literal[1] = Field(description="Language version; 1 is the only one.")
    name: CodeName = Field(description="App name and generated package name.",
                             examples=["research_desk"])
    description: str | None = Field(None, description="What the app does.")
    root: str | None = Field(None, description="Entry agent; required when several agents are "
                             "nobody's child.", examples=["coordinator"])
    imports: list[FilePath] | None = Field(None, description="Spec files whose models, tools, "
                                      "backends and agents join this one.",
                                      examples=[["./common/tools.yaml"]])
    vars: dict[Identifier, VarValue] | None = Field(
        None, description="Values for `${vars.NAME}`.", examples=[{"company": "Acme"}])
    state: dict[StateKey, StateValue] | None = Field(
        None, description="Session state the agents can count on, so `{key}` placeholders "
        "can name it. An entry with a value is initial state: before each run, every such "
        "key the session lacks is set to its value (YAML data). An entry `{required: true, "
        "description: ...}` has no value: whoever creates the session supplies it (`run "
        "--state KEY=VALUE`, a scenario's `state:`); an instruction that reads it in a session "
        "without it stops the run with an error. "
        "Keys are names, optionally with ADK's `app:` or `user:` prefix.",
        examples=[{"tier": "standard", "user:language": "en",
                   "topic": {"required": True, "description": "What to research"}}])
    models: dict[Identifier, ModelEntry] | None = Field(None, description="Named models.")
    defaults: Defaults | None = Field(None, description="Fields for every LLM agent that does "
                                      "not set them.")
    tools: dict[Identifier, ToolDef] | None = Field(None, description="Named tools.")
    backends: dict[Identifier, Backend] | None = Field(None, description="Named backends.")
    agents: dict[Identifier, Agent] = Field(description="Named agents.")
    summarization: SummarizationSetting | None = Field(
        None, description="Conversation compaction; `false` turns off the default "
        "summarization of `kind: deep` agents.")
    jobs: Jobs | None = Field(None, description="Background job store.")
    sessions: Annotated[str, PathField("sqlite")] | None = Field(
        None, description="The conversation store `agentspec run`, `agentspec worker` and "
        "front ends (`adk api_server --session_service_uri`) share: a URL ADK's session "
        "services take (`sqlite:///path`, relative to the spec; `postgresql://...`; "
        "`memory://`). `AGENTSPEC_SESSIONS` overrides it. Default: in memory, or "
        "`sqlite:///.agentspec/sessions.db` with `jobs.on_done: resume`. Write a password "
        "as `${env.X}`.", examples=["sqlite:///.agentspec/sessions.db",
                                    "postgresql://agentspec:${env.PGPASSWORD}@db/agents"])
    environments: dict[Identifier, dict[str, Any]] | None = Field(
        None, description="Overlays deep-merged over the spec when chosen with `--env NAME`; "
        "`null` removes a key, lists replace lists.",
        examples=[{"prod": {"models": {"fast": "gemini-2.5-pro"}}}])
    @field_validator("agentspec", mode="before")
    @classmethod
    def _not_a_boolean(cls, value: Any) -> Any:
        if isinstance(value, bool):  # `True == 1` must not pass for version 1
            raise ValueError("the language version is a number")
        return value

    global_instruction: str | None = Field(None, description="Text prepended to every agent's "
                                           "system prompt.")
    plugins: list[Plugin] | None = Field(None, description="ADK plugins.")
    telemetry: Telemetry | None = Field(None, description="Tracing (OpenTelemetry).")
    budget: Budget | None = Field(None, description="Token and cost limits per run and per "
                                  "background job.")
    context_cache: ContextCache | None = Field(
        None, description="ADK's context caching for every agent (Gemini models): "
        "`{}` takes ADK's settings. Off unless set.", examples=[{"ttl_seconds": 1800}])
    outside_project: list[str] | None = Field(
        None, description="Directories (or files) outside the project that the spec's paths "
        "may name: every path a spec names must be inside its project (its git work tree, "
        "else its directory) unless it is under one of these. Relative to the spec, or "
        "absolute; written literally.", examples=[["/opt/shared-prompts"]])


def initial_state(spec: Spec) -> dict[str, Any]:
    """The `state:` entries with an initial value."""
    return {key: value for key, value in (spec.state or {}).items()
            if not isinstance(value, StateInput)}


def state_inputs(spec: Spec | None) -> dict[str, str | None]:
    """The `state:` keys the session's creator supplies (`required: true`), with their
    descriptions (none for no spec)."""
    return {key: value.description for key, value in (spec.state or {} if spec else {}).items()
            if isinstance(value, StateInput) and value.required}
