"""The summarization a spec with deep agents gets when it sets none: at 85% of the smallest
context window of the deep agents' models (their `context_window:`, or the table of known
models), keeping the newest events, as deepagents summarizes by default. A deep agent whose
window is unknown leaves the spec as it was (no summarization); validate says so (AS236).
`summarization: false` turns the default off."""

from __future__ import annotations

from dataclasses import dataclass

from agentspec.contract.context_windows import DEEP_SUMMARY_FRACTION, known_window
from agentspec.language.agents import DeepAgent
from agentspec.language.document import Spec, Summarization
from agentspec.language.models import ModelDef

__all__ = ["Unknown", "default_summarization", "unknown_windows"]


@dataclass(frozen=True)
class Unknown:
    agent: str
    model: str | None  # the model's name or id; None: the agent names none


def _windows(spec: Spec) -> tuple[list[int], list[Unknown]]:
    known, unknown = [], []
    models = spec.models or {}
    for name, agent in (spec.agents or {}).items():
        if not isinstance(agent, DeepAgent):
            continue
        definition = models.get(agent.model or "")
        window = None
        if isinstance(definition, ModelDef):
            window = definition.context_window or known_window(definition.id)
        elif isinstance(definition, str):  # a name for a model id: `smart: gemini-2.5-pro`
            window = known_window(definition)
        elif agent.model is not None and agent.model not in models:
            window = known_window(agent.model)
        if window is None:
            unknown.append(Unknown(name, agent.model))
        else:
            known.append(window)
    return known, unknown


def unknown_windows(spec: Spec) -> list[Unknown]:
    """The deep agents whose window keeps the default summarization off (none when the spec
    sets `summarization:` itself, `false` included)."""
    return [] if spec.summarization is not None else _windows(spec)[1]


def default_summarization(spec: Spec) -> Summarization | None:
    """The spec's own `summarization:`, else the deep agents' default, else None (also
    with `summarization: false`)."""
    if spec.summarization is False:
        return None
    if spec.summarization is not None:
        return spec.summarization
    known, unknown = _windows(spec)
    if not known or unknown:
        return None
    return Summarization.model_validate(
        {"trigger": {"tokens": int(DEEP_SUMMARY_FRACTION * min(known))}})
