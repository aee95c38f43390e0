"""The table of agent kinds the stages dispatch through. The stages sit below the kinds and
never import them: they look a kind up here, and the table is filled from above, by the
kinds package (`agentspec.kinds`, imported by name the first time a stage asks, as a plugin
would be) and by `register`."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentspec.diagnostics.codes import REGISTRY

if TYPE_CHECKING:
    from agentspec.ir.tree import AgentNode
    from agentspec.kindapi.kind import Kind

__all__ = ["BUILTIN", "KindTableError", "kind_for", "kind_for_spec", "kind_named", "kinds",
           "register"]

#: the package whose import registers the built-in kinds
BUILTIN = "agentspec.kinds"

_TABLE: list[Kind[Any, Any]] = []
_LOADED: set[str] = set()  # BUILTIN, once imported
_LOCK = threading.RLock()


class KindTableError(Exception):
    """A kind that contradicts the table (a bug in that kind's module)."""


def register(kind: Kind[Any, Any]) -> None:
    """Add `kind` to the table; it must not claim a name, spec model, node class or code
    another kind has, and its own codes must be registered and ascending."""
    for other in _TABLE:
        clash = (set(kind.names) & set(other.names) or set(kind.spec) & set(other.spec)
                 or {kind.node} & {other.node}
                 or {c.code for c in kind.codes} & {c.code for c in other.codes})
        if clash:
            raise KindTableError(f"kinds {kind.names} and {other.names} both claim "
                                 f"{sorted(map(str, clash))}")
    numbers = [code.code for code in kind.codes]
    if numbers != sorted(set(numbers)):
        raise KindTableError(f"the codes of kind {kind.names} are not unique and ascending: "
                             f"{numbers}")
    unknown = [code.code for code in kind.codes if REGISTRY.get(code.code) is not code]
    if unknown:
        raise KindTableError(f"kind {kind.names} owns codes the registry lacks: {unknown}")
    foreign = {rule.code.code for rule in kind.rules} & {
        code.code for other in _TABLE for code in other.codes}
    if foreign:
        raise KindTableError(f"kind {kind.names} has rules under another kind's codes: "
                             f"{sorted(foreign)}")
    _TABLE.append(kind)


def kinds() -> tuple[Kind[Any, Any], ...]:
    """Every kind, the built-in ones first (loaded on the first call)."""
    if BUILTIN not in _LOADED:
        # another thread waits for the whole table; this one, asking again while the kinds
        # are imported (a kind module that asks), gets the part registered so far
        with _LOCK:
            if BUILTIN not in _LOADED:
                importlib.import_module(BUILTIN)
                _LOADED.add(BUILTIN)
    return tuple(_TABLE)


def kind_for(node: AgentNode) -> Kind[Any, Any]:
    """The kind of a node of the agent tree (its exact class)."""
    return _find(lambda kind: kind.node is type(node), node)


#: `kind_for_spec` by model class: asked for every agent by many checks, and a class keeps
#: its kind (the table refuses a second kind claiming a model)
_BY_SPEC: dict[type, Kind[Any, Any]] = {}


def kind_for_spec(agent: object) -> Kind[Any, Any]:
    """The kind of an agent of the spec (its model's exact class)."""
    found = _BY_SPEC.get(type(agent))
    if found is None:
        found = _BY_SPEC[type(agent)] = _find(lambda kind: type(agent) in kind.spec, agent)
    return found


def kind_named(name: str) -> Kind[Any, Any]:
    """The kind of the spec's `kind: name`."""
    return _find(lambda kind: name in kind.names, name)


def _find(match: Callable[[Kind[Any, Any]], bool], what: object) -> Kind[Any, Any]:
    found = next((kind for kind in kinds() if match(kind)), None)
    if found is None:
        raise KindTableError(f"no kind is registered for {type(what).__name__} {what!r:.80}")
    return found
