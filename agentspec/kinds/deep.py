"""`kind: deep`: an LLM agent with the harness's defaults switched on (todos, file tools on a
state backend, `task` with a general-purpose agent, a result limit; see
`spec.effective.harness`). Lowered, it is an LLM agent; its checks, plan, label and diff
rules are the LLM kind's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentspec.ir.tree import DeepNode
from agentspec.kindapi import Kind, Site
from agentspec.kinds import llm
from agentspec.language.agents import DeepAgent

if TYPE_CHECKING:
    from agentspec.ir.lower import Lowering

__all__ = ["KIND"]


def lower(lowering: Lowering, name: str, agent: DeepAgent, site: Site) -> DeepNode:
    node = llm.lower_as(DeepNode, lowering, name, agent, site)
    assert isinstance(node, DeepNode)
    return node


KIND: Kind[DeepAgent, DeepNode] = Kind(
    names=("deep",), spec=(DeepAgent,), node=DeepNode, name_of=lambda node: "deep",
    check=llm.check, lower=lower, plan=llm.plan, models=llm.models, tools=llm.tools,
    as_llm=llm.as_llm, label=llm.label, edge=lambda node: "sub-agent", example=llm.example,
    answers=llm.answers, references=Kind.none, python_refs=Kind.nothing,
    instructions=Kind.nothing, plan_state=None, tools_at=("tools",), model_agents=Kind.nothing,
    runs_agents=Kind.none, marks=Kind.nothing)
