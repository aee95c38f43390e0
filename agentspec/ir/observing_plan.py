"""The plan of the observer plugin (`agentspec.runtime.observing.observer`) of a spec with
`telemetry`, `budget` or models' `price`."""

from __future__ import annotations

from agentspec.ir.plan import Call, Import
from agentspec.ir.tree import AgentNode, AppNode, agents_called, kind_of
from agentspec.ir.values import kwargs, lit

__all__ = ["OBSERVER", "observer_call"]

OBSERVER = Import("agentspec.runtime.observing", "observer")


def _kinds(root: AgentNode) -> dict[str, str]:
    kinds: dict[str, str] = {}
    todo = [root]
    while todo:
        node = todo.pop()
        if node.name not in kinds:
            kinds[node.name] = kind_of(node)
            todo.extend(agents_called(node))
    return dict(sorted(kinds.items()))


def observer_call(app: AppNode) -> Call | None:
    """None for a spec that says nothing about tracing, budgets or prices."""
    observing = app.observing
    if observing is None:
        return None
    telemetry = observing.telemetry
    budget = observing.budget
    return Call(OBSERVER, kwargs(
        spec=app.name, kinds=lit(_kinds(app.root)),
        telemetry=None if telemetry is None else lit({
            "exporter": telemetry.exporter, "endpoint": telemetry.endpoint,
            "protocol": telemetry.protocol, "headers": dict(telemetry.headers),
            "service_name": telemetry.service_name, "sampling": telemetry.sampling,
            "record_content": telemetry.record_content}),
        budget=None if budget is None else lit({
            "run_tokens": budget.run_tokens, "run_cost": budget.run_cost,
            "job_tokens": budget.job_tokens, "job_cost": budget.job_cost}),
        prices=lit({model: {"input": p.input, "output": p.output, "cached": p.cached}
                    for model, p in observing.prices.items()}) if observing.prices else None))
