"""Agent normalisation: inline sub-agents join `agents`, then `extends`, then `defaults`."""

from __future__ import annotations

import copy
from typing import Any

from agentspec.diagnostics import Diagnostic, Related, codes
from agentspec.parse import PosNode
from agentspec.resolve.document import Document, did_you_mean
from agentspec.spec.agents import Defaults

__all__ = ["LLM_KINDS", "apply_defaults", "apply_extends", "flatten_inline_agents", "kind_of"]

LLM_KINDS = ("llm", "deep")
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
    agents = doc.section("agents")
    done: set[str] = set()
    for name in list(agents):
        _extend(doc, name, [], done, found)
    return found


def _extend(doc: Document, name: str, chain: list[str], done: set[str],
            found: list[Diagnostic]) -> None:
    agents = doc.section("agents")
    agent = agents.get(name)
    if name in done or not isinstance(agent, dict) or not isinstance(agent.get("extends"), str):
        done.add(name)
        return
    base_name = agent["extends"]
    span = doc.value_span("agents", name, "extends")
    if base_name not in agents:
        found.append(codes.UNKNOWN_AGENT(
            f"`extends` names `{base_name}`, which is not defined", span,
            hint=did_you_mean(base_name, agents)))
        done.add(name)
        return
    if base_name in chain or base_name == name:
        loop = chain[chain.index(base_name):] if base_name in chain else []
        cycle = " -> ".join([*loop, name, base_name])
        found.append(codes.EXTENDS_CYCLE(f"`extends` cycle: {cycle}", span))
        done.add(name)
        return
    _extend(doc, base_name, [*chain, name], done, found)
    base = agents[base_name]
    if isinstance(base, dict):
        _inherit(doc, name, base_name, base, agent)
    done.add(name)


def _inherit(doc: Document, name: str, base_name: str, base: dict[str, Any],
             agent: dict[str, Any]) -> None:
    base_pos = doc.pos.find(("agents", base_name))
    replaced = {f for group in _EXCLUSIVE if group & agent.keys() for f in group}
    for field, value in base.items():
        if field in _NOT_INHERITED or field in agent or field in replaced or base_pos is None:
            continue
        doc.set(("agents", name, field), copy.deepcopy(value), base_pos.children[field])


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
                doc.set(("agents", name, field), copy.deepcopy(value),
                        defaults_pos.children[field])
