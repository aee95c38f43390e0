"""A diff rule and what it compares: one agent's two versions, or the spec's."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, assert_never

from agentspec.diagnostics.codes import Code
from agentspec.ir.tree import (
    AgentNode,
    LlmFields,
    LlmNode,
    ModelNode,
    PlannerNode,
    RemoteNode,
    RouterNode,
    WorkflowNode,
)
from agentspec.review.changes import SPEC, Change, Where

if TYPE_CHECKING:
    from agentspec.review.sides import Side

__all__ = ["AgentPair", "AppPair", "Found", "Path", "Rule", "limit", "llm_view", "model_text",
           "short", "text_diff"]

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Found:
    """One change a rule found: positions are paths (under the agent, for agent rules) or
    positions already resolved."""

    risk: str
    reason: str
    old: Path | Where | None
    new: Path | Where | None
    detail: str = ""
    key: bool = False  # at the key of a mapping entry, not its value


P = TypeVar("P")


@dataclass(frozen=True)
class Rule(Generic[P]):
    code: Code
    #: the IR fields it reads, `Class.field` (`Class.*`: the node compared as a whole)
    fields: tuple[str, ...]
    check: Callable[[P], Iterable[Found]]
    #: agent rules: also run for an agent only the new version has (against no agent)
    on_new_agent: bool = False
    #: app rules: also run for a spec only the new version has (against no spec)
    on_new_spec: bool = False

    @property
    def name(self) -> str:
        return self.code.name


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
    match node:
        case LlmFields():
            return node
        case PlannerNode():
            return LlmNode(name=node.name, file=node.file, line=node.line,
                           tool_errors=node.tool_errors, output_key=node.output_key)
        case WorkflowNode() | RouterNode() | RemoteNode():
            return LlmNode(name=node.name, file=node.file, line=node.line)
        case _:
            assert_never(node)


def model_text(model: ModelNode | None) -> str:
    if model is None:
        return "(inherited)"
    return model.id if model.provider == "adk" else f"{model.id} ({model.provider})"


def short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def text_diff(before: str | None, after: str | None, old_label: str, new_label: str) -> str:
    lines = list(difflib.unified_diff((before or "").splitlines(), (after or "").splitlines(),
                                      old_label, new_label, lineterm=""))
    return "\n".join(lines) + "\n" if lines else ""


def limit(label: str, before: Any, after: Any, old: Path | Where | None,
           new: Path | Where | None) -> Iterator[Found]:
    if before == after:
        return
    raised = before is None or (after is not None and after > before)
    yield Found("medium" if raised else "low", f"{label} {before} -> {after}", old, new)
