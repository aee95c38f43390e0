"""Plan -> live ADK objects (the App, root agent inside)."""

from __future__ import annotations

import importlib
import os
import sys
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
from agentspec.stdlib import live_origin

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
    for directory in plan.module_dirs:
        path = str((spec_dir / directory).resolve())
        if path not in sys.path:
            sys.path.insert(0, path)
    scope: dict[str, Any] = {}
    for binding in plan.bindings:
        try:
            scope[binding.var] = _evaluate(binding.value, scope, spec_dir)
        except Exception as exc:  # noqa: BLE001 - reported with the spec position
            raise ConstructionError(binding, exc) from exc
    return scope["app"]
