"""Named models: fallback chains and routes over defined models, LiteLLM endpoints and keys."""

from __future__ import annotations

from typing import Any

from agentspec.contract.secrets import secret_name, secret_value
from agentspec.contract.urls import endpoint_problem, url_secrets
from agentspec.diagnostics import codes, did_you_mean
from agentspec.language.models import FallbackModel, ModelDef, RoutedModel, ThinkingConfig
from agentspec.resolve.interpolate import has_env_ref
from agentspec.validate.semantic.context import Context

__all__ = ["check_models", "check_thinking"]

MAX_NESTING = 10

#: `acompletion` arguments that are not `args`' to give
_MANAGED = {"model", "messages", "tools", "stream", "api_key", "api_base", "base_url"}


def check_thinking(ctx: Context, thinking: ThinkingConfig | None, *path: str | int) -> None:
    if thinking is not None and thinking.budget is not None and thinking.level is not None:
        ctx.report(codes.ONE_OF("`thinking` takes a `budget` or a `level`, not both",
                                ctx.key_at(*path, "level"),
                                hint="Gemini refuses requests that set both; keep one"))


def check_models(ctx: Context) -> None:
    models = ctx.spec.models or {}
    for name, model in models.items():
        if isinstance(model, ModelDef):
            _endpoint(ctx, name, model)
        elif isinstance(model, FallbackModel):
            _members(ctx, name, model.fallback, "fallback")
        elif isinstance(model, RoutedModel):
            _route(ctx, name, model)
    if not _cycles(ctx):
        _nesting(ctx)


def _endpoint(ctx: Context, name: str, model: ModelDef) -> None:
    if model.provider != "litellm":
        for key in ("base_url", "api_key", "args"):
            if getattr(model, key) is not None:
                ctx.report(codes.ENDPOINT_NEEDS_LITELLM(
                    f"`{key}` is for `provider: litellm` models; `{name}` uses ADK's registry",
                    ctx.key_at("models", name, key),
                    hint="add `provider: litellm` (and a LiteLLM model string such as "
                    "`openai/<model>` for an OpenAI-compatible server)"))
    for key in sorted(set(model.args or {}) & _MANAGED):
        ctx.report(codes.INVALID_VALUE(
            f"`args.{key}` is set by agentspec or ADK, not by `args`",
            ctx.key_at("models", name, "args", key),
            hint={"api_key": "use `api_key: ${env.NAME}`", "api_base": "use `base_url`",
                  "base_url": "use `base_url` (beside `args`)"}.get(
                      key, "leave it out: the agent's request sets it")))
    if model.api_key is not None and not has_env_ref(model.api_key):
        ctx.report(codes.API_KEY_LITERAL(
            f"the API key of `{name}` is written in the spec", ctx.at("models", name, "api_key"),
            hint="write `api_key: ${env.NAME}` and set NAME in the environment"))
    if model.base_url is not None:
        _base_url(ctx, name, model.base_url)
    unmanaged = {key: value for key, value in (model.args or {}).items()
                 if key not in _MANAGED}  # those are refused above
    for path, _ in _literal_secrets(unmanaged, ()):
        shown = ".".join(str(key) for key in path)
        ctx.report(codes.API_KEY_LITERAL(
            f"`args.{shown}` of `{name}` holds a credential written in the spec",
            ctx.at("models", name, "args", *path),
            hint="write it as `${env.NAME}` and set NAME in the environment"))


def _base_url(ctx: Context, name: str, url: str) -> None:
    problem = endpoint_problem(url)
    if problem is not None:
        ctx.report(codes.MODEL_URL_INVALID(
            f"`base_url` of `{name}` cannot be a model server: {problem}",
            ctx.at("models", name, "base_url"),
            hint="give the server's `http://` or `https://` URL, such as "
            "`http://localhost:8000/v1`"))
    for what in url_secrets(url):
        ctx.report(codes.API_KEY_LITERAL(
            f"`base_url` of `{name}` writes {what} in the spec",
            ctx.at("models", name, "base_url"),
            hint="write each secret part as `${env.NAME}` "
            "(`https://user:${env.PASSWORD}@host/v1`), or use `api_key: ${env.NAME}`"))


