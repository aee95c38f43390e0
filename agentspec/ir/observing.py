"""The lowered `telemetry`, `budget` and model `price` settings: what the runtime's observer
plugin is built with."""

from __future__ import annotations

from dataclasses import dataclass

from agentspec.contract.frozen import FrozenMap
from agentspec.language.document import Spec
from agentspec.language.models import ModelDef

__all__ = ["BudgetNode", "ObservingNode", "PriceNode", "TelemetryNode", "lower_observing"]


@dataclass(frozen=True)
class TelemetryNode:
    exporter: str  # otlp | console | none
    endpoint: str | None
    protocol: str  # http | grpc
    #: header -> value; values may hold `${env.X}`, read when the app runs
    headers: tuple[tuple[str, str], ...]
    service_name: str
    sampling: float
    record_content: bool


@dataclass(frozen=True)
class PriceNode:
    """US dollars per million tokens."""

    input: float
    output: float
    cached: float | None = None


@dataclass(frozen=True)
class BudgetNode:
    run_tokens: int | None = None
    run_cost: float | None = None
    job_tokens: int | None = None
    job_cost: float | None = None


@dataclass(frozen=True)
class ObservingNode:
    telemetry: TelemetryNode | None = None
    budget: BudgetNode | None = None
    #: model id -> the spec's price for it (other ids: the dated default table)
    prices: FrozenMap[str, PriceNode] = FrozenMap()


def lower_observing(spec: Spec) -> ObservingNode | None:
    """None when the spec says nothing about tracing, budgets or prices."""
    telemetry = None
    if spec.telemetry is not None:
        t = spec.telemetry
        telemetry = TelemetryNode(t.exporter, t.endpoint, t.protocol,
                                  tuple(sorted((t.headers or {}).items())),
                                  t.service_name or spec.name, t.sampling, t.record_content)
    budget = None
    if spec.budget is not None:
        run, job = spec.budget.run, spec.budget.job
        budget = BudgetNode(run.tokens if run else None, run.cost if run else None,
                            job.tokens if job else None, job.cost if job else None)
    prices = FrozenMap(sorted(
        (model.id, PriceNode(model.price.input, model.price.output, model.price.cached))
        for model in (spec.models or {}).values()
        if isinstance(model, ModelDef) and model.price is not None))
    if telemetry is None and budget is None and not prices:
        return None
    return ObservingNode(telemetry, budget, prices)
