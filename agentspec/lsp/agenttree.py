"""The outline's agent tree: the agents as the spec builds them from its root (sub-agents by
name or inline, workflow steps, router children, agents used as tools, planner workers'
and deep agents' task agents, agents of imported files), read from the document validate
resolved, with validate's own edges. An agent met again on its own path is shown, marked,
and not entered, so a cycle ends; the tree is bounded in depth and size, so a spec whose
agents share children many times over (each is built once per parent) stays small."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types as lsp

from agentspec.lsp.analysis import Analysis, Checked
from agentspec.lsp.positions import range_of
from agentspec.source import Span
from agentspec.validate.semantic.tree import MAX_AGENT_DEPTH, Edge, document_edges

__all__ = ["MAX_SYMBOLS", "agent_tree"]

#: agents shown at most in one tree
MAX_SYMBOLS = 2000
_EDGES = {"sub_agents": "sub-agent", "tools": "agent tool", "worker": "worker's agent tool",
          "task": "task agent"}


@dataclass
class _Walk:
    done: Checked
    own: str  # how the check names this file
    lines: list[str]
    graph: dict[str, list[Edge]]
    left: int = MAX_SYMBOLS
    #: symbols placed in this file (a tree with none is not this file's outline)
    anchored: int = 0
    path: list[str] = field(default_factory=list)

    def here(self, span: Span | None) -> lsp.Range | None:
        if span is None or span.file != self.own:
            return None
        return range_of(span, self.lines)


def agent_tree(analysis: Analysis, path: Path, lines: list[str]) -> lsp.DocumentSymbol | None:
    """The agent tree of the spec holding `path` (itself, or the spec importing it), placed
    in `path`'s text; None when there is none or none of it is written in `path`."""
    done = next((analysis.checks[root] for root in analysis.roots_of(path)
                 if root in analysis.checks and analysis.checks[root].document is not None),
                None)
    source = done.files.get(path) if done is not None else None
    if done is None or done.document is None or source is None:
        return None
    agents = done.document.section("agents")
    graph: dict[str, list[Edge]] = {}
    for edge in document_edges(done.document):
        if edge.child in agents:
            graph.setdefault(edge.parent, []).append(edge)
    children = {edge.child for found in graph.values() for edge in found}
    tops = [done.root_agent] if done.root_agent in agents else \
        [name for name in agents if name not in children]
    walk = _Walk(done, source.name, lines, graph)
    start = lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0))
    shown = [_agent(walk, str(name), None, start) for name in tops]
    if not shown or not walk.anchored:
        return None
    whole = _spanning([s.range for s in shown])
    detail = f"from the root `{tops[0]}`" if len(tops) == 1 else "no single root"
    return lsp.DocumentSymbol("agent tree", lsp.SymbolKind.Namespace, whole,
                              shown[0].selection_range, detail=detail, children=shown)


def _agent(walk: _Walk, name: str, edge: Edge | None, anchor: lsp.Range
           ) -> lsp.DocumentSymbol:
    """`name` and, below it, what it delegates to; placed at its definition when it is in
    this file, else at the reference that reaches it, else at its parent's place."""
    walk.left -= 1
    doc = walk.done.document
    assert doc is not None
    node = doc.pos.find(("agents", name))
    key = (node.key or node.value) if node is not None else None
    defined = walk.here(key)
    used = walk.here(doc.pos.value_span(edge.path)) if edge is not None else None
    if defined is not None and node is not None:
        selection, whole = defined, _spanning([defined, range_of(node.value, walk.lines)])
    else:
        selection = whole = used or anchor
    walk.anchored += defined is not None or used is not None
    agent = doc.section("agents").get(name)
    kind = str(agent.get("kind", "llm")) if isinstance(agent, dict) else "llm"
    detail = kind if edge is None else f"{kind}, {_EDGES.get(str(edge.path[2]), 'child')}"
    if name in walk.path:
        return lsp.DocumentSymbol(name, lsp.SymbolKind.Class, whole, selection,
                                  detail=f"{detail}; a cycle back to `{name}`")
    walk.path.append(name)
    below: list[lsp.DocumentSymbol] = []
    for child in walk.graph.get(name, ()):
        if walk.left <= 0 or len(walk.path) >= MAX_AGENT_DEPTH:
            detail += "; more below, not shown"
            break
        below.append(_agent(walk, child.child, child, selection))
    walk.path.pop()
    # the range holds the children's, as editors expect of an outline
    whole = _spanning([whole, *(child.range for child in below)])
    return lsp.DocumentSymbol(name, lsp.SymbolKind.Class, whole, selection, detail=detail,
                              children=below or None)


def _spanning(ranges: list[lsp.Range]) -> lsp.Range:
    start = min((r.start for r in ranges), key=lambda p: (p.line, p.character))
    end = max((r.end for r in ranges), key=lambda p: (p.line, p.character))
    return lsp.Range(start, end)
