"""Document symbols: the agent tree as the spec builds it (`agenttree`), then a file's
sections and names, inline sub-agents under their agent."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp

from agentspec.lsp.agenttree import agent_tree
from agentspec.lsp.analysis import Analysis
from agentspec.lsp.positions import range_of
from agentspec.parse import PosNode
from agentspec.source import Span

__all__ = ["document_symbols"]


def document_symbols(analysis: Analysis, path: Path) -> list[lsp.DocumentSymbol]:
    """The agent tree, then the sections and their names; inline sub-agents nested under
    their agent."""
    index = analysis.index(path)
    if index is None or index.positions is None:
        return []
    lines = list(index.source.lines)
    tree = agent_tree(analysis, path, lines)
    symbols: list[lsp.DocumentSymbol] = [tree] if tree is not None else []
    kinds = {"agents": lsp.SymbolKind.Class, "tools": lsp.SymbolKind.Function,
             "models": lsp.SymbolKind.Object, "backends": lsp.SymbolKind.Module,
             "vars": lsp.SymbolKind.Variable, "state": lsp.SymbolKind.Field}
    for section, kind in kinds.items():
        node = index.positions.child(section)
        if node is None or node.key is None:
            continue
        children = [_symbol(name, child, kind, lines)
                    for name, child in node.children.items() if isinstance(name, str)]
        symbols.append(lsp.DocumentSymbol(section, lsp.SymbolKind.Namespace,
                                          _whole(node.key, node.value, lines),
                                          range_of(node.key, lines), children=children))
    return symbols


def _symbol(name: str, node: PosNode, kind: lsp.SymbolKind,
            lines: list[str]) -> lsp.DocumentSymbol:
    key = node.key or node.value
    children: list[lsp.DocumentSymbol] = []
    subs = node.child("sub_agents")
    for item in subs.children.values() if subs is not None else ():
        named = item.child("name")
        if named is not None:
            text = lines[named.value.start.line - 1][named.value.start.col - 1:
                                                      (named.value.end or named.value.start).col
                                                      - 1]
            children.append(lsp.DocumentSymbol(text.strip("'\"") or "agent", kind,
                                               range_of(item.value, lines),
                                               range_of(named.value, lines)))
    return lsp.DocumentSymbol(name, kind, _whole(key, node.value, lines),
                              range_of(key, lines), children=children or None)


def _whole(key: Span, value: Span, lines: list[str]) -> lsp.Range:
    start = range_of(key, lines).start
    end = range_of(value, lines).end
    return lsp.Range(start, end if (end.line, end.character) >= (start.line, start.character)
                     else start)
