"""Diff rules for `telemetry`, `budget` and models' `price`."""

from __future__ import annotations

from collections.abc import Iterator

from agentspec.contract.urls import redacted
from agentspec.diagnostics import codes
from agentspec.diagnostics.model import Risk
from agentspec.ir.observing import BudgetNode, ObservingNode, PriceNode, TelemetryNode
from agentspec.review.ruletypes import AppPair, Found, Rule

__all__ = ["RULES"]


def _observing(pair: AppPair) -> tuple[ObservingNode, ObservingNode]:
    def of(app: object) -> ObservingNode:
        return getattr(app, "observing", None) or ObservingNode()
    return of(pair.old.app), of(pair.new.app)


def _sends(node: TelemetryNode | None) -> bool:
    return node is not None and node.exporter != "none"


def _destination(node: TelemetryNode) -> str:
    if node.exporter == "otlp":
        where = redacted(node.endpoint) if node.endpoint else "the default collector"
        return f"otlp ({node.protocol}) to {where}"
    return node.exporter


def _tracing(pair: AppPair) -> Iterator[Found]:
    was, now = (o.telemetry for o in _observing(pair))
    where = ("telemetry",)
    if not _sends(now):
        if _sends(was):
            assert was is not None
            yield Found(Risk.LOW, f"traces are no longer sent (was {_destination(was)})",
                        where, where if now is not None else None)
        return
    assert now is not None
    if not _sends(was) or (was is not None and _destination(was) != _destination(now)):
        before = f" (was {_destination(was)})" if was is not None and _sends(was) else ""
        yield Found(Risk.MEDIUM, f"traces are sent {_destination(now)}{before}",
                    where if was is not None else None, where)
        return
    assert was is not None
    old_names, new_names = [k for k, _ in was.headers], [k for k, _ in now.headers]
    changed = [f"headers {old_names} -> {new_names}" if old_names != new_names else "",
               "header values (not shown)" if old_names == new_names and
               was.headers != now.headers else "",
               f"service name {was.service_name} -> {now.service_name}"
               if was.service_name != now.service_name else "",
               f"sampling {was.sampling:g} -> {now.sampling:g}"
               if was.sampling != now.sampling else ""]
    headers_changed = was.headers != now.headers
    said = [text for text in changed if text]
    if said:
        yield Found(Risk.MEDIUM if headers_changed else Risk.LOW,
                    f"the traces sent {_destination(now)} changed: {'; '.join(said)}",
                    where, where)


def _content(pair: AppPair) -> Iterator[Found]:
    was, now = (o.telemetry for o in _observing(pair))
    before = was is not None and was.record_content and _sends(was)
    after = now is not None and now.record_content and _sends(now)
    if after and not before:
        assert now is not None
        yield Found(Risk.HIGH, "prompts, responses and tool arguments and results are now "
                    f"recorded on the spans sent {_destination(now)}: they may hold personal "
                    "data", ("telemetry",) if was is not None else None,
                    ("telemetry", "record_content"))
    elif before and not after:
        yield Found(Risk.LOW, "prompts and responses are no longer recorded on the spans",
                    ("telemetry", "record_content"), ("telemetry",) if now is not None else None)


def _limits(budget: BudgetNode | None) -> dict[str, float | int | None]:
    if budget is None:
        return {}
    return {"run.tokens": budget.run_tokens, "run.cost": budget.run_cost,
            "job.tokens": budget.job_tokens, "job.cost": budget.job_cost}


def _limit(value: float | int | None) -> str:
    return "no limit" if value is None else f"{value:g}"


def _budget(pair: AppPair) -> Iterator[Found]:
    was, now = (_limits(o.budget) for o in _observing(pair))
    for key in ("run.tokens", "run.cost", "job.tokens", "job.cost"):
        before, after = was.get(key), now.get(key)
        if before == after:
            continue
        more = after is None or (before is not None and after > before)
        yield Found(Risk.MEDIUM if more else Risk.LOW,
                    f"`budget.{key}` is {_limit(after)} (was {_limit(before)})",
                    ("budget",) if was else None, ("budget",) if now else None)


def _price(pair: AppPair) -> Iterator[Found]:
    was, now = (dict(o.prices) for o in _observing(pair))

    def text(price: PriceNode | None) -> str:
        if price is None:
            return "agentspec's table"
        cached = f", {price.cached:g} cached" if price.cached is not None else ""
        return f"{price.input:g} in, {price.output:g} out{cached}"

    for model in sorted(set(was) | set(now)):
        if was.get(model) != now.get(model):
            yield Found(Risk.LOW, f"the price of `{model}` is {text(now.get(model))} (was "
                        f"{text(was.get(model))}) US dollars per million tokens",
                        ("models",) if was else None, ("models",) if now else None)


RULES: tuple[Rule[AppPair], ...] = (
    Rule(codes.TRACING_CHANGED, ("AppNode.observing", "ObservingNode.telemetry",
                                 "TelemetryNode.exporter", "TelemetryNode.endpoint",
                                 "TelemetryNode.protocol", "TelemetryNode.headers",
                                 "TelemetryNode.service_name", "TelemetryNode.sampling"),
         _tracing, on_new_spec=True),
    Rule(codes.CONTENT_RECORDING_CHANGED, ("AppNode.observing", "ObservingNode.telemetry",
                                           "TelemetryNode.record_content"), _content,
         on_new_spec=True),
    Rule(codes.BUDGET_CHANGED, ("AppNode.observing", "ObservingNode.budget", "BudgetNode.*"),
         _budget),
    Rule(codes.PRICE_CHANGED, ("AppNode.observing", "ObservingNode.prices", "PriceNode.*"),
         _price),
)
