"""The package's import graph, stage by stage: no stage imports a later one (the pipeline
is parse -> resolve -> validate -> ir -> emit -> build -> review, with cli on top; `language`,
the language's models, comes before all of them, and a kind module (`kinds`) holds parts of
several stages),
the runtime imports nothing of the compiler, and `contract` (what both agree on) imports
nothing else. Imports under `if TYPE_CHECKING:` are not edges (they never run)."""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "agentspec"

#: the compiler's stages in pipeline order: a stage may import its own and earlier ones
ORDER = ("core", "language", "parse", "resolve", "kinds", "validate", "ir", "emit", "build",
         "bundle", "review", "adkimport", "testing", "evaluation", "init", "cli")
CORE = {"source", "diagnostics", "project_files", "pysource", "safefs", "stdlib_boundary",
        "__init__"}
#: the parts of later stages a kind module holds (its node types, plan values, diff rules)
KIND_PARTS = {"agentspec.ir.tree", "agentspec.ir.plan", "agentspec.ir.values",
              "agentspec.review.rule", "agentspec.review.changes"}
#: stages that build runtime objects or name runtime code
USES_RUNTIME = {"emit", "build", "testing", "evaluation", "cli"}


def stage(module: str) -> str:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    if top == "__main__":
        return "cli"
    return "core" if top in CORE else top


def _runtime_imports(tree: ast.AST) -> list[str]:
    """Modules imported by code that runs (not under `if TYPE_CHECKING:`)."""
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and \
                node.test.id == "TYPE_CHECKING":
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return [m for m in found if m == "agentspec" or m.startswith("agentspec.")]


def module_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(relative.parts[:-1] if relative.name == "__init__" else relative.parts)
        graph[name] = set(_runtime_imports(ast.parse(path.read_text(encoding="utf-8"))))
    return graph


def stage_graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for module, imports in module_graph().items():
        for target in imports:
            if stage(target) != stage(module):
                edges[stage(module)].add(stage(target))
    return dict(edges)


def backward_imports() -> list[str]:
    problems = []
    for module, imports in sorted(module_graph().items()):
        here = stage(module)
        if here not in (*ORDER, "runtime", "contract"):
            problems.append(f"{module}: a stage of its own; place `{here}` in ORDER")
            continue
        for target in sorted(imports):
            there = stage(target)
            if here == there:
                continue
            if here == "contract" or (there not in ("contract",) and here == "runtime"):
                problems.append(f"{module} -> {target}")
            elif there == "runtime":
                if here not in USES_RUNTIME:
                    problems.append(f"{module} -> {target}")
            elif there == "contract" or here == "kinds" and target in KIND_PARTS:
                continue
            elif ORDER.index(there) > ORDER.index(here):
                problems.append(f"{module} -> {target}")
    return problems


def test_no_stage_imports_a_later_one() -> None:
    assert backward_imports() == []


def test_the_graph_is_what_the_pipeline_says() -> None:
    edges = stage_graph()
    assert "runtime" not in edges.get("language", set()) | edges.get("ir", set())
    assert edges.get("runtime", set()) <= {"contract"}
    assert "contract" not in edges


def test_the_backward_imports_of_before_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    graph = module_graph()
    graph["agentspec.language.effective"].add("agentspec.runtime.backends.state")
    graph["agentspec.ir.values"].add("agentspec.runtime.placeholders")
    graph["agentspec.runtime.router"].add("agentspec.language.agents")
    monkeypatch.setattr(sys.modules[__name__], "module_graph", lambda: graph)
    assert backward_imports() == [
        "agentspec.ir.values -> agentspec.runtime.placeholders",
        "agentspec.language.effective -> agentspec.runtime.backends.state",
        "agentspec.runtime.router -> agentspec.language.agents"]


def test_imports_under_type_checking_are_no_edges() -> None:
    tree = ast.parse("from agentspec.runtime.models import litellm\n"
                     "if TYPE_CHECKING:\n    from agentspec.cli import cli\n")
    assert _runtime_imports(tree) == ["agentspec.runtime.models"]
    assert stage("agentspec.language.effective") == "language" and stage("agentspec.runtime.x") == \
        "runtime"


if __name__ == "__main__":  # print the stage graph (for the docs)
    for source, targets in sorted(stage_graph().items(), key=lambda e: (
            ORDER.index(e[0]) if e[0] in ORDER else len(ORDER), e[0])):
        ordered = sorted(targets, key=lambda t: ORDER.index(t) if t in ORDER else -1)
        print(f"{source:<9} -> {', '.join(ordered)}")
