"""The diff rules about models: an agent's model, and the models it reaches through a
chain or route, each change positioned at the definition it is in (under `models`), so an
edit every agent sees is found once per agent at the same place and reported once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agentspec.contract.urls import redacted
from agentspec.diagnostics import codes
from agentspec.diagnostics.model import Risk
from agentspec.ir.tree import FallbackChain, LiteLlmEndpoint, ModelNode, ModelRoute, members_of
from agentspec.review.ruletypes import AgentPair, Found, Path, Rule, model_text
from agentspec.review.sides import Where

__all__ = ["RULES", "model_changed", "model_endpoint", "model_routing", "model_settings"]


def model_changed(pair: AgentPair) -> Iterator[Found]:
    """Another model id or provider: the agent's own, or (positioned at its definition,
    where every agent that reaches it sees the same change) a model it shares or calls
    through a chain or route."""
    was, now = pair.old_llm.model, pair.new_llm.model
    if model_text(was) != model_text(now):
        shared = _model_name(pair, False)
        if shared is not None and shared == _model_name(pair, True):
            yield Found(Risk.MEDIUM, f"model `{shared}`: {model_text(was)} -> {model_text(now)}",
                        pair.old.defined("models", shared), pair.new.defined("models", shared))
        else:
            yield Found(Risk.MEDIUM, f"model {model_text(was)} -> {model_text(now)}", ("model",),
                        ("model",))
        return
    if was is None or now is None:
        return
    old, new = _endpoints(was), _endpoints(now)
    for key in sorted((old.keys() & new.keys()) - {now.id}):
        before, after = _called(old[key][0], old[key][-1]), _called(new[key][0], new[key][-1])
        if before != after:
            name, new_at = _model_at(pair, key, True)
            yield Found(Risk.MEDIUM, f"model `{name}`: {before} -> {after}",
                        _model_at(pair, key, False)[1], new_at)


def _called(provider: str, model_id: str) -> str:
    return model_id if provider == "adk" else f"{model_id} ({provider})"


def _endpoints(model: ModelNode) -> dict[str, tuple[Any, ...]]:
    """Every model a call may reach, by name, with where and how it is called."""
    how = (model.base_url, model.api_key, model.args) if isinstance(model, LiteLlmEndpoint) \
        else (None, None, ())
    found: dict[str, tuple[Any, ...]] = {model.id: (model.provider, *how, model.id)}
    for name, member in members_of(model).items():
        found |= {f"{name}/{key}" if key != member.id else name: value
                  for key, value in _endpoints(member).items()}
    return found


def _servers(model: ModelNode | None) -> set[str]:
    return set() if model is None else {e[1] for e in _endpoints(model).values() if e[1]}


def _route_parts(model: ModelNode) -> tuple[Any, ...]:
    """(choices, the models tried after, state, map, python) of a chain or route."""
    if isinstance(model, FallbackChain):
        return (), model.order, None, None, None
    if isinstance(model, ModelRoute):
        return model.choices, model.fallback, model.state, model.map, model.python
    return (), (), None, None, None


def _routing(model: ModelNode) -> tuple[Any, ...]:
    return (model.provider, tuple(members_of(model)), *_route_parts(model))


def _order(model: ModelNode) -> str:
    if isinstance(model, FallbackChain):
        return " -> ".join(model.order)
    if isinstance(model, ModelRoute):
        how = f"python `{model.python.ref}`" if model.python else \
            f"state `{model.state}`" + (
                f" ({', '.join(f'{k} -> {v}' for k, v in model.map.items())})"
                if model.map else "")
        return f"a route by {how} over {', '.join(model.choices)}" + (
            f", then {' -> '.join(model.fallback)}" if model.fallback else "")
    return f"`{model.id}` alone"


def _same_model(pair: AgentPair) -> tuple[ModelNode, ModelNode] | None:
    """The agent's two models when they have the same name but differ (another name is
    AS505's)."""
    was, now = pair.old_llm.model, pair.new_llm.model
    if was is None or now is None or was == now or model_text(was) != model_text(now):
        return None
    return was, now


def _model_name(pair: AgentPair, new: bool) -> str | None:
    """The name under `models` the agent's model has, when it names one there."""
    side, name = (pair.new, pair.name) if new else (pair.old, pair.old_name)
    named = side.value("agents", name, "model")
    return named if isinstance(named, str) and side.has("models", named) else None