def _literal_secrets(value: Any, path: tuple[str | int, ...]
                     ) -> list[tuple[tuple[str | int, ...], str]]:
    """The string values under `value` (LiteLLM `args`) named like a secret, or shaped like
    one, and not read from the environment; with their paths."""
    if isinstance(value, dict):
        return [found for key, item in value.items()
                for found in _literal_secrets(item, (*path, key))]
    if isinstance(value, list):
        return [found for index, item in enumerate(value)
                for found in _literal_secrets(item, (*path, index))]
    if not isinstance(value, str) or not value or has_env_ref(value):
        return []
    named = bool(path) and isinstance(path[-1], str) and secret_name(path[-1])
    return [(path, value)] if named or secret_value(value) else []


def _members(ctx: Context, name: str, names: list[str], *path: str) -> None:
    models = ctx.spec.models or {}
    for index, member in enumerate(names):
        if member not in ctx.defined["models"]:
            ctx.report(codes.MODEL_MEMBER_UNKNOWN(
                f"`{member}` is not a model defined in `models`",
                ctx.at("models", name, *path, index),
                hint=did_you_mean(member, ctx.defined["models"]) or
                f"define it: `models: {{{member}: <model id>}}`"))
            continue
        definition = models.get(member)
        if isinstance(definition, ModelDef) and (definition.generate or definition.thinking):
            ctx.report(codes.MEMBER_SETTINGS_UNUSED(
                f"model `{member}` is called through `{name}`, where its `generate` / "
                "`thinking` settings do not apply", ctx.at("models", name, *path, index),
                hint="set them on the agents that use the chain"))


def _route(ctx: Context, name: str, model: RoutedModel) -> None:
    route = model.route
    if (route.state is None) == (route.python is None) or (
            route.map is not None and route.state is None):
        ctx.report(codes.ONE_OF(
            "a model route takes exactly one of `state` (optionally with `map`) and `python`",
            ctx.at("models", name, "route"),
            hint="write `route: {state: key, map: {...}}` or `route: {python: module:fn}`"))
    _members(ctx, name, model.models, "models")
    _members(ctx, name, model.fallback or [], "fallback")
    for key, target in (route.map or {}).items():
        if target not in model.models:
            ctx.report(codes.ROUTE_MAP_OUTSIDE(
                f"`map` sends `{key}` to `{target}`, which is not among this route's `models`",
                ctx.at("models", name, "route", "map", key),
                hint=did_you_mean(target, set(model.models)) or
                f"add `{target}` to `models`"))


def _named(model: object) -> list[str]:
    if isinstance(model, FallbackModel):
        return list(model.fallback)
    if isinstance(model, RoutedModel):
        return [*model.models, *(model.fallback or [])]
    return []


def _cycles(ctx: Context) -> bool:
    """Reports every model that leads back to itself; whether there was one."""
    models = ctx.spec.models or {}
    reported: set[frozenset[str]] = set()
    for start in models:
        path, todo = [start], [(start, iter(_named(models[start])))]
        seen = {start}  # explored from this start: never twice, so this stays linear
        while todo:  # depth-first, iterative: a long chain cannot overflow the stack
            current, following = todo[-1]
            step = next(following, None)
            if step is None:
                todo.pop()
                path.pop()
                continue
            if step == start:
                circle = frozenset(path)
                if circle not in reported:
                    reported.add(circle)
                    ctx.report(codes.MODEL_CYCLE(
                        f"model `{start}` leads back to itself: {' -> '.join([*path, start])}",
                        ctx.key_at("models", start),
                        hint="a chain or route may only name models that do not name it"))
                continue
            if step in models and step not in seen:
                path.append(step)
                seen.add(step)
                todo.append((step, iter(_named(models[step]))))
    return bool(reported)


def _nesting(ctx: Context) -> None:
    """Levels of chains and routes one inside the other (there are no cycles here)."""
    models = ctx.spec.models or {}
    depth: dict[str, int] = {}
    for start in models:
        todo = [start]
        while todo:  # iterative: members first
            name = todo[-1]
            waiting = [m for m in _named(models[name]) if m in models and m not in depth]
            if waiting:
                todo.extend(waiting)
                continue
            todo.pop()
            depth[name] = 1 + max((depth[m] for m in _named(models[name]) if m in models),
                                  default=-1) if _named(models[name]) else 0
    for name, levels in depth.items():
        if levels > MAX_NESTING:
            ctx.report(codes.MODEL_NESTING(
                f"model `{name}` nests chains and routes {levels} levels deep (at most "
                f"{MAX_NESTING})", ctx.key_at("models", name),
                hint="name the models of the inner chains directly"))
            return
