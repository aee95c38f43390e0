"""Python modules read as source, never imported: where a module's file is, its syntax tree
(parsed once per file version), and the names its top level binds."""

from __future__ import annotations

import ast
import os
import stat
from dataclasses import dataclass
from functools import cache
from importlib.machinery import EXTENSION_SUFFIXES

__all__ = ["MAX_SOURCE", "Names", "SyntaxProblem", "imports_submodule", "module_file", "parsed",
           "top_names"]

#: module sources larger than this are not read (the reference is then judged at build)
MAX_SOURCE = 1_000_000


@dataclass(frozen=True)
class SyntaxProblem:
    """Why a module's source does not parse, and where."""

    message: str
    line: int
    col: int


def module_file(module: str, roots: tuple[str, ...]) -> tuple[str, bool] | None:
    """The source of `module` under `roots` (and whether it is a package), without import:
    as Python's path finder looks, a package (`m/__init__.py`) before a module (`m.py`) of
    one directory; None when a compiled module would be imported instead."""
    parts = module.split(".")
    for root in roots:
        base = os.path.join(root, *parts)
        init = os.path.join(base, "__init__.py")
        if os.path.isfile(init):
            return init, True
        if os.path.isdir(base) and _compiled(base, "__init__"):
            return None
        if _compiled(os.path.dirname(base), parts[-1]):
            return None
        if os.path.isfile(base + ".py"):
            return base + ".py", False
    return None


def _compiled(directory: str, stem: str) -> bool:
    """Whether `directory` holds an extension module `stem` (imported before a `.py`)."""
    return any(os.path.isfile(os.path.join(directory, stem + suffix))
               for suffix in EXTENSION_SUFFIXES)


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


def parsed(path: str) -> ast.Module | SyntaxProblem | None:
    """The syntax tree of a source file; None when it cannot be read or is too large."""
    stamp = _stamp(path)
    return None if stamp is None else _parse(path, stamp)


@cache
def _parse(path: str, stamp: tuple[int, int]) -> ast.Module | SyntaxProblem | None:
    """`stamp` (size, mtime) keys the cache, so a file that changes is read again."""
    if stamp[0] > MAX_SOURCE:
        return None
    try:  # never blocks: a FIFO put in the file's place is not read
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        with os.fdopen(descriptor, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            source = handle.read(MAX_SOURCE + 1)
    except OSError:
        return None
    try:
        return ast.parse(source, filename=path)
    except SyntaxError as error:
        return SyntaxProblem(error.msg, error.lineno or 1, error.offset or 1)
    except (ValueError, RecursionError, MemoryError) as error:  # NUL bytes, deep nesting
        return SyntaxProblem(str(error) or type(error).__name__, 1, 1)


@dataclass(frozen=True)
class Names:
    """The names a module's top level binds when it runs; `open`: it may bind any name (a
    star import, a module-level `__getattr__`, names written through `globals()`, `exec`,
    `sys.modules`...), so a missing one proves nothing."""

    bound: frozenset[str]
    open: bool


@cache
def top_names(tree: ast.Module) -> Names:
    bound: set[str] = set()
    star = _block(tree.body, bound, definite=True)
    return Names(frozenset(bound), star or "__getattr__" in bound or _dynamic(tree))


def _block(body: list[ast.stmt], bound: set[str], *, definite: bool) -> bool:
    """Add what `body` binds to `bound`, in order; `definite`: every statement of it runs
    (the module's own level), so a `del` there unbinds. True when it star-imports."""
    star = False
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            # `global x` in a function binds x at the top level when the function runs
            bound.update(name for inner in ast.walk(node) if isinstance(inner, ast.Global)
                         for name in inner.names)
        elif isinstance(node, ast.Import):
            bound.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            star |= any(alias.name == "*" for alias in node.names)
            bound.update(alias.asname or alias.name for alias in node.names
                         if alias.name != "*")
        elif isinstance(node, ast.Delete):
            if definite:
                bound.difference_update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and node.value is None:
            continue  # `name: int` only annotates
        elif isinstance(node, ast.If) and _type_checking(node.test):
            star |= _block(node.orelse, bound, definite=False)  # the body never runs
        else:
            star |= _compound(node, bound)
    return star


def _compound(node: ast.stmt, bound: set[str]) -> bool:
    """The names a statement binds in its own expressions and in its nested blocks (which
    may or may not run, so they only add)."""
    star = False
    for field, value in ast.iter_fields(node):
        if field in ("body", "orelse", "finalbody"):
            star |= _block(value, bound, definite=False)
        elif field == "handlers":  # `except E as e` unbinds e when the handler ends
            for handler in value:
                star |= _block(handler.body, bound, definite=False)
        elif field == "cases":
            for case in value:
                _expression_names(case.pattern, bound)
                star |= _block(case.body, bound, definite=False)
        elif isinstance(value, (ast.AST, list)):
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, ast.AST):
                    _expression_names(item, bound)
    return star


