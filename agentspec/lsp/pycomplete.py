"""Completion of python references (`module:attribute`) where a spec expects one: the value
of a `python:` key (tools, route functions, schemas, plugins) and the hooks of `callbacks`.
Module paths come from the project's `.py` files beside the spec; attribute names from the
module's syntax tree (`pysource.parsed`: read as text, bounded, never imported)."""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from pathlib import Path

from lsprotocol import types as lsp

from agentspec.lsp.cursor import Context
from agentspec.project_files import Project
from agentspec.pysource import SyntaxProblem, module_file, parsed

__all__ = ["python_completion"]

#: what a walk for modules looks at: folders this deep below the spec, this many folder
#: entries, this many names found
_DEPTH = 4
_MAX_ENTRIES = 5000
_MAX_MODULES = 500
_SKIP = {"node_modules", "venv", "__pycache__", "site-packages", "build", "dist"}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: the reference typed so far, at the end of the text before the cursor
_TYPED = re.compile(r"[A-Za-z0-9_.]*(?::[A-Za-z0-9_.]*)?$")
_PYTHON_KEY = re.compile(r"\bpython[ \t]*:[ \t]*['\"]?[A-Za-z0-9_.:]*$")


def _expects_python(ctx: Context) -> bool:
    """Whether the cursor is on a value that is a python reference."""
    if _PYTHON_KEY.search(ctx.line_prefix) or ctx.value_of == "python":
        return True
    on_value = ctx.value_of is not None or ctx.in_flow
    return on_value and ("callbacks" in ctx.path or ctx.value_of == "callbacks"
                         or re.search(r"\bcallbacks[ \t]*:", ctx.line_prefix) is not None)


def python_completion(spec: Path, ctx: Context, row: int, column: int
                      ) -> list[lsp.CompletionItem] | None:
    """The modules or attributes for the reference under the cursor; None when the cursor
    is not on a python reference."""
    if not _expects_python(ctx):
        return None
    typed = _TYPED.search(ctx.line_prefix)
    text = typed.group(0) if typed else ""
    project = Project.of(spec, None)
    directory = spec.parent
    if ":" in text:
        module, attribute = text.split(":", 1)
        start = column - len(attribute)
        return [_item(name, kind, row, start, column)
                for name, kind in _attributes(module, directory, project)]
    return [_item(name, lsp.CompletionItemKind.Module, row, column - len(text), column)
            for name in _modules(directory, project)]


def _item(name: str, kind: lsp.CompletionItemKind, row: int, start: int,
          end: int) -> lsp.CompletionItem:
    # a text edit: `.` and `:` are not word characters to every editor
    edit = lsp.TextEdit(lsp.Range(lsp.Position(row, start), lsp.Position(row, end)), name)
    return lsp.CompletionItem(name, kind=kind, text_edit=edit, filter_text=name)


def _modules(directory: Path, project: Project) -> list[str]:
    """The dotted names of the modules and packages under `directory`, in the project
    (no link out of it), at most `_MAX_MODULES`, none in a hidden or tool folder."""
    found: list[str] = []
    for name in _walk(directory, (), project, 0, [_MAX_ENTRIES]):
        found.append(name)
        if len(found) >= _MAX_MODULES:
            break
    return sorted(found)


def _walk(directory: Path, prefix: tuple[str, ...], project: Project, depth: int,
          budget: list[int]) -> Iterator[str]:
    """`budget`: the folder entries left to look at, shared by the whole walk."""
    entries: list[os.DirEntry[str]] = []
    try:
        with os.scandir(directory) as scan:
            for entry in scan:
                budget[0] -= 1
                if budget[0] < 0:
                    break
                entries.append(entry)
    except OSError:
        return
    for entry in sorted(entries, key=lambda e: e.name):
        path = Path(entry.path)
        if entry.name.startswith(".") or entry.name in _SKIP:
            continue
        try:
            is_dir, is_file = entry.is_dir(), entry.is_file()
        except OSError:
            continue
        stem = entry.name[:-3] if is_file and entry.name.endswith(".py") else entry.name
        if not _IDENT.fullmatch(stem) or stem == "__init__" \
                or project.judge(path) == "outside":
            continue
        if is_file and entry.name.endswith(".py"):
            yield ".".join((*prefix, stem))
        elif is_dir and depth < _DEPTH and (path / "__init__.py").is_file():
            yield ".".join((*prefix, stem))
            yield from _walk(path, (*prefix, stem), project, depth + 1, budget)


def _attributes(module: str, directory: Path, project: Project
                ) -> list[tuple[str, lsp.CompletionItemKind]]:
    """The names the module's top level defines, from its syntax tree (never imported);
    nothing for a module outside the project, too large or that does not parse."""
    if not all(_IDENT.fullmatch(part) for part in module.split(".")):
        return []
    found = module_file(module, (str(directory),))
    if found is None or project.judge(Path(found[0])) != "inside":
        return []
    tree = parsed(found[0])
    if tree is None or isinstance(tree, SyntaxProblem):
        return []
    names: dict[str, lsp.CompletionItemKind] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.setdefault(node.name, lsp.CompletionItemKind.Function)
        elif isinstance(node, ast.ClassDef):
            names.setdefault(node.name, lsp.CompletionItemKind.Class)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    names.setdefault(target.id, lsp.CompletionItemKind.Variable)
    return sorted((n, k) for n, k in names.items() if not n.startswith("__"))
