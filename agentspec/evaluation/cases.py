"""Evaluation cases as the runner takes them, from an eval file (checked) or an ADK eval set;
and the ADK `Invocation`s a case expects."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentspec.evaluation.check import effective_criteria

__all__ = ["Case", "ExpectedTurn", "Judge", "cases_of", "expected_invocations"]


@dataclass(frozen=True)
class ExpectedTurn:
    user: str
    tools: list[tuple[str, dict[str, Any]]] | None = None
    reference: str | None = None


@dataclass(frozen=True)
class Judge:
    model: str
    samples: int = 1


@dataclass
class Case:
    """One case: its conversation, what it expects, and the criteria (name -> the threshold
    or the criterion's mapping) it is scored by."""

    name: str
    turns: list[ExpectedTurn]
    criteria: dict[str, Any]
    judge: Judge | None = None
    state: dict[str, Any] = field(default_factory=dict)
    rubrics: list[str] = field(default_factory=list)
    replies: dict[str, list[Any]] | None = None
    stubs: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    source: str = ""  # the file it came from


def _env(value: Any) -> dict[str, str]:
    return {str(k): str(v).lower() if isinstance(v, bool) else str(v)
            for k, v in (value or {}).items()}


def _tools(value: Any) -> list[tuple[str, dict[str, Any]]] | None:
    if value is None:
        return None
    return [(str(t["name"]), dict(t.get("args") or {})) if isinstance(t, Mapping)
            else (str(t), {}) for t in value]


def cases_of(data: Mapping[str, Any], source: str) -> list[Case]:
    """The cases of an eval file's data, which `agentspec.evaluation.check` found valid."""
    judge = data.get("judge")
    shared = _env(data.get("env"))
    return [Case(name=str(case["name"]), criteria=effective_criteria(data, case),
                 judge=Judge(str(judge["model"]), int(judge.get("samples") or 1))
                 if judge else None,
                 turns=[ExpectedTurn(str(t["user"]), _tools(t.get("tools")), t.get("reference"))
                        for t in case["turns"]],
                 state=dict(case.get("state") or {}), rubrics=list(case.get("rubrics") or []),
                 replies=case.get("replies"), stubs=dict(case.get("stubs") or {}),
                 env={**shared, **_env(case.get("env"))}, source=source)
            for case in data["cases"]]


def expected_invocations(case: Case) -> list[Any]:
    """ADK `Invocation`s of what the case expects, one per turn, for ADK's evaluators."""
    from google.adk.evaluation.eval_case import IntermediateData, Invocation
    from google.genai import types

    return [Invocation(
        invocation_id=f"expected-{index}",
        user_content=types.Content(role="user", parts=[types.Part(text=turn.user)]),
        final_response=types.Content(role="model", parts=[types.Part(text=turn.reference)])
        if turn.reference is not None else None,
        intermediate_data=IntermediateData(tool_uses=[
            types.FunctionCall(name=name, args=args) for name, args in turn.tools or []]))
        for index, turn in enumerate(case.turns)]