def _model_at(pair: AgentPair, key: str, new: bool, *under: str) -> tuple[str, Path | Where]:
    """A model the agent reaches, by its key in `_endpoints`: the name it is shown by, and
    its definition (or the agent's `model` when it is not a shared one)."""
    model = pair.new_llm.model if new else pair.old_llm.model
    side = pair.new if new else pair.old
    if model is not None and key == model.id:  # the agent's own model, not a member
        name = _model_name(pair, new) or (key if side.has("models", key) else None)
        return name or key, side.defined("models", name, *under) or ("model", *under)
    name = key.rsplit("/", 1)[-1]
    return name, side.defined("models", name, *under) or ("model",)


def model_endpoint(pair: AgentPair) -> Iterator[Found]:
    """High: the conversation, and the key, go to a server the old version did not call
    (whatever the model is named); one change per model definition, at its `base_url`."""
    was, now = pair.old_llm.model, pair.new_llm.model
    if now is None:
        return
    added = _servers(now) - _servers(was)
    old = _endpoints(was) if was is not None else {}
    for key, (_, url, *_rest) in sorted(_endpoints(now).items()):
        if url in added:
            name, new_at = _model_at(pair, key, True, "base_url")
            old_at = _model_at(pair, key, False, "base_url")[1] if key in old else None
            yield Found(Risk.HIGH, f"model `{name}` now sends requests to {redacted(url)}", old_at,
                        new_at)


def _routing_key(was: ModelNode, now: ModelNode) -> str:
    """The key of a fallback or route definition that changed."""
    old, new = _route_parts(was), _route_parts(now)
    if old[1] != new[1] and isinstance(now, FallbackChain):
        return "fallback"
    if old[2:] != new[2:]:
        return "route"
    return "models"


def model_routing(pair: AgentPair) -> Iterator[Found]:
    both = _same_model(pair)
    if both is not None and _routing(both[0]) != _routing(both[1]):
        was, now = both
        key = _routing_key(was, now)
        yield Found(Risk.MEDIUM, f"model `{now.id}` now tries {_order(now)} (was {_order(was)})",
                    _model_at(pair, was.id, False, key)[1], _model_at(pair, now.id, True, key)[1])


def model_settings(pair: AgentPair) -> Iterator[Found]:
    """A model the agent reaches is called with another key, arguments or (a server already
    called) endpoint; another id is AS505's, a new server AS560's, the order AS561's."""
    both = _same_model(pair)
    if both is None:
        return
    was, now = both
    added = _servers(now) - _servers(was)
    old, new = _endpoints(was), _endpoints(now)

    def differ(before: tuple[Any, ...], after: tuple[Any, ...]) -> bool:
        """key or arguments, or the endpoint unless it is a new server"""
        return before[2:4] != after[2:4] or (after[1] not in added and before[1] != after[1])

    changed = [key for key in sorted(old.keys() & new.keys()) if differ(old[key], new[key])]
    for key in changed:
        name, new_at = _model_at(pair, key, True)
        yield Found(Risk.MEDIUM, f"model `{name}` is called with other settings (its key, "
                    "arguments or endpoint)", _model_at(pair, key, False)[1], new_at)
    if not changed and not added and _routing(was) == _routing(now) and not any(
            _called(old[k][0], old[k][-1]) != _called(new[k][0], new[k][-1])
            for k in old.keys() & new.keys()):
        yield Found(Risk.MEDIUM, f"model `{now.id}` is called with other settings",
                    ("model",), ("model",))


#: every model variant, every field: a model's own settings or what a chain or route calls
MODEL_VARIANTS = ("PlainModel.*", "LiteLlmEndpoint.*", "FallbackChain.*", "ModelRoute.*")
_ROUTING = ("LlmFields.model", "FallbackChain.members", "FallbackChain.order",
            "ModelRoute.members", "ModelRoute.choices", "ModelRoute.fallback",
            "ModelRoute.state", "ModelRoute.map", "ModelRoute.python",
            "PyObject.*")

RULES: tuple[Rule[AgentPair], ...] = (
    Rule(codes.MODEL_CHANGED, ("LlmFields.model", "PlainModel.id", "LiteLlmEndpoint.id",
                               "FallbackChain.id", "ModelRoute.id"),
         model_changed),
    Rule(codes.MODEL_ENDPOINT_CHANGED, ("LlmFields.model", "LiteLlmEndpoint.base_url",
                                        "FallbackChain.members", "ModelRoute.members"),
         model_endpoint, on_new_agent=True),
    Rule(codes.MODEL_ROUTING_CHANGED, _ROUTING, model_routing),
    Rule(codes.MODEL_SETTINGS_CHANGED, ("LlmFields.model", "LiteLlmEndpoint.api_key",
                                        "LiteLlmEndpoint.args", "FallbackChain.members",
                                        "ModelRoute.members"), model_settings),
)