def _expression_names(node: ast.AST, bound: set[str]) -> None:
    """Assignment, for/with targets, walrus, `type X = ...`, match captures; a
    comprehension's own names too, which can only make a missing name pass."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
            bound.add(inner.id)
        elif isinstance(inner, (ast.MatchAs, ast.MatchStar)) and inner.name:
            bound.add(inner.name)
        elif isinstance(inner, ast.MatchMapping) and inner.rest:
            bound.add(inner.rest)


def _type_checking(test: ast.expr) -> bool:
    """`if TYPE_CHECKING:` / `if typing.TYPE_CHECKING:`, false whenever the module runs."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


#: names through which code can bind a module's names without a binding statement
_DYNAMIC_NAMES = frozenset({"globals", "locals", "vars", "exec", "eval", "__builtins__"})
_DYNAMIC_ATTRIBUTES = frozenset({"modules", "__dict__"})


def _dynamic(tree: ast.Module) -> bool:
    """Whether the module may bind names the source does not show: `globals()[...] = ...`,
    `exec(...)`, `setattr(sys.modules[__name__], ...)`, `vars()`, `locals()`, or its own
    module object reached through `import_module(__name__)`. Anywhere in the module, as a
    function its top level calls may do it; such a module is not judged."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in _DYNAMIC_NAMES:
            return True
        if isinstance(node, ast.Attribute) and node.attr in _DYNAMIC_ATTRIBUTES:
            return True
        if isinstance(node, ast.Call) and _called(node.func) in ("import_module", "__import__") \
                and any(isinstance(inner, ast.Name) and inner.id in ("__name__", "__spec__")
                        for arg in node.args for inner in ast.walk(arg)):
            return True
    return False


def _called(func: ast.expr) -> str | None:
    return func.id if isinstance(func, ast.Name) else \
        func.attr if isinstance(func, ast.Attribute) else None


#: the package files read to find an import of a submodule
MAX_PACKAGE_FILES = 200


def imports_submodule(directory: str, package: str, name: str) -> bool:
    """Whether a module of the package in `directory` (named `package`) may import its
    submodule `name`, which makes `name` an attribute of the package: `from . import name`,
    `from .name import x`, `import package.name`... True when it cannot tell."""
    try:
        files = sorted(entry for entry in os.listdir(directory) if entry.endswith(".py"))
    except OSError:
        return True
    if len(files) > MAX_PACKAGE_FILES:
        return True
    wanted = f"{package}.{name}"
    for file in files:
        tree = parsed(os.path.join(directory, file))
        if not isinstance(tree, ast.Module):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(
                    f"{alias.name}.".startswith(f"{wanted}.") for alias in node.names):
                return True
            if isinstance(node, ast.ImportFrom):
                base = f"{package}.{node.module}" if node.level == 1 and node.module else \
                    package if node.level == 1 else node.module or ""
                if node.level > 1 or f"{base}.".startswith(f"{wanted}.") or (
                        base == package and any(a.name in (name, "*") for a in node.names)):
                    return True
    return False
