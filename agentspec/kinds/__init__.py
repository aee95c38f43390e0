"""Agent kinds, one module each: a kind's spec model, semantic checks, lowering, plan,
graph label and diff rules live together in `agentspec/kinds/<kind>.py`, and this table
registers them. A new kind is one module plus a line in `KINDS` (a test checks that every
spec kind and every node class of the agent tree has exactly one entry)."""

from __future__ import annotations

from typing import Any

from agentspec.ir.tree import AgentNode
from agentspec.kinds import deep, llm, planner, remote, router, workflow
from agentspec.kinds.kind import Kind, Site

__all__ = ["KINDS", "Kind", "Site", "kind_for", "kind_for_spec"]

KINDS: tuple[Kind[Any, Any], ...] = (llm.KIND, deep.KIND, workflow.KIND, router.KIND,
                                     planner.KIND, remote.KIND)

_BY_NODE = {kind.node: kind for kind in KINDS}
_BY_SPEC = {model: kind for kind in KINDS for model in kind.spec}


def kind_for(node: AgentNode) -> Kind[Any, Any]:
    """The kind of a node of the agent tree."""
    return _BY_NODE[type(node)]


def kind_for_spec(agent: object) -> Kind[Any, Any]:
    """The kind of an agent of the spec (its model's exact class)."""
    return _BY_SPEC[type(agent)]
