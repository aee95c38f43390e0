"""The kinds table: every agent kind of the language and every agent node of the tree has
exactly one kind module, which provides all a kind needs."""

from __future__ import annotations

import typing

from agentspec.ir import tree
from agentspec.kinds import KINDS, kind_for, kind_for_spec
from agentspec.language import agents
from agentspec.review.rules import AGENT_RULES


def test_every_spec_kind_has_one_module() -> None:
    names = [name for kind in KINDS for name in kind.names]
    assert sorted(names) == sorted(agents.AGENT_KINDS)
    models = [model for kind in KINDS for model in kind.spec]
    assert len(models) == len(set(models))
    assert set(models) == set(agents.KIND_MODELS.values())


def test_every_node_class_has_one_module() -> None:
    nodes = [kind.node for kind in KINDS]
    assert sorted(n.__name__ for n in nodes) == sorted(
        n.__name__ for n in typing.get_args(tree.AgentNode))


def test_dispatch_by_node_and_by_spec_model() -> None:
    node = tree.RouterNode(name="r", file="s.yaml", line=1, route=tree.RouteNode(state="x"))
    assert kind_for(node).names == ("router",)
    assert kind_for(node).label(node)[:2] == ["r", "router"]
    loop = agents.LoopAgent(kind="loop", sub_agents=["a"], max_iterations=2)
    assert kind_for_spec(loop).names == ("sequential", "parallel", "loop")


def test_each_kinds_diff_rules_run_with_the_others() -> None:
    for kind in KINDS:
        assert all(rule in AGENT_RULES for rule in kind.rules)
