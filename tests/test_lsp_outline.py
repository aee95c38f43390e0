"""The outline's agent tree, in process (tests/test_lsp.py asks for it over stdio): the tree
as the spec builds it, not only as the YAML nests, placed in the file asked about; cycles
end; shared children do not multiply without bound."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp

from agentspec.lsp import outline
from agentspec.lsp.agenttree import MAX_SYMBOLS
from agentspec.lsp.analysis import Analysis
from agentspec.project_files import resolved

SPEC = """\
agentspec: 1
name: desk
root: boss
imports: [./common/shared.yaml]
models:
  fast: gemini-2.5-flash
agents:
  boss:
    kind: sequential
    sub_agents:
      - name: first
        instruction: One.
      - router
      - planner
  router:
    kind: router
    route: {state: pick}
    sub_agents: [helper, writer]
  writer:
    instruction: Write.
    tools: [{agent: boss}]
  planner:
    kind: planner
    model: fast
    worker: {tools: [{agent: researcher}]}
  researcher:
    instruction: Look things up.
"""
SHARED = "agentspec: 1\nagents:\n  helper: {instruction: Help.}\n"


def _tree(tmp_path: Path, text: str = SPEC) -> tuple[Analysis, Path, Path]:
    (tmp_path / "common").mkdir(exist_ok=True)
    shared = resolved(tmp_path / "common" / "shared.yaml")
    shared.write_text(SHARED)
    spec = resolved(tmp_path / "spec.yaml")
    spec.write_text(text)
    analysis = Analysis()
    analysis.buffers[spec] = text
    analysis.check(spec)
    return analysis, spec, shared


def _flat(symbol: lsp.DocumentSymbol, depth: int = 0) -> list[tuple[int, str, str, int]]:
    """(depth, name, detail, line of the selection) of a symbol and all below it."""
    rows = [(depth, symbol.name, symbol.detail or "", symbol.selection_range.start.line)]
    for child in symbol.children or ():
        rows += _flat(child, depth + 1)
    return rows


def _contained(symbol: lsp.DocumentSymbol) -> bool:
    def key(p: lsp.Position) -> tuple[int, int]:
        return p.line, p.character
    inside = key(symbol.range.start) <= key(symbol.selection_range.start) and \
        key(symbol.selection_range.end) <= key(symbol.range.end)
    return inside and all(_contained(c) for c in symbol.children or ())


def test_the_tree_as_the_spec_builds_it(tmp_path: Path) -> None:
    analysis, spec, _ = _tree(tmp_path)
    tree = outline.document_symbols(analysis, spec)[0]
    assert tree.name == "agent tree" and tree.detail == "from the root `boss`"
    assert [row[:3] for row in _flat(tree)[1:]] == [
        (1, "boss", "sequential"),
        (2, "first", "llm, sub-agent"),  # inline
        (2, "router", "router, sub-agent"),  # by name
        (3, "helper", "llm, sub-agent"),  # imported
        (3, "writer", "llm, sub-agent"),
        (4, "boss", "sequential, agent tool; a cycle back to `boss`"),
        (2, "planner", "planner, sub-agent"),
        (3, "researcher", "llm, worker's agent tool")]
    lines = {name: line for _, name, _, line in _flat(tree)}
    assert (lines["first"], lines["router"], lines["helper"]) == (10, 14, 17)  # 0-based
    assert _contained(tree)


def test_an_imported_file_shows_the_tree_at_its_own_agents(tmp_path: Path) -> None:
    analysis, _, shared = _tree(tmp_path)
    analysis.check(resolved(tmp_path / "spec.yaml"))
    tree = outline.document_symbols(analysis, shared)[0]
    helper = next(row for row in _flat(tree) if row[1] == "helper")
    assert helper[3] == 2  # its definition in shared.yaml
    assert _contained(tree)


def test_no_tree_for_a_spec_without_agents_or_that_does_not_parse(tmp_path: Path) -> None:
    analysis, spec, _ = _tree(tmp_path, "agentspec: 1\nname: x\nmodels: {a: b}\n")
    assert [s.name for s in outline.document_symbols(analysis, spec)] == ["models"]
    analysis, spec, _ = _tree(tmp_path, "agents: [\n")
    assert outline.document_symbols(analysis, spec) == []


def test_shared_children_stay_bounded(tmp_path: Path) -> None:
    """Each agent uses the next two as tools, 30 levels deep: 2**30 paths through the
    tree, built once per parent by ADK; the outline shows at most MAX_SYMBOLS of them."""
    agents = "".join(f"  a{i}:\n    instruction: Hi.\n    tools: [{{agent: a{i + 1}}}, "
                     f"{{agent: b{i + 1}}}]\n  b{i}:\n    instruction: Hi.\n"
                     f"    tools: [{{agent: a{i + 1}}}]\n" for i in range(30))
    text = f"agentspec: 1\nname: wide\nroot: a0\nagents:\n{agents}  a30: {{instruction: Hi.}}\n" \
        "  b30: {instruction: Hi.}\n"
    analysis, spec, _ = _tree(tmp_path, text)
    tree = outline.document_symbols(analysis, spec)[0]
    rows = _flat(tree)
    assert MAX_SYMBOLS // 2 < len(rows) <= MAX_SYMBOLS + 1
    assert any("more below, not shown" in detail for _, _, detail, _ in rows)
