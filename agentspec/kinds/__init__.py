"""The built-in agent kinds, one module each: a kind's checks, lowering, plan, graph label,
diff rules and codes live together in `agentspec/kinds/<kind>.py`, whose `KIND` this package
registers (every module of the package, found by listing it, in the order of the language's
kinds). Nothing below imports this package: the stages look kinds up in
`agentspec.kindapi`, which imports it by name the first time a stage asks."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from agentspec.kindapi import Kind, register
from agentspec.language.agents import KIND_MODELS

__all__ = ["KINDS"]


def _modules() -> list[Kind[Any, Any]]:
    found = [importlib.import_module(f"{__name__}.{module.name}").KIND
             for module in pkgutil.iter_modules(__path__)]
    order = list(KIND_MODELS)
    return sorted(found, key=lambda kind: min(
        (order.index(name) for name in kind.names if name in order), default=len(order)))


#: every built-in kind, in the order of the language's kinds
KINDS: tuple[Kind[Any, Any], ...] = tuple(_modules())
for _kind in KINDS:
    register(_kind)
