"""Plan -> live ADK objects (the App, root agent inside)."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from importlib.machinery import PathFinder
from pathlib import Path
from typing import Any

from agentspec.ir.plan import (
    Binding,
    Call,
    DictOf,
    Env,
    Import,
    ListOf,
    Plan,
    Ref,
    SpecPath,
    Value,
)
from agentspec.runtime.env import expand
from agentspec.stdlib_boundary import live_origin

__all__ = ["ConstructionError", "StdlibObject", "objects", "resolve_import"]


class ConstructionError(Exception):
    """A binding failed to construct; `binding` says which spec line it came from."""

    def __init__(self, binding: Binding, cause: BaseException) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.binding = binding
        self.cause = cause


class StdlibObject(Exception):
    """A reference that, once imported, turned out to be a standard-library object."""

    def __init__(self, symbol: Import, module: str) -> None:
        super().__init__(f"`{symbol.module}:{symbol.name}` is an object of the standard "
                         f"library module `{module}`")
        self.module = module


def _modules(value: Value) -> Iterator[str]:
    """The modules a plan value imports from."""
    if isinstance(value, Import):
        yield value.module
    elif isinstance(value, Call):
        yield value.callee.module
        for item in (*value.args, *(v for _, v in value.kwargs)):
            yield from _modules(item)
    elif isinstance(value, ListOf):
        for item in value.items:
            yield from _modules(item)
    elif isinstance(value, DictOf):
        for _, item in value.items:
            yield from _modules(item)


def _forget_stale(name: str, directories: list[str]) -> None:
    """A module of the spec's own folders that this process imported from somewhere else
    (another project built earlier in the same process: an editor, a test run, the Python
    API) is dropped, with its submodules, so the spec's own file is imported, as it would be
    in a fresh process."""
    loaded = sys.modules.get(name)
    if loaded is None or not directories:
        return
    found = PathFinder.find_spec(name, directories)
    if found is None:
        return  # not one of the spec's: an installed package stays as it is
    where = getattr(loaded, "__file__", None) or next(iter(getattr(loaded, "__path__", [])), None)
    if where is not None and found.origin is not None and \
            os.path.realpath(where) == os.path.realpath(found.origin):
        return
    if where is not None and found.submodule_search_locations and \
            os.path.realpath(where) in map(os.path.realpath, found.submodule_search_locations):
        return
    for loaded_name in [n for n in sys.modules if n == name or n.startswith(name + ".")]:
        del sys.modules[loaded_name]


def resolve_import(symbol: Import) -> Any:
    """The object `symbol` names; refused when it is the standard library's, however the
    reference reached it (`mytools:os.system`, a name `mytools` imported from `os`)."""
    value: Any = importlib.import_module(symbol.module)
    for part in symbol.name.split("."):
        value = getattr(value, part)
    origin = live_origin(value)
    if origin is not None:
        raise StdlibObject(symbol, origin)
    return value


def _evaluate(value: Value, scope: dict[str, Any], spec_dir: Path) -> Any:
    if isinstance(value, Import):
        return resolve_import(value)
    if isinstance(value, Ref):
        return scope[value.var]
    if isinstance(value, Env):
        return expand(value.template)
    if isinstance(value, SpecPath):
        # the spec's directory resolved, the spec's own part taken literally: a backend
        # root through a link is refused at run time, not resolved here to where it leads
        return os.path.normpath(spec_dir.resolve() / value.relative)
    if isinstance(value, ListOf):
        return [_evaluate(v, scope, spec_dir) for v in value.items]
    if isinstance(value, DictOf):
        return {k: _evaluate(v, scope, spec_dir) for k, v in value.items}
    if isinstance(value, Call):
        function = resolve_import(value.callee)
        args = [_evaluate(v, scope, spec_dir) for v in value.args]
        return function(*args, **{k: _evaluate(v, scope, spec_dir) for k, v in value.kwargs})
    return value


def objects(plan: Plan, *, spec_dir: Path) -> Any:
    """Build the App the plan describes; user modules are found beside the spec."""
    directories = [str((spec_dir / directory).resolve()) for directory in plan.module_dirs]
    for path in reversed(directories):
        if path not in sys.path:
            sys.path.insert(0, path)
    for binding in plan.bindings:
        for module in _modules(binding.value):
            _forget_stale(module.partition(".")[0], directories)
    scope: dict[str, Any] = {}
    for binding in plan.bindings:
        try:
            scope[binding.var] = _evaluate(binding.value, scope, spec_dir)
        except Exception as exc:  # noqa: BLE001 - reported with the spec position
            raise ConstructionError(binding, exc) from exc
    return scope["app"]
