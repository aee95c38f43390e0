"""The package's import graph (`tools/import_graph.py`): no stage imports a later one, with
no exception; no module takes part in a circle; the runtime imports nothing of the compiler;
`contract` imports nothing else; the architecture page's import list is the graph's."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tools_import_graph",
                                                  ROOT / "tools" / "import_graph.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


graph_tool = _load()


def test_no_stage_imports_a_later_one() -> None:
    assert graph_tool.backward_imports() == []


def test_no_module_takes_part_in_a_circle() -> None:
    assert graph_tool.circles(graph_tool.module_graph()) == []


def test_a_circle_is_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e2"}, "e2": {"e"}}
    assert graph_tool.circles(graph) == [["a", "b", "c"], ["e", "e2"]]


def test_the_stages_never_import_the_kinds() -> None:
    """The kinds are leaves: a stage finds them in `agentspec.kindapi`'s table."""
    graph = graph_tool.module_graph()
    importers = {module for module, targets in graph.items()
                 if any(t == "agentspec.kinds" or t.startswith("agentspec.kinds.")
                        for t in targets)}
    assert {graph_tool.stage(module) for module in importers} <= {"kinds"}


def test_the_graph_is_what_the_pipeline_says() -> None:
    edges = graph_tool.stage_graph()
    assert "runtime" not in edges.get("language", set()) | edges.get("ir", set())
    assert edges.get("runtime", set()) <= {"contract"}
    assert "contract" not in edges


def test_the_backward_imports_of_before_are_refused() -> None:
    graph = graph_tool.module_graph()
    graph["agentspec.language.effective"].add("agentspec.runtime.backends.state")
    graph["agentspec.ir.values"].add("agentspec.runtime.placeholders")
    graph["agentspec.runtime.router"].add("agentspec.language.agents")
    graph["agentspec.ir.lower"].add("agentspec.kinds.llm")
    assert graph_tool.backward_imports(graph) == [
        "agentspec.ir.lower -> agentspec.kinds.llm",
        "agentspec.ir.values -> agentspec.runtime.placeholders",
        "agentspec.language.effective -> agentspec.runtime.backends.state",
        "agentspec.runtime.router -> agentspec.language.agents"]


def test_imports_under_type_checking_are_no_edges() -> None:
    tree = ast.parse("from agentspec.runtime.models import litellm\n"
                     "if TYPE_CHECKING:\n    from agentspec.cli import cli\n")
    assert graph_tool.runtime_imports(tree) == ["agentspec.runtime.models"]
    assert graph_tool.runtime_imports(tree, {"agentspec.runtime.models.litellm"}) == [
        "agentspec.runtime.models.litellm"]
    assert graph_tool.stage("agentspec.language.effective") == "language"
    assert graph_tool.stage("agentspec.runtime.x") == "runtime"


def test_the_architecture_page_lists_the_graph() -> None:
    page = graph_tool.PAGE.read_text(encoding="utf-8")
    assert page == graph_tool.page_with_list(page, graph_tool.stage_lines()), \
        "run `python tools/import_graph.py --write`"


@pytest.mark.slow  # the whole package's import graph, three times (about 6 s of CPU)
def test_a_stale_page_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "architecture.md"
    page.write_text(f"# A\n\n{graph_tool.BEGIN}\n```\nparse -> core\n```\n"
                    f"{graph_tool.END}\n\nafter\n", encoding="utf-8")
    monkeypatch.setattr(graph_tool, "PAGE", page)
    monkeypatch.setattr(graph_tool, "ROOT", tmp_path)
    assert graph_tool.main(["--check"]) == 1
    assert "stale" in capsys.readouterr().err
    assert graph_tool.main(["--write"]) == 0
    text = page.read_text(encoding="utf-8")
    assert text.startswith("# A\n\n") and text.endswith("\n\nafter\n")
    assert "\n".join(graph_tool.stage_lines()) in text
    assert graph_tool.main(["--check"]) == 0
