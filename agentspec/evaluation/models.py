"""The eval file language: pydantic models (schemas/eval.schema.json is generated from them).

An eval file holds cases run against a spec's real models (`agentspec eval`) and the
criteria that score them: ADK's own evaluators, by ADK's metric names, each with its
threshold. `agentspec.evaluation.check` turns the models' errors into diagnostics at
file:line:col. Nothing here imports ADK.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agentspec.language.common import Model
from agentspec.language.document import StateKey
from agentspec.testing.models import EnvValue, Reply

__all__ = ["JUDGED", "NEEDS_REFERENCE", "NEEDS_RUBRICS", "Case", "Criteria", "EvalFile",
           "ExpectedTool", "Judge", "JudgedCriterion", "Threshold", "TrajectoryCriterion",
           "Turn"]

_THRESHOLD = "The lowest mean score (0 to 1) that passes."


class Threshold(Model):
    """A criterion's threshold."""

    threshold: float = Field(ge=0, le=1, description=_THRESHOLD)


class TrajectoryCriterion(Threshold):
    """How the tools called are compared with the turns' expected `tools`."""

    match: Literal["exact", "in_order", "any_order"] = Field(
        "exact", description="`exact`: the same calls in the same order; `in_order`: the "
        "expected calls in this order, others allowed between; `any_order`: the expected "
        "calls in any order, others allowed.")
    ignore_args: bool = Field(False, description="Compare tool names only.")


class JudgedCriterion(Threshold):
    """A criterion a judge model scores."""

    samples: int | None = Field(None, ge=1, le=20, description="How many times the judge "
                                "scores each turn (default: the file's `judge.samples`).")


#: a criterion's entry: its threshold alone, or its settings
Scored = float | Threshold | None
Judged = float | JudgedCriterion | None


class Criteria(Model):
    """ADK's evaluators, by their metric names, each with a threshold (a number is the
    threshold alone). Judged criteria need `judge:`."""

    tool_trajectory_avg_score: float | TrajectoryCriterion | None = Field(
        None, description="The tools called in each turn against the turn's `tools` (1 per "
        "matching turn, 0 otherwise), averaged.")
    response_match_score: Scored = Field(None, description=(
        "ROUGE-1 overlap of each final answer with the turn's `reference` (needs the `eval` "
        "extra)."))
    final_response_match_v2: Judged = Field(None, description=(
        "The judge says whether each final answer agrees with the turn's `reference`."))
    rubric_based_final_response_quality_v1: Judged = Field(None, description=(
        "The judge checks each final answer against the case's `rubrics`."))
    rubric_based_tool_use_quality_v1: Judged = Field(None, description=(
        "The judge checks the tools used in each turn against the case's `rubrics`."))
    hallucinations_v1: Judged = Field(None, description=(
        "The judge checks that each sentence of the final answers is supported by the "
        "conversation (instructions, tool results)."))


#: criteria scored by a judge model
JUDGED = tuple(name for name, field in Criteria.model_fields.items()
               if field.annotation == Judged)
#: criteria that read each turn's `reference`
NEEDS_REFERENCE = ("response_match_score", "final_response_match_v2")
#: criteria that read the case's `rubrics`
NEEDS_RUBRICS = ("rubric_based_final_response_quality_v1", "rubric_based_tool_use_quality_v1")


class Judge(Model):
    """The model that scores judged criteria."""

    model: str = Field(description="A model name ADK resolves (a Gemini model, or a "
                       "LiteLLM `provider/model`).", examples=["gemini-2.5-flash"])
    samples: int = Field(1, ge=1, le=20, description="How many times the judge scores each "
                         "turn; the majority verdict counts.")


class ExpectedTool(Model):
    """A tool call the turn is expected to make."""

    name: str = Field(description="The tool's name, as the model calls it.")
    args: dict[str, Any] | None = Field(None, description="Its arguments (compared unless "
                                        "`ignore_args`).")


class Turn(Model):
    """One user message and what should come of it."""

    user: str = Field(description="The user's message.")
    tools: list[ExpectedTool | str] | None = Field(
        None, description="The tools the agents should call in this turn, in order (a name "
        "alone: no arguments); none given: no tool calls are expected.")
    reference: str | None = Field(None, description="A reference answer the final answer "
                                  "is compared with.")


class Case(Model):
    """One evaluation case: a conversation and its expectations."""

    name: str = Field(description="The case's name, unique in the file.",
                      pattern=r"^[A-Za-z0-9_][A-Za-z0-9_ .:-]{0,99}$")
    state: dict[StateKey, Any] | None = Field(
        None, description="The session's state before the first turn (also each key the "
        "spec's `state:` marks `required`).")
    turns: list[Turn] = Field(description="The conversation, one user message per turn.",
                              min_length=1)
    rubrics: list[str] | None = Field(None, description="Properties the answers (or the "
                                      "tool use) must have, for the rubric criteria.")
    criteria: Criteria | None = Field(None, description="Criteria of this case, over the "
                                      "file's.")
    replies: dict[str, list[Reply]] | None = Field(
        None, description="Scripted model replies per agent, as in scenario files: the "
        "case runs offline instead of on the spec's models.")
    stubs: dict[str, Any] | None = Field(None, description="Tools answered with this result "
                                         "without running them.")
    env: dict[str, EnvValue] | None = Field(None, description="Environment variables during "
                                            "the case's runs.")


class EvalFile(Model):
    """Evaluation cases of a spec (`agentspec eval`)."""

    criteria: Criteria = Field(description="The criteria every case is scored by, with "
                               "their thresholds.")
    judge: Judge | None = Field(None, description="The model that scores judged criteria.")
    cases: list[Case] = Field(description="The cases.", min_length=1)
    env: dict[str, EnvValue] | None = Field(None, description="Environment variables for "
                                            "every case.")
