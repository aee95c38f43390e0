"""What a kind module provides: one record of functions the stages call, each stage the
part it needs (validate `check`, ir `lower` and `plan`, review `label`, `edge`, `rules`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypedDict, TypeVar

if TYPE_CHECKING:
    from agentspec.contract.frozen import FrozenMap
    from agentspec.diagnostics.codes import Code
    from agentspec.ir.lower import Lowering
    from agentspec.ir.plan import Call, Value
    from agentspec.ir.planning import PlanBuilder
    from agentspec.ir.tree import AgentNode, LlmFields, ModelNode, PyObject, ToolNode
    from agentspec.kindapi.rule import Rule
    from agentspec.parse import Path
    from agentspec.review.ruletypes import AgentPair
    from agentspec.validate.semantic.context import Context

__all__ = ["Common", "Kind", "Site"]

S = TypeVar("S")  # the spec model
N = TypeVar("N")  # the node of the agent tree


class Common(TypedDict):
    """The fields of `AgentFields` every kind's node takes as lowered, but `mode`: a kind
    passes them with `**` and mypy checks each against the node's constructor."""

    name: str
    file: str
    line: int
    description: str | None
    children: tuple[AgentNode, ...]
    callbacks: FrozenMap[str, tuple[PyObject, ...]]
    offline: bool


@dataclass(frozen=True)
class Site:
    """Where an agent is lowered: the fields every kind has (`common`), the `mode` of an
    agent that is not an LLM agent (single_turn when called as a tool: it answers its
    caller), whether it is called as a tool, runs under an LLM agent (an LLM agent's own
    `mode` applies), and the offline sub-agents it queues jobs for."""

    common: Common
    mode: str | None = None
    as_tool: bool = False
    under_llm: bool = False
    queued: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Kind(Generic[S, N]):
    """Every entry is required, so a kind that forgets one fails where it is written; a kind
    without what an entry gives says so (`Kind.nothing`, `Kind.none`). Only the diff rules
    and codes, which many kinds do not have, default to none."""

    @staticmethod
    def nothing(*_: object) -> tuple[()]:
        """The entry of a kind that has none of what it lists (python references, ...)."""
        return ()

    @staticmethod
    def none(*_: object) -> None:
        """The entry of a kind that has no such thing (references of its own to check, a
        pattern of the agents it makes)."""
        return None

    names: tuple[str, ...]  # the spec's `kind:` values
    spec: tuple[type[S], ...]  # the spec models (exact classes)
    node: type[N]  # the node of the agent tree
    name_of: Callable[[N], str]  # the spec's `kind:` of a node
    check: Callable[[Context, str, S], None]  # semantic checks of one agent
    lower: Callable[[Lowering, str, S, Site], N]
    plan: Callable[[PlanBuilder, N, list[Value]], Call]  # children already planned
    models: Callable[[N], Iterable[ModelNode | None]]  # every model it calls itself
    tools: Callable[[N], tuple[ToolNode, ...]]  # the tools its model(s) can call
    #: the node as an LLM agent (itself, or one with none of an LLM agent's settings), so
    #: a kind change compares what the agent could do before and after
    as_llm: Callable[[N], LlmFields]
    label: Callable[[N], list[str]]  # the graph's box
    edge: Callable[[N], str]  # what a child is to it, on the graph's edge
    #: the smallest agent of `kind: name` in a spec: calling `model` (when it calls one)
    #: and running `children` (when it runs sub-agents); what tests compose kinds with
    example: Callable[[str, str, tuple[str, ...]], dict[str, Any]]
    #: the scripted replies (a scenario's `replies`) with which an agent of this kind named
    #: `name` answers `text` itself, the model that calls its tools last; empty for a kind
    #: whose children answer
    answers: Callable[[str, str], dict[str, list[dict[str, Any]]]]
    # what only some kinds have: a kind without it says so (`Kind.nothing`, `Kind.none`)
    #: the checks of the names its own fields refer to (models, agents, tools), run with
    #: the spec's other reference checks
    references: Callable[[Context, str, S], None]
    #: the python references of its own fields: (path in the spec, `module:attr`)
    python_refs: Callable[[str, S], Iterable[tuple[Path, str]]]
    #: its instructions beside an LLM agent's, filled from state as they are: (path in the
    #: spec, what it is in a message, the text)
    instructions: Callable[[str, S], Iterable[tuple[Path, str, str]]]
    #: for a kind that keeps its own state under `agentspec:plan:<its name>...` (a
    #: planner): the state key its answer goes to, if any; None for any other kind
    plan_state: Callable[[S], str | None] | None
    #: where its tools are written in the spec, under the agent
    tools_at: tuple[str, ...]
    #: the agents the runtime makes for it that call a model, by name: what a scenario's
    #: `replies` script beside the agent itself, when it is an LLM agent
    model_agents: Callable[[N], Iterable[str]]
    #: a regular expression of the names of the agents it makes as it runs, or None
    runs_agents: Callable[[N], str | None]
    #: the marks on the edge to its child `name` (a router's default and fallback)
    marks: Callable[[N, str], tuple[str, ...]]
    rules: tuple[Rule[AgentPair], ...] = field(default=())  # the kind's own diff rules
    #: the diagnostic codes the kind owns (its checks' and its rules'), ascending
    codes: tuple[Code, ...] = field(default=())
