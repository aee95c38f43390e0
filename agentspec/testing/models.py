"""The scenario file language: pydantic models (the schema is generated from them).

A scenario file holds one scenario at its top level, or several under `scenarios:`. The
models check every key (unknown keys are errors, with did-you-mean); `agentspec.testing.
check` turns their errors into diagnostics at file:line:col. Nothing here imports ADK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import ConfigDict, Field

from agentspec.language.common import ByType, Model, keyed_union, one_key_union
from agentspec.language.document import StateKey, VarValue

__all__ = ["DECISION_WORDS", "JOB_FIELDS", "CallReply", "EditDecision", "Expect",
           "ExpectedCall", "ExpectedError", "ExpectedJob", "FailReply", "Final",
           "RejectDecision", "Reply", "Scenario", "ScenarioFile", "ScenarioSet", "TextReply",
           "TransferReply"]

DECISION_WORDS = ("approve", "reject")
#: the fields of a job record (`agentspec.runtime.jobs.Job`) an `expect.jobs` entry may name
JOB_FIELDS = ("id", "agent", "input", "status", "tool", "attempts", "result", "error",
              "output_key", "on_done", "max_attempts")

_WHEN = "Only for a model request whose text (or a tool result in it) contains this text; " \
    "the first reply that fits is used (for agents that run in parallel)."

EnvValue = VarValue  # text, a number or true or false, as `vars:` takes


class TextReply(Model):
    """A final answer."""

    text: str = Field(description="The model's answer.")
    when: str | None = Field(None, description=_WHEN)


class CallReply(Model):
    """A tool call."""

    call: str = Field(description="The tool to call.", examples=["get_weather"])
    args: dict[str, Any] | None = Field(None, description="The call's arguments.")
    when: str | None = Field(None, description=_WHEN)


class TransferReply(Model):
    """A transfer to another agent (`transfer_to_agent`)."""

    transfer: str = Field(description="The agent to transfer to.")
    when: str | None = Field(None, description=_WHEN)


class FailReply(Model):
    """The model call fails with this message, as a real one can (for fallbacks, retries
    and `expect.errors`)."""

    fail: str = Field(description="The failure's message.")
    when: str | None = Field(None, description=_WHEN)


if TYPE_CHECKING:
    Reply = TextReply | CallReply | TransferReply | FailReply
else:
    Reply = one_key_union("reply_kind", "a reply", {
        "text": TextReply, "call": CallReply, "transfer": TransferReply, "fail": FailReply})


class EditDecision(Model):
    """Run the call with these arguments instead."""

    edit: dict[str, Any] = Field(description="The arguments the call runs with.")


class RejectDecision(Model):
    """Refuse the call, with a message for the agent."""

    reject: str | None = Field(description="What the agent is told.")


if TYPE_CHECKING:
    DecisionMapping = EditDecision | RejectDecision
else:
    DecisionMapping = one_key_union("decision_kind", "a decision",
                                    {"edit": EditDecision, "reject": RejectDecision})
Decision = Annotated[Literal["approve", "reject"] | DecisionMapping, ByType(
    "decision", "a decision is `approve`, `reject`, `{reject: message}` or `{edit: {argument: "
    "value}}`", word=str, mapping=dict)]


class ExpectedCall(Model):
    """A tool call with at least these arguments."""

    name: str = Field(description="The tool.")
    args: dict[str, Any] | None = Field(None, description="Arguments the call has (a mapping "
                                        "matches when its entries are all there).")


ExpectedTool = Annotated[str | ExpectedCall, ByType(
    "expected_tool", "an expected call is a tool name or `{name: TOOL, args: {...}}`",
    name=str, call=dict)]


class Final(Model):
    """What the last answer must hold."""

    model_config = ConfigDict(json_schema_extra={"minProperties": 1})

    contains: str | None = Field(None, description="Text the last answer contains.")
    matches: str | None = Field(None, description="A regular expression (Python) the last "
                                "answer matches somewhere.")


FinalExpect = Annotated[str | Final, ByType(
    "final", "`final` is text the last answer contains, or `{contains: TEXT}` / `{matches: "
    "REGEX}`", text=str, checks=dict)]


class ExpectedJob(Model):
    """A background job queued during the run, with at least these fields."""

    id: str | None = Field(None, description="The job id.")
    agent: str | None = Field(None, description="The offline agent.")
    input: str | None = Field(None, description="The job's input.")
    status: Literal["QUEUED", "RUNNING", "DONE", "FAILED", "CANCELLED"] | None = Field(
        None, description="The job's status.")
    tool: str | None = Field(None, description="The tool the parent called.")
    attempts: int | None = Field(None, description="Runs so far.")
    result: Any = Field(None, description="The job's result.")
    error: str | None = Field(None, description="The job's error.")
    output_key: str | None = Field(None, description="The state key the result goes to.")
    on_done: Literal["wait", "resume"] | None = Field(None, description="What a finished "
                                                      "job does.")
    max_attempts: int | None = Field(None, description="Runs before the job is FAILED.")


class ExpectedError(Model):
    """An error the run goes through: an agent that raised, or a tool's error result. Names
    exactly one of `agent` and `tool`."""

    model_config = ConfigDict(json_schema_extra={"oneOf": [{"required": ["agent"]},
                                                           {"required": ["tool"]}]})

    agent: str | None = Field(None, description="The agent that failed.", min_length=1)
    tool: str | None = Field(None, description="The tool whose result was an error.",
                             min_length=1)
    contains: str | None = Field(None, description="Text the error contains.", min_length=1)


class Expect(Model):
    """What must have happened; a scenario fails on any error it does not declare."""

    tools: list[ExpectedTool] | None = Field(None, description="Tools called, each at least "
                                             "once, with at least the given arguments.")
    not_tools: list[str] | None = Field(None, description="Tools never called.")
    agents: list[str] | None = Field(None, description="Agents that answered or called tools.")
    state: dict[str, Any] | None = Field(None, description="State entries after the run (a "
                                         "mapping matches when its entries are all there).")
    final: FinalExpect | None = Field(None, description="The last answer.")
    jobs: list[ExpectedJob] | None = Field(None, description="Background jobs queued.")
    errors: list[ExpectedError] | None = Field(None, description="Errors the run goes "
                                               "through, each of which must happen.")


class Scenario(Model):
    """One scripted conversation and what must come of it."""

    name: str | None = Field(None, description="Shown in the report (default: the file's "
                             "name, with the scenario's index).")
    env: dict[str, EnvValue] | None = Field(None, description="Environment variables during "
                                            "the run (over the file's `env`).")
    state: dict[StateKey, Any] | None = Field(
        None, description="The session's state before the first message, as its creator "
        "gives it: also each key the spec's `state:` marks `required`.")
    messages: list[str] = Field(description="The user's turns.", min_length=1)
    replies: dict[str, list[Reply]] | None = Field(
        None, description="Each agent's model replies, in order, one per model call; "
        "`summarizer` scripts the summarizer of `summarization:`.")
    decisions: list[Decision] | None = Field(None, description="Answers to approval "
                                             "requests, in order.")
    stubs: dict[str, Any] | None = Field(None, description="Tools answered with this result "
                                         "without running them (a mapping is the result; "
                                         "anything else becomes `{result: value}`).")
    expect: Expect | None = Field(None, description="What must have happened.")


class ScenarioSet(Model):
    """Several scenarios in one file."""

    scenarios: list[Scenario] = Field(description="The scenarios.", min_length=1)
    env: dict[str, EnvValue] | None = Field(None, description="Environment variables for "
                                            "every scenario.")


def _scenario_file_pick(value: Any) -> str | None:
    return None if not isinstance(value, dict) else "set" if "scenarios" in value else "one"


if TYPE_CHECKING:
    ScenarioFile = Scenario | ScenarioSet
else:
    ScenarioFile = keyed_union(
        "scenario_file", "a scenario file is a mapping: one scenario, or `scenarios:`",
        {"one": Scenario, "set": ScenarioSet},
        _scenario_file_pick)
