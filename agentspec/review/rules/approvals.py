"""The rules about which tool calls wait for a person's approval."""

from __future__ import annotations

from collections.abc import Iterator

from agentspec.diagnostics import codes
from agentspec.diagnostics.model import Risk
from agentspec.ir.tree import AgentNode, McpToolNode, OpenApiToolNode, PythonToolNode
from agentspec.review.rules.views import capabilities, tool_key
from agentspec.review.ruletypes import AgentPair, Found, Rule, llm_view

__all__ = ["RULES"]


def _approvals(node: AgentNode) -> dict[str, tuple[str, ...]]:
    llm = llm_view(node)
    found: dict[str, tuple[str, ...]] = {
        name: approval.decisions for name, approval in llm.approvals.items()}
    for tool in llm.tools:
        if isinstance(tool, PythonToolNode | McpToolNode | OpenApiToolNode) and \
                tool.approval is not None:
            found[tool_key(tool)] = tool.approval.decisions
    return found


def _approval_dropped(pair: AgentPair) -> Iterator[Found]:
    old, new = _approvals(pair.before), _approvals(pair.after)
    still = capabilities(pair.after).keys() | {t.name for t in pair.new_llm.tools}
    for tool in sorted(old.keys() - new.keys()):
        if tool in still:  # else the tool itself is gone, and with it what needed approval
            yield Found(Risk.HIGH, f"`{tool}` no longer waits for a person's approval",
                        ("interrupt_on", tool), ("interrupt_on",), key=True)


def _approval_added(pair: AgentPair) -> Iterator[Found]:
    old, new = _approvals(pair.before), _approvals(pair.after)
    for tool in sorted(new.keys() - old.keys()):
        yield Found(Risk.LOW, f"`{tool}` now waits for approval", ("interrupt_on",),
                    ("interrupt_on", tool), key=True)


def _approval_changed(pair: AgentPair) -> Iterator[Found]:
    old, new = _approvals(pair.before), _approvals(pair.after)
    for tool in sorted(old.keys() & new.keys()):
        if old[tool] != new[tool]:
            gained = set(new[tool]) - set(old[tool])
            yield Found(Risk.MEDIUM if gained else Risk.LOW,
                        f"`{tool}` decisions {list(old[tool])} -> {list(new[tool])}",
                        ("interrupt_on", tool), ("interrupt_on", tool), key=True)


_APPROVALS = ("LlmFields.approvals", "PythonToolNode.approval", "McpToolNode.approval",
              "OpenApiToolNode.approval", "Approval.decisions")


RULES: tuple[Rule[AgentPair], ...] = (
    Rule(codes.APPROVAL_DROPPED, _APPROVALS, _approval_dropped),
    Rule(codes.APPROVAL_ADDED, _APPROVALS, _approval_added),
    Rule(codes.APPROVAL_CHANGED, _APPROVALS, _approval_changed),
)
