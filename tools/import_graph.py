"""The package's import graph, module by module and stage by stage, and the stage list of the
architecture page (`docs/architecture.md`), which is generated from it.

    python tools/import_graph.py          # print the stage list
    python tools/import_graph.py --write  # write it into docs/architecture.md
    python tools/import_graph.py --check  # exit 1 when the page's list is stale

The pipeline is parse -> resolve -> validate -> ir -> emit -> build -> review; `kindapi` (the
kind protocol and the table the stages look kinds up in) and `language` (the language's
models) come before all of them, the kinds (`kinds`) after them (a kind module holds parts of
several stages), and cli on top. The runtime imports nothing of the compiler, and `contract`
(what both agree on) imports nothing else. Imports under `if TYPE_CHECKING:` are not edges
(they never run); `from package import module` is an edge to that module.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "agentspec"
PAGE = ROOT / "docs" / "architecture.md"
BEGIN, END = "<!-- import list: tools/import_graph.py -->", "<!-- end of import list -->"

#: the compiler's stages in pipeline order: a stage may import its own and earlier ones
ORDER = ("core", "kindapi", "language", "parse", "resolve", "validate", "ir", "emit", "compiler",
         "bundle", "review", "kinds", "adkimport", "testing", "evaluation", "init", "api", "lsp",
         "cli")
CORE = {"source", "diagnostics", "project_files", "pysource", "safefs", "stdlib_boundary",
        "usercache", "__init__"}
#: stages that build runtime objects or name runtime code
USES_RUNTIME = {"emit", "compiler", "testing", "evaluation", "cli"}


def stage(module: str) -> str:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    if top == "__main__":
        return "cli"
    return "core" if top in CORE else top


def module_name(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    return ".".join(relative.parts[:-1] if relative.name == "__init__" else relative.parts)


def runtime_imports(tree: ast.AST, modules: set[str] | None = None) -> list[str]:
    """Modules imported by code that runs (not under `if TYPE_CHECKING:`); with `modules`,
    `from package import name` names the module `package.name` when it is one."""
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and \
                node.test.id == "TYPE_CHECKING":
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.append(submodule if modules and submodule in modules else node.module)
        elif isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return list(dict.fromkeys(m for m in found if m == "agentspec" or
                              m.startswith("agentspec.")))


def module_graph() -> dict[str, set[str]]:
    paths = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}
    return {name: set(runtime_imports(ast.parse(path.read_text(encoding="utf-8")), set(paths)))
            for name, path in paths.items()}


def stage_graph(graph: dict[str, set[str]] | None = None) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for module, imports in (module_graph() if graph is None else graph).items():
        for target in imports:
            if stage(target) != stage(module):
                edges[stage(module)].add(stage(target))
    return dict(edges)


def backward_imports(graph: dict[str, set[str]] | None = None) -> list[str]:
    problems = []
    for module, imports in sorted((module_graph() if graph is None else graph).items()):
        here = stage(module)
        if here not in (*ORDER, "runtime", "contract"):
            problems.append(f"{module}: a stage of its own; place `{here}` in ORDER")
            continue
        for target in sorted(imports):
            there = stage(target)
            if here == there or there == "contract" and here != "contract":
                continue
            refused = here in ("contract", "runtime") or (
                here not in USES_RUNTIME if there == "runtime"
                else ORDER.index(there) > ORDER.index(here))
            if refused:
                problems.append(f"{module} -> {target}")
    return problems


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, targets = work[-1]
            target = next((t for t in targets if t in graph), None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    work.append((target, iter(sorted(graph[target]))))
                elif target in stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = [stack.pop()]
                while part[-1] != node:
                    part.append(stack.pop())
                if len(part) > 1:
                    found.append(sorted(part))
    return found


def stage_lines(graph: dict[str, set[str]] | None = None) -> list[str]:
    """`stage -> the stages it imports`, in pipeline order (the architecture page's list)."""
    edges = stage_graph(graph)

    def position(name: str) -> tuple[int, str]:
        return (ORDER.index(name) if name in ORDER else -1), name

    width = max(len(name) for name in edges)
    return [f"{source:<{width}} -> {', '.join(sorted(targets, key=position))}"
            for source, targets in sorted(edges.items(), key=lambda e: (
                e[0] in ("runtime", "contract"), position(e[0])))]


def page_with_list(page: str, lines: list[str]) -> str:
    """The architecture page with its import list replaced by `lines`."""
    head, begin, rest = page.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise SystemExit(f"{PAGE}: the markers {BEGIN} and {END} are missing")
    return f"{head}{BEGIN}\n```\n" + "\n".join(lines) + f"\n```\n{END}{tail}"


def main(argv: list[str]) -> int:
    lines = stage_lines()
    if not argv:
        print("\n".join(lines))
        return 0
    page = PAGE.read_text(encoding="utf-8")
    wanted = page_with_list(page, lines)
    if argv == ["--check"]:
        if page != wanted:
            print(f"{PAGE.relative_to(ROOT)} is stale: run `python tools/import_graph.py "
                  "--write`", file=sys.stderr)
            return 1
        return 0
    if argv == ["--write"]:
        PAGE.write_text(wanted, encoding="utf-8")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
