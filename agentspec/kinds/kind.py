"""What a kind module provides."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from agentspec.ir.lower import Lowering
    from agentspec.ir.plan import Call, Value
    from agentspec.ir.planning import PlanBuilder
    from agentspec.review.ruletypes import AgentPair, Rule
    from agentspec.validate.semantic.context import Context

__all__ = ["Kind", "Site"]

S = TypeVar("S")  # the spec model
N = TypeVar("N")  # the node of the agent tree


@dataclass(frozen=True)
class Site:
    """Where an agent is lowered: the fields every kind has (`common`), whether it is called
    as a tool, runs under an LLM agent (its `mode` applies), and the offline sub-agents it
    queues jobs for."""

    common: dict[str, Any]
    as_tool: bool = False
    under_llm: bool = False
    queued: tuple[str, ...] = ()


@dataclass(frozen=True)
class Kind(Generic[S, N]):
    names: tuple[str, ...]  # the spec's `kind:` values
    spec: tuple[type[S], ...]  # the spec models (exact classes)
    node: type[N]  # the node of the agent tree
    check: Callable[[Context, str, S], None]  # semantic checks of one agent
    lower: Callable[[Lowering, str, S, Site], N]
    plan: Callable[[PlanBuilder, N, list[Value]], Call]  # children already planned
    label: Callable[[N], list[str]]  # the graph's box
    edge: Callable[[N], str]  # what a child is to it, on the graph's edge
    rules: tuple[Rule[AgentPair], ...] = field(default=())  # the kind's own diff rules
