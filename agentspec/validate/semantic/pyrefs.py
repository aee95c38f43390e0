"""Python references: well formed, not into the standard library, findable without import."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path as FsPath

from agentspec.diagnostics import codes
from agentspec.parse import Path
from agentspec.paths import is_dir, is_file, list_dir
from agentspec.spec.common import PYTHON_REF
from agentspec.validate.semantic.context import Context

__all__ = ["check_python_refs", "is_refused_module"]

_FORM = re.compile(PYTHON_REF)
_REFUSED = frozenset(sys.stdlib_module_names) | {"builtins", "__main__", "__future__"}
_CALLBACK_PARENTS = {"callbacks"}
_FREE_FORM = {"args", "env", "headers", "map", "output_schema", "input_schema"}


def is_refused_module(module: str) -> bool:
    return module.split(".")[0] in _REFUSED


def _refs(ctx: Context) -> Iterator[tuple[Path, str]]:
    for path, value in ctx.walk_data():
        if not isinstance(value, str) or not path or _FREE_FORM.intersection(path[:-1]) - {
                "output_schema", "input_schema"} or _in_schema(path):
            continue
        if path[-1] == "python" or (len(path) >= 3 and path[-3] in _CALLBACK_PARENTS
                                    and isinstance(path[-1], int)):
            yield path, value


def _in_schema(path: Path) -> bool:
    """`{python: ...}` directly under a schema field is a reference; deeper it is schema text."""
    for field in ("output_schema", "input_schema"):
        if field in path and path.index(field) != len(path) - 2:
            return True
    return False


@cache
def _module_exists(module: str, roots: tuple[str, ...]) -> bool:
    parts = module.split(".")
    for root in roots:
        base = FsPath(root).joinpath(*parts)
        if is_file(base.with_suffix(".py")) or is_dir(base):
            return True
        if any(p.name.startswith(f"{parts[-1]}.") and p.suffix in (".so", ".pyd")
               for p in list_dir(base.parent)):
            return True
    return False


def check_python_refs(ctx: Context) -> None:
    for path, ref in _refs(ctx):
        span = ctx.at(*path)
        if "${env." in ref:
            continue
        if not _FORM.match(ref):
            ctx.report(codes.PYTHON_REF_MALFORMED(
                f"`{ref}` is not a python reference", span,
                hint="write `package.module:attribute`"))
            continue
        module = ref.split(":", 1)[0]
        if is_refused_module(module):
            ctx.report(codes.PYTHON_REF_STDLIB(
                f"`{ref}` points into the standard library module `{module.split('.')[0]}`",
                span, hint="wrap what you need in a function of your own module"))
            continue
        roots = (str(ctx.directory_of(span)), *(p for p in sys.path if p))
        if not _module_exists(module, roots):
            ctx.report(codes.PYTHON_MODULE_NOT_FOUND(
                f"module `{module}` is not beside the spec nor on the Python path", span,
                hint=f"create `{module.replace('.', '/')}.py` next to the spec, or install "
                "its package"))
