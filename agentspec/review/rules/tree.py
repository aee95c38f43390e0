"""The tree rules: the agents of both versions paired (added, removed, renamed), and a spec
added or removed."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from agentspec.diagnostics import codes
from agentspec.diagnostics.codes import Code
from agentspec.ir.tree import AgentNode, LlmNode, kind_of
from agentspec.language.agents import TOOL_ERRORS_DEFAULT
from agentspec.review.ruletypes import llm_view
from agentspec.review.sides import SPEC, Change, Side

__all__ = ["TREE_RULES", "TreeRule", "Trees", "blank"]


@dataclass(frozen=True)
class TreeRule:
    """A rule over the pairing of both versions' agents: it reports whole changes."""

    code: Code
    fields: tuple[str, ...]
    check: Callable[[Trees], Iterable[Change]]


@dataclass
class Trees:
    """The agents of both versions, paired by name (and renames)."""

    old: Side
    new: Side
    before: dict[str, AgentNode] = field(init=False)
    after: dict[str, AgentNode] = field(init=False)
    removed: dict[str, AgentNode] = field(init=False)
    added: dict[str, AgentNode] = field(init=False)
    renames: list[tuple[str, str]] = field(init=False)

    def __post_init__(self) -> None:
        self.before, self.after = self.old.agents, self.new.agents
        self.removed = {n: a for n, a in self.before.items() if n not in self.after}
        self.added = {n: a for n, a in self.after.items() if n not in self.before}
        self.renames = _renames(self.removed, self.added)
        for old_name, new_name in self.renames:
            self.removed.pop(old_name)
            self.added.pop(new_name)


def blank(node: AgentNode) -> AgentNode:
    """No agent: what a new agent is compared with."""
    return LlmNode(name=node.name, file=node.file, line=node.line,
                   tool_errors=TOOL_ERRORS_DEFAULT)


def _looks(node: AgentNode) -> tuple[Any, ...]:
    """What an agent looks like, to recognize it under a new name."""
    llm = llm_view(node)
    return kind_of(node), llm.instruction, node.description, [t.name for t in llm.tools]


def _renames(removed: dict[str, AgentNode], added: dict[str, AgentNode]
             ) -> list[tuple[str, str]]:
    """(old, new) pairs of agents that look the same under a new name."""
    pairs: list[tuple[str, str]] = []
    for old_name, old in removed.items():
        for new_name, new in added.items():
            same = _looks(old) == _looks(new)
            if same and new_name not in [n for _, n in pairs]:
                pairs.append((old_name, new_name))
                break
    return pairs


def _tree_change(trees: Trees, name: str, code: Code, reason: str, old: str | None,
                 new: str | None) -> Change:
    return Change(name, code.name, code.risks[0], reason,
                  trees.old.where("agents", old, key=True) if old else None,
                  trees.new.where("agents", new, key=True) if new else None, "", code.code)


def _added(trees: Trees) -> Iterator[Change]:
    for name in trees.added:
        yield _tree_change(trees, name, codes.AGENT_ADDED, "a new agent runs", None, name)


def _removed(trees: Trees) -> Iterator[Change]:
    for name in trees.removed:
        yield _tree_change(trees, name, codes.AGENT_REMOVED, "the agent no longer runs",
                           name, None)


def _spec_added(trees: Trees) -> Iterator[Change]:
    if trees.old.absent and not trees.new.absent:
        yield Change(SPEC, codes.SPEC_ADDED.name, codes.SPEC_ADDED.risks[0],
                     f"the spec is new: {trees.old.label} does not exist", None,
                     trees.new.where(), "", codes.SPEC_ADDED.code)


def _spec_removed(trees: Trees) -> Iterator[Change]:
    if trees.new.absent and not trees.old.absent:
        yield Change(SPEC, codes.SPEC_REMOVED.name, codes.SPEC_REMOVED.risks[0],
                     f"the spec is gone: {trees.new.label} does not exist", trees.old.where(),
                     None, "", codes.SPEC_REMOVED.code)


def _renamed(trees: Trees) -> Iterator[Change]:
    for old_name, new_name in trees.renames:
        yield _tree_change(trees, new_name, codes.AGENT_RENAMED,
                           f"`{old_name}` is now `{new_name}`", old_name, new_name)


TREE_RULES: tuple[TreeRule, ...] = (
    TreeRule(codes.AGENT_ADDED, ("AppNode.root", "AgentFields.name"), _added),
    TreeRule(codes.AGENT_REMOVED, ("AppNode.root", "AgentFields.name"), _removed),
    TreeRule(codes.AGENT_RENAMED, ("AgentFields.name",), _renamed),
    TreeRule(codes.SPEC_ADDED, ("AppNode.root",), _spec_added),
    TreeRule(codes.SPEC_REMOVED, ("AppNode.root",), _spec_removed),
)
