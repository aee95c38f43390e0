"""The standard library boundary: python references must not reach it, however they are
written. `validate` follows a reference through the source of the modules it names (their
`import`s, `from ... import`s and aliases) without importing anything; `build`, which
imports, checks what the object it got really is."""

from __future__ import annotations

import ast
import inspect
import sys
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any

from agentspec.pysource import module_file, parsed

__all__ = ["is_refused_module", "live_origin", "source_origin"]

_REFUSED = frozenset(sys.stdlib_module_names) | {"builtins", "__main__", "__future__"}
#: modules and attributes followed for one reference at most
MAX_STEPS = 64


def is_refused_module(module: str) -> bool:
    return module.split(".")[0] in _REFUSED


def live_origin(value: Any) -> str | None:
    """The standard-library module a live object comes from, or None: a module's name, or
    the `__module__` of a function, method or class (an instance is the code that made it)."""
    if isinstance(value, ModuleType):
        module = value.__name__
    elif inspect.isroutine(value) or isinstance(value, type):
        module = getattr(value, "__module__", None) or ""
    else:
        return None
    return module if is_refused_module(module) else None


@dataclass(frozen=True)
class _Binding:
    """What a module-level name is bound to: a module (`import x`), a name of a module
    (`from x import y`), a dotted name of the same module (`y = x.y`), names of a module it
    star-imports (`from x import *`, under the name `*`), or something defined here."""

    kind: str  # module | from | alias | star | local (defined here: code of its own)
    target: str = ""
    path: tuple[str, ...] = ()


def _dotted(node: ast.expr) -> tuple[str, ...] | None:
    if isinstance(node, ast.Name):
        return (node.id,)
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else (*head, node.attr)
    return None


def _base(module: str, package: bool, level: int) -> str:
    """The package a relative import of `level` dots starts from."""
    parts = module.split(".") if package else module.split(".")[:-1]
    return ".".join(parts[: len(parts) - (level - 1)] if level > 1 else parts)


def _statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """Module-level statements, including those inside `if`, `try`, `with` and loops."""
    found: list[ast.stmt] = []
    for node in body:
        found.append(node)
        if isinstance(node, (ast.If, ast.With, ast.For, ast.While)):
            found += _statements(node.body) + _statements(getattr(node, "orelse", []))
        elif isinstance(node, (ast.Try, ast.TryStar)):
            found += _statements(node.body) + _statements(node.orelse) + _statements(
                node.finalbody)
            for handler in node.handlers:
                found += _statements(handler.body)
    return found


def _bind(node: ast.stmt, module: str, package: bool,
          bindings: dict[str, list[_Binding]]) -> None:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                bindings.setdefault(alias.asname, []).append(_Binding("module", alias.name))
            else:
                top = alias.name.split(".")[0]
                bindings.setdefault(top, []).append(_Binding("module", top))
    elif isinstance(node, ast.ImportFrom):
        source = node.module or ""
        if node.level:
            base = _base(module, package, node.level)
            source = f"{base}.{source}".strip(".") if source else base
        for alias in node.names:
            if alias.name == "*":
                bindings.setdefault("*", []).append(_Binding("star", source))
            else:
                bindings.setdefault(alias.asname or alias.name, []).append(
                    _Binding("from", source, (alias.name,)))
    elif isinstance(node, (ast.Assign, ast.AnnAssign)):
        path = _dotted(node.value) if node.value is not None else None
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    bindings.setdefault(name.id, []).append(
                        _Binding("alias", path=path) if path is not None and name is target
                        else _Binding("local"))
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        bindings.setdefault(node.name, []).append(_Binding("local"))


@cache
def _bindings(tree: ast.Module, module: str, package: bool) -> dict[str, list[_Binding]]:
    """The module-level bindings of a module's syntax tree."""
    bindings: dict[str, list[_Binding]] = {}
    for node in _statements(tree.body):
        _bind(node, module, package, bindings)
    return bindings


def source_origin(module: str, attrs: tuple[str, ...], roots: tuple[str, ...]) -> str | None:
    """The standard-library module that `module:attr.attr...` reaches through the source of
    the modules on the way (found under `roots`), or None when it stays in other code or the
    source cannot tell (a name made at run time, a compiled module)."""
    todo = [(module, attrs)]
    seen: set[tuple[str, tuple[str, ...]]] = set()
    while todo and len(seen) < MAX_STEPS:
        current, rest = todo.pop()
        if (current, rest) in seen or not current:
            continue
        seen.add((current, rest))
        if is_refused_module(current):
            return current.split(".")[0]
        found = module_file(current, roots) if rest else None
        tree = parsed(found[0]) if found is not None else None
        if found is None or not isinstance(tree, ast.Module):
            continue
        package = found[1]
        bindings = _bindings(tree, current, package)
        head, tail = rest[0], rest[1:]
        for binding in bindings.get(head, []):
            if binding.kind == "module":
                todo.append((binding.target, tail))
            elif binding.kind == "from":
                todo.append((binding.target, (*binding.path, *tail)))
            elif binding.kind == "alias":
                todo.append((current, (*binding.path, *tail)))
        if head not in bindings:
            if package:  # a submodule of the package
                todo.append((f"{current}.{head}", tail))
            todo += [(star.target, rest) for star in bindings.get("*", [])]
    return None
