"""Python modules read as source, never imported: where a module's file is, its syntax tree
(parsed once per file version), and the names its top level binds."""

from __future__ import annotations

import ast
import os
import stat
from dataclasses import dataclass
from functools import cache

__all__ = ["MAX_SOURCE", "Names", "SyntaxProblem", "module_file", "parsed", "top_names"]

#: module sources larger than this are not read (the reference is then judged at build)
MAX_SOURCE = 1_000_000


@dataclass(frozen=True)
class SyntaxProblem:
    """Why a module's source does not parse, and where."""

    message: str
    line: int
    col: int


def module_file(module: str, roots: tuple[str, ...]) -> tuple[str, bool] | None:
    """The source of `module` under `roots` (and whether it is a package), without import."""
    parts = module.split(".")
    for root in roots:
        base = os.path.join(root, *parts)
        for candidate, package in ((base + ".py", False),
                                   (os.path.join(base, "__init__.py"), True)):
            if os.path.isfile(candidate):
                return candidate, package
    return None


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
    """The names a module's top level binds; `open`: it may bind any name (a star import,
    a module-level `__getattr__`), so a missing one proves nothing."""

    bound: frozenset[str]
    open: bool


@cache
def top_names(tree: ast.Module) -> Names:
    bound: set[str] = set()
    star = False
    todo: list[ast.AST] = list(tree.body)
    while todo:  # top-level statements and the blocks nested in them (if, try, with, ...)
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            # `global x` in a function binds x at the top level when the function runs
            bound.update(name for inner in ast.walk(node) if isinstance(inner, ast.Global)
                         for name in inner.names)
            continue
        if isinstance(node, ast.Import):
            bound.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            star |= any(alias.name == "*" for alias in node.names)
            bound.update(alias.asname or alias.name for alias in node.names
                         if alias.name != "*")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            # assignments, for/with targets, walrus, `type X = ...`; a comprehension's own
            # names too, which can only make a missing name pass, never a bound one fail
            bound.add(node.id)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
        todo.extend(ast.iter_child_nodes(node))
    return Names(frozenset(bound), star or "__getattr__" in bound)
