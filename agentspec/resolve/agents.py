"""Agent normalisation: inline sub-agents join `agents`, then `extends`, then `defaults`."""

from __future__ import annotations

import copy
from typing import Any

from agentspec.diagnostics import Diagnostic, Related, codes, did_you_mean
from agentspec.language.agents import KIND_MODELS, LLM_KINDS, Defaults
from agentspec.parse import PosNode
from agentspec.resolve.document import Document

__all__ = ["LLM_KINDS", "apply_defaults", "apply_extends", "flatten_inline_agents", "kind_of"]

_NOT_INHERITED = ("name", "sub_agents", "extends")
#: setting one member of a group replaces the whole group of the base agent
_EXCLUSIVE = ({"instruction", "instruction_file"},)


def kind_of(agent: object) -> object:
    return agent.get("kind", "llm") if isinstance(agent, dict) else None


def flatten_inline_agents(doc: Document) -> list[Diagnostic]:
    """Move inline sub-agent mappings into `agents` and refer to them by name."""
    found: list[Diagnostic] = []
    agents = doc.section("agents")
    for name, agent in list(agents.items()):
        if isinstance(agent, dict) and "name" in agent and agent["name"] != name:
            found.append(codes.INVALID_VALUE(
                f"the agent's `name` is `{agent['name']}` but its key is `{name}`",
                doc.value_span("agents", name, "name"), hint="remove `name` or make them equal"))
    pending = list(agents)
    while pending:
        parent = pending.pop()
        children = agents.get(parent, {}).get("sub_agents") if isinstance(
            agents.get(parent), dict) else None
        if not isinstance(children, list):
            continue
        for index, child in enumerate(children):
            if isinstance(child, dict):
                moved = _move_inline(doc, parent, index, child, found)
                if moved:
                    pending.append(moved)
    return found


def _move_inline(doc: Document, parent: str, index: int, child: dict[str, Any],
                 found: list[Diagnostic]) -> str | None:
    path = ("agents", parent, "sub_agents", index)
    node = doc.pos.find(path) or PosNode(doc.value_span(*path))
    name = child.get("name")
    if name is None:
        found.append(codes.MISSING_KEY("an inline agent needs a `name`", node.value,
                                       hint="add `name: my_agent`"))
        return None
    if not isinstance(name, str) or not name.isidentifier():
        return None  # structural validation reports the bad name where it is written
    agents = doc.section("agents")
    name_span = doc.value_span(*path, "name")
    if name in agents:
        found.append(codes.DUPLICATE_NAME(
            f"`{name}` is defined twice in `agents`", name_span, hint="rename one of the two",
            related=[Related(doc.key_span("agents", name), "first defined here")]))
        return None
    moved = PosNode(node.value, name_span, node.children)
    doc.set(("agents", name), child, moved)
    doc.set(path, name, PosNode(name_span))
    return name


def apply_extends(doc: Document) -> list[Diagnostic]:
    """Give every agent with `extends` its base's fields under its own."""
    found: list[Diagnostic] = []
    done: set[str] = set()
    for name in list(doc.section("agents")):
        chain = _extends_chain(doc, name, done, found)
        for derived, base in reversed(list(zip(chain, chain[1:], strict=False))):
            _inherit(doc, derived, base)
        done.update(chain)
    return found


def _extends_chain(doc: Document, name: str, done: set[str],
                   found: list[Diagnostic]) -> list[str]:
    """`name`, its base, that base's base, ... up to an agent already done or without
    `extends`; an unknown base or a cycle is reported and ends the chain."""
    agents = doc.section("agents")
    chain = [name]
    current = name
    while current not in done:
        agent = agents.get(current)
        base = agent.get("extends") if isinstance(agent, dict) else None
        if not isinstance(base, str):
            break
        span = doc.value_span("agents", current, "extends")
        if base not in agents:
            found.append(codes.UNKNOWN_AGENT(
                f"`extends` names `{base}`, which is not defined", span,
                hint=did_you_mean(base, agents)))
            break
        if base in chain:
            cycle = " -> ".join([*chain[chain.index(base):], base])
            found.append(codes.EXTENDS_CYCLE(f"`extends` cycle: {cycle}", span))
            break
        chain.append(base)
        current = base
    return chain


def _inherit(doc: Document, name: str, base_name: str) -> None:
    """Copy the base's fields the agent does not set (and that its kind takes)."""
    agents = doc.section("agents")
    agent, base = agents.get(name), agents.get(base_name)
    base_pos = doc.pos.find(("agents", base_name))
    if not isinstance(agent, dict) or not isinstance(base, dict) or base_pos is None:
        return
    replaced = {f for group in _EXCLUSIVE if group & agent.keys() for f in group}
    kind = agent.get("kind", base.get("kind", "llm"))
    takes = KIND_MODELS[kind].model_fields if kind in KIND_MODELS else {}
    for field, value in base.items():
        if field in _NOT_INHERITED or field in agent or field in replaced or field not in takes:
            continue
        node = base_pos.children.get(field) or PosNode(base_pos.value)
        doc.set(("agents", name, field), copy.deepcopy(value), node)


def apply_defaults(doc: Document) -> None:
    """Copy each `defaults` field into every LLM agent that does not set it."""
    defaults = doc.data.get("defaults")
    defaults_pos = doc.pos.find(("defaults",))
    if not isinstance(defaults, dict) or defaults_pos is None:
        return
    fields = Defaults.model_fields  # an unknown key is reported once, at `defaults`
    for name, agent in doc.section("agents").items():
        if not isinstance(agent, dict) or kind_of(agent) not in LLM_KINDS:
            continue
        for field, value in defaults.items():
            if field in fields and field not in agent:
                node = defaults_pos.children.get(field) or PosNode(defaults_pos.value)
                doc.set(("agents", name, field), copy.deepcopy(value), node)
