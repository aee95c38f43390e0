"""A diff rule and what it compares: one agent's two versions, or the spec's. The rule record,
what a rule finds and the helpers rules are written with live in `agentspec.kindapi.rule`
(kinds declare rules without importing review); they are named here too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentspec.diagnostics.codes import Code
from agentspec.kindapi import kind_for
from agentspec.kindapi.rule import Found, Path, Rule, limit, model_text, text_diff
from agentspec.review.changes import SPEC, Change, Where

if TYPE_CHECKING:
    from agentspec.ir.tree import AgentNode, LlmFields
    from agentspec.review.sides import Side

__all__ = ["AgentPair", "AppPair", "Found", "Path", "Rule", "limit", "llm_view", "model_text",
           "short", "text_diff"]


@dataclass(frozen=True)
class AgentPair:
    """One agent in both versions (`before` is a blank agent when it is new)."""

    old: Side
    new: Side
    name: str
    old_name: str  # its name in the old version, for its positions there
    before: AgentNode
    after: AgentNode

    @property
    def old_llm(self) -> LlmFields:
        return llm_view(self.before)

    @property
    def new_llm(self) -> LlmFields:
        return llm_view(self.after)

    def resolve(self, found: Found, code: Code) -> Change:
        return Change(self.name, code.name, found.risk, found.reason,
                      at(self.old, ("agents", self.old_name), found.old, found.key),
                      at(self.new, ("agents", self.name), found.new, found.key),
                      found.detail, code.code)


@dataclass(frozen=True)
class AppPair:
    old: Side
    new: Side

    def resolve(self, found: Found, code: Code) -> Change:
        return Change(SPEC, code.name, found.risk, found.reason,
                      at(self.old, (), found.old, found.key),
                      at(self.new, (), found.new, found.key), found.detail, code.code)


def at(side: Side, prefix: Path, place: Path | Where | None, key: bool) -> Where | None:
    if place is None or isinstance(place, Where):
        return place
    return side.where(*prefix, *place, key=key)


def llm_view(node: AgentNode) -> LlmFields:
    """An agent as an LLM agent: itself, or (another kind) one with none of an LLM agent's
    settings, so a kind change compares what the agent could do before and after."""
    return kind_for(node).as_llm(node)


def short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
