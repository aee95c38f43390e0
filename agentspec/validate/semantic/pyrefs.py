"""Python references: well formed, not into the standard library, findable without import."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path as FsPath

from agentspec.diagnostics import Related, codes, did_you_mean
from agentspec.kindapi import kind_for_spec
from agentspec.language.agents import LlmAgent, PythonSchema, WorkflowCallbacks
from agentspec.language.common import PYTHON_REF, is_reserved_word
from agentspec.language.models import RoutedModel
from agentspec.language.tools import PythonTool
from agentspec.parse import Path
from agentspec.project_files import display_name, is_dir, is_file, list_dir
from agentspec.pysource import (
    SyntaxProblem,
    imports_submodule,
    module_file,
    parsed,
    top_names,
)
from agentspec.source import Span
from agentspec.stdlib_boundary import is_refused_module, source_origin
from agentspec.validate.semantic.context import Context

__all__ = ["check_python_refs", "python_refs", "tool_refs"]

_FORM = re.compile(PYTHON_REF)


def tool_refs(tools: Iterable[object], path: Path) -> Iterator[tuple[Path, str]]:
    for index, tool in enumerate(tools):
        if isinstance(tool, PythonTool):
            yield (*path, index, "python"), tool.python


def _callback_refs(callbacks: WorkflowCallbacks | None, path: Path) -> Iterator[tuple[Path, str]]:
    for hook, refs in (callbacks.model_dump(exclude_none=True) if callbacks else {}).items():
        for index, ref in enumerate(refs):
            yield (*path, "callbacks", hook, index), ref


def _agent_refs(name: str, agent: object) -> Iterator[tuple[Path, str]]:
    base: Path = ("agents", name)
    yield from _callback_refs(getattr(agent, "callbacks", None), base)
    if isinstance(agent, LlmAgent):
        yield from tool_refs(agent.tools or (), (*base, "tools"))
        for field in ("output_schema", "input_schema"):
            schema = getattr(agent, field)
            if isinstance(schema, PythonSchema):
                yield (*base, field, "python"), schema.python
    yield from kind_for_spec(agent).python_refs(name, agent)


def python_refs(ctx: Context) -> Iterator[tuple[Path, str]]:
    """Every python reference of the spec, with its path."""
    for name, tool in (ctx.spec.tools or {}).items():
        if isinstance(tool, PythonTool):
            yield ("tools", name, "python"), tool.python
    for index, plugin in enumerate(ctx.spec.plugins or ()):
        yield ("plugins", index, "python"), plugin.python
    for name, model in (ctx.spec.models or {}).items():
        if isinstance(model, RoutedModel) and model.route.python is not None:
            yield ("models", name, "route", "python"), model.route.python
    for name, agent in ctx.agents():
        yield from _agent_refs(name, agent)


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
    checked: list[tuple[str, Span, str]] = []  # (reference, where, the file's directory)
    for path, ref in python_refs(ctx):
        span = ctx.at(*path)
        if "${" in ref:  # a reference decided at run time could point anywhere
            ctx.report(codes.PYTHON_REF_MALFORMED(
                f"`{ref}`: python references cannot use `${{...}}`", span,
                hint="write the reference literally"))
            continue
        if not _FORM.fullmatch(ref):  # `$` alone would let a final line break through
            ctx.report(codes.PYTHON_REF_MALFORMED(
                f"`{ref}` is not a python reference", span,
                hint="write `package.module:attribute`"))
            continue
        reserved = next((p for p in re.split("[.:]", ref) if is_reserved_word(p)), None)
        if reserved is not None:  # `from class import None` is no Python
            ctx.report(codes.PYTHON_REF_MALFORMED(
                f"`{ref}` names `{reserved}`, a reserved word in Python", span,
                hint="a module or attribute cannot be called that; rename it"))
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
            continue
        reached = source_origin(module, tuple(ref.split(":", 1)[1].split(".")), roots)
        if reached is not None:  # `mytools:os.system` where mytools imports os
            ctx.report(codes.PYTHON_REF_STDLIB(
                f"`{ref}` leads into the standard library module `{reached}` through "
                f"`{module}`'s imports", span,
                hint="wrap what you need in a function of your own module"))
            continue
        checked.append((ref, span, roots[0]))
    modules = frozenset(ref.split(":", 1)[0] for ref, _, _ in checked)
    for ref, span, directory in checked:
        _check_source(ctx, ref, span, directory, modules)
    _check_clashes(ctx, checked)


def _check_source(ctx: Context, ref: str, span: Span, directory: str,
                  modules: frozenset[str]) -> None:
    """The spec's own module (beside the spec) parses and binds the referenced name."""
    module, attr = ref.split(":", 1)
    found = module_file(module, (directory,))
    if found is None or ctx.project.judge(FsPath(found[0])) != "inside":
        return  # installed elsewhere, compiled, or (a link) out of the project: build judges
    tree = parsed(found[0])
    if tree is None:
        return  # unreadable or too large
    shown = display_name(FsPath(found[0]))
    if isinstance(tree, SyntaxProblem):
        place = Span.at(shown, tree.line, tree.col)
        ctx.report(codes.PYTHON_MODULE_SYNTAX(
            f"module `{module}` does not parse: {tree.message} ({shown}:{tree.line}:"
            f"{tree.col})", span, hint=f"fix the syntax error in `{shown}`",
            related=[Related(place, "the syntax error")]))
        return
    names = top_names(tree)
    head = attr.split(".")[0]
    if names.open or head in names.bound:
        return  # bound, or possibly bound
    if found[1] and module_file(f"{module}.{head}", (directory,)) is not None:
        # build takes `getattr(import_module(module), head)`: a submodule is an attribute
        # of its package once something imports it
        if f"{module}.{head}" in modules or any(m.startswith(f"{module}.{head}.")
                                                 for m in modules) or \
                imports_submodule(os.path.dirname(found[0]), module, head):
            return
        ctx.report(codes.PYTHON_NAME_NOT_FOUND(
            f"package `{module}` ({shown}) does not import its submodule `{head}`, so "
            f"`{module}` has no attribute `{head}` when it is imported", span,
            hint=f"import it in `{shown}` (`from . import {head}`), or name what you need "
            f"in it: `{module}.{head}:NAME`"))
        return
    ctx.report(codes.PYTHON_NAME_NOT_FOUND(
        f"module `{module}` ({shown}) defines no `{head}`", span,
        hint=did_you_mean(head, names.bound) or f"define `{head}` in `{shown}`"))


