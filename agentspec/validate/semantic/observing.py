"""`telemetry`, `budget` and models' `price`: a collector's URL, fields the exporter ignores,
keys written in headers, cost budgets over models of unknown price."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from agentspec.contract.prices import table_price
from agentspec.diagnostics import codes
from agentspec.language.models import FallbackModel, ModelDef, RoutedModel
from agentspec.resolve.interpolate import has_env_ref
from agentspec.validate.semantic.context import Context

__all__ = ["check_observing"]

#: header names that carry a credential
_SECRET_HEADER = re.compile(r"(auth|key|token|secret|password|signature)", re.IGNORECASE)


def check_observing(ctx: Context) -> None:
    _telemetry(ctx)
    _prices(ctx)
    _budget(ctx)


def _telemetry(ctx: Context) -> None:
    telemetry = ctx.spec.telemetry
    if telemetry is None:
        return
    if telemetry.exporter != "otlp":
        for key in ("endpoint", "protocol", "headers"):
            if key in telemetry.model_fields_set:
                ctx.report(codes.TELEMETRY_FIELD_UNUSED(
                    f"`telemetry.{key}` is read by the `otlp` exporter only; this one is "
                    f"`{telemetry.exporter}`", ctx.key_at("telemetry", key),
                    hint=f"remove `{key}`, or use `exporter: otlp`"))
    endpoint = telemetry.endpoint
    if endpoint is not None and not has_env_ref(endpoint):
        try:
            parts = urlsplit(endpoint)
            host, password = parts.hostname, parts.password
        except ValueError:
            parts, host, password = None, None, None
        if parts is None or parts.scheme not in ("http", "https") or not host:
            ctx.report(codes.TELEMETRY_ENDPOINT(
                "`telemetry.endpoint` is not an `http://` or `https://` URL with a host",
                ctx.at("telemetry", "endpoint"),
                hint="use the collector's URL, such as `http://localhost:4318`"))
        elif password:
            ctx.report(codes.TELEMETRY_ENDPOINT(
                "`telemetry.endpoint` holds a password", ctx.at("telemetry", "endpoint"),
                hint="write the URL as `${env.NAME}`, or send the key in a header written "
                     "as `${env.NAME}`"))
    for name, value in (telemetry.headers or {}).items():
        if _SECRET_HEADER.search(name) and value and not has_env_ref(value):
            ctx.report(codes.TELEMETRY_HEADER_SECRET(
                f"the `{name}` header's value is written in the spec",
                ctx.at("telemetry", "headers", name),
                hint=f"write it as `${{env.NAME}}`: `{name}: \"${{env.OTLP_KEY}}\"`"))


def _model_ids(ctx: Context) -> dict[str, list[tuple[str, ...]]]:
    """Every model id the spec names, with where: named definitions and ids written as an
    agent's (or the defaults') `model`."""
    models = ctx.spec.models or {}
    ids: dict[str, list[tuple[str, ...]]] = {}
    for name, model in models.items():
        if isinstance(model, str):
            ids.setdefault(model, []).append(("models", name))
        elif isinstance(model, ModelDef):
            ids.setdefault(model.id, []).append(("models", name, "id"))
    written: list[tuple[tuple[str, ...], object]] = [
        (("defaults", "model"), ctx.spec.defaults.model if ctx.spec.defaults else None)]
    written += [(("agents", name, "model"), getattr(agent, "model", None))
                for name, agent in ctx.spec.agents.items()]
    for path, value in written:
        if isinstance(value, str) and value not in models:
            ids.setdefault(value, []).append(path)
    return ids


def _priced(ctx: Context) -> set[str]:
    return {model.id for model in (ctx.spec.models or {}).values()
            if isinstance(model, ModelDef) and model.price is not None}


def _prices(ctx: Context) -> None:
    seen: dict[str, tuple[str, object]] = {}
    for name, model in (ctx.spec.models or {}).items():
        if not isinstance(model, ModelDef) or model.price is None:
            continue
        first = seen.setdefault(model.id, (name, model.price))
        if first[1] != model.price:
            ctx.report(codes.PRICE_CONFLICT(
                f"`{name}` and `{first[0]}` are both `{model.id}` with different prices",
                ctx.at("models", name, "price"),
                hint="give both the same `price:`, or only one of them"))


def _budget(ctx: Context) -> None:
    budget = ctx.spec.budget
    if budget is None:
        return
    if budget.job is not None and not any(
            getattr(agent, "execution_mode", None) == "offline"
            for agent in ctx.spec.agents.values()):
        ctx.report(codes.BUDGET_WITHOUT_JOBS(
            "`budget.job` limits background jobs, and no agent of this spec runs as one",
            ctx.key_at("budget", "job"),
            hint="remove it, or move the limit to `budget.run`"))
    costs = [scope for scope, limit in (("run", budget.run), ("job", budget.job))
             if limit is not None and limit.cost is not None]
    if not costs:
        return
    priced = _priced(ctx)
    composite = {name for name, model in (ctx.spec.models or {}).items()
                 if isinstance(model, (FallbackModel, RoutedModel))}
    for model_id, places in sorted(_model_ids(ctx).items()):
        if model_id in priced or model_id in composite or table_price(model_id) is not None:
            continue
        ctx.report(codes.BUDGET_PRICE_UNKNOWN(
            f"`budget.{costs[0]}.cost` needs the price of every model, and `{model_id}` has "
            "none (agentspec's table does not know it)", ctx.at(*places[0]),
            hint="give its model definition a `price: {input: ..., output: ...}` (US dollars "
                 "per million tokens), or budget `tokens`"))
