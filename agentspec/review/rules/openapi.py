"""The rules about OpenAPI tools: where their calls go, and which operations they offer
(the tool itself, its document and prefix: `tools`; its credential: AS566)."""

from __future__ import annotations

from collections.abc import Iterator

from agentspec.contract.urls import masked
from agentspec.diagnostics import codes
from agentspec.diagnostics.model import Risk
from agentspec.ir.tree import AgentNode, OpenApiToolNode, tools_of
from agentspec.review.rules.views import tool_key
from agentspec.review.ruletypes import AgentPair, Found, Rule

__all__ = ["RULES"]


def _openapi(node: AgentNode) -> dict[str, OpenApiToolNode]:
    return {tool_key(t): t for t in tools_of(node) if isinstance(t, OpenApiToolNode)}


def _kept(pair: AgentPair) -> Iterator[tuple[str, OpenApiToolNode, OpenApiToolNode]]:
    old, new = _openapi(pair.before), _openapi(pair.after)
    for key in sorted(old.keys() & new.keys()):
        yield key, old[key], new[key]


def _server(tool: OpenApiToolNode) -> str:
    where = masked(tool.server) if tool.server else "the document's server"
    return where + (" (private network allowed)" if tool.private_network else "")


def _server_changed(pair: AgentPair) -> Iterator[Found]:
    for key, was, now in _kept(pair):
        if (was.server, was.private_network) != (now.server, now.private_network):
            yield Found(Risk.HIGH, f"`{key}` now calls {_server(now)} (was {_server(was)})",
                        pair.old.defined("tools", was.name) or ("tools",),
                        pair.new.defined("tools", now.name) or ("tools",))


def _operations_changed(pair: AgentPair) -> Iterator[Found]:
    for key, was, now in _kept(pair):
        gained = [o for o in now.called if o not in was.called]
        lost = [o for o in was.called if o not in now.called]
        old_at = pair.old.defined("tools", was.name) or ("tools",)
        new_at = pair.new.defined("tools", now.name) or ("tools",)
        if gained:
            yield Found(Risk.HIGH, f"`{key}` gains the operations "
                        f"{', '.join(f'`{o}`' for o in gained)}: new capabilities",
                        old_at, new_at)
        if lost:
            yield Found(Risk.LOW, f"`{key}` loses the operations "
                        f"{', '.join(f'`{o}`' for o in lost)}", old_at, new_at)


RULES: tuple[Rule[AgentPair], ...] = (
    Rule(codes.OPENAPI_SERVER_CHANGED, ("OpenApiToolNode.server",
                                        "OpenApiToolNode.private_network"), _server_changed),
    Rule(codes.OPENAPI_OPERATIONS_CHANGED, ("OpenApiToolNode.operations",
                                            "OpenApiToolNode.offered"), _operations_changed),
)