def _check_clashes(ctx: Context, checked: list[tuple[str, Span, str]]) -> None:
    """Files of one spec in different directories put each directory on one `sys.path`
    when it is built, so a top-level module name is one module there: references from two
    directories that find it in different places cannot both get theirs."""
    places: dict[str, dict[str, tuple[str, Span]]] = {}  # module -> place -> first ref
    for ref, span, directory in checked:
        top = ref.split(":", 1)[0].split(".")[0]
        place = _place(top, directory)
        seen = places.setdefault(top, {})
        if place in seen:
            continue
        if seen:
            other, (other_ref, other_span) = next(iter(seen.items()))
            ctx.report(codes.PYTHON_MODULE_CLASH(
                f"`{ref}` means the module `{top}` of {place}, and `{other_ref}` that of "
                f"{other}: the built agent imports one module `{top}` for both", span,
                hint="rename one of the modules, or keep the spec's python code in one "
                "directory", related=[Related(other_span, f"the other reference to `{top}`")]))
        seen[place] = (ref, span)


def _place(top: str, directory: str) -> str:
    """Where a top-level module is found for a file in `directory`, as a message shows it."""
    if not _module_exists(top, (directory,)):
        return "the Python path"
    found = module_file(top, (directory,))
    return f"`{display_name(FsPath(found[0]) if found else FsPath(directory, top))}`"
