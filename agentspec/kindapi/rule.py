"""A diff rule as a kind declares it (`Kind.rules`), what a rule finds, and the helpers rules
are written with. Here, below the stages, so that a kind module (imported by validate too)
can declare its rules without importing `agentspec.review`, which runs them."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from agentspec.diagnostics.model import Risk

if TYPE_CHECKING:
    from agentspec.diagnostics.codes import Code
    from agentspec.ir.tree import ModelNode
    from agentspec.review.changes import Where

__all__ = ["Found", "Path", "Rule", "limit", "model_text", "text_diff"]

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Found:
    """One change a rule found: positions are paths (under the agent, for agent rules) or
    positions already resolved."""

    risk: Risk
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


def model_text(model: ModelNode | None) -> str:
    if model is None:
        return "(inherited)"
    return model.id if model.provider == "adk" else f"{model.id} ({model.provider})"


def text_diff(before: str | None, after: str | None, old_label: str, new_label: str) -> str:
    lines = list(difflib.unified_diff((before or "").splitlines(), (after or "").splitlines(),
                                      old_label, new_label, lineterm=""))
    return "\n".join(lines) + "\n" if lines else ""


def limit(label: str, before: Any, after: Any, old: Path | Where | None,
          new: Path | Where | None) -> Iterator[Found]:
    if before == after:
        return
    raised = before is None or (after is not None and after > before)
    yield Found(Risk.MEDIUM if raised else Risk.LOW, f"{label} {before} -> {after}", old, new)
