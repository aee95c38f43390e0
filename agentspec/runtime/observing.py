"""`Observer`, the plugin of a spec with `telemetry`, `budget` or `price`: agentspec's
attributes on ADK's spans, each model call's tokens and cost summed per run (and per job),
and the budget, checked before each model call. `agentspec run` adds one to any app, for its
usage summary."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin

from agentspec.runtime.telemetry import install_tracing, note, set_attributes
from agentspec.runtime.usage import (
    ANSWERED_BY,
    BudgetExceeded,
    Ledger,
    Tokens,
    call_cost,
    call_tokens,
)

__all__ = ["COLLECTING", "JOB", "REQUESTS", "BudgetExceeded", "Observer",
           "collecting", "observer", "observer_of"]

#: the ledger of the `agentspec run` turn in progress (it prints it), if any
COLLECTING: ContextVar[Ledger | None] = ContextVar("agentspec_collecting", default=None)
#: the background job whose agent runs in this task: (job id, its ledger)
JOB: ContextVar[tuple[str, Ledger] | None] = ContextVar("agentspec_job", default=None)
#: `run --verbose`: called with (agent, request) before each model call
REQUESTS: ContextVar[Callable[[str, LlmRequest], None] | None] = ContextVar(
    "agentspec_requests", default=None)

_RUNS_KEPT = 256  # runs whose sums are kept (a run that fails never reaches after_run)


class Observer(BasePlugin):
    """See the module docstring."""

    def __init__(self, *, spec: str, kinds: Mapping[str, str] | None = None,
                 budget: Mapping[str, float | int | None] | None = None,
                 prices: Mapping[str, Mapping[str, float | None]] | None = None) -> None:
        super().__init__(name="agentspec_observer")
        self.spec = spec
        self.kinds = dict(kinds or {})
        self.budget = dict(budget or {})
        self.prices = {k: dict(v) for k, v in (prices or {}).items()}
        self.runs: OrderedDict[str, Ledger] = OrderedDict()

    # spans -------------------------------------------------------------------------------

    async def before_run_callback(self, *, invocation_context: InvocationContext) -> None:
        job = JOB.get()
        set_attributes(**{"agentspec.language.name": self.spec,
                          "agentspec.job.id": job[0] if job else None})
        return None

    async def before_agent_callback(self, *, agent: BaseAgent,
                                    callback_context: CallbackContext) -> None:
        set_attributes(**{"agentspec.language.name": self.spec, "agentspec.agent.name": agent.name,
                          "agentspec.agent.kind": self.kinds.get(agent.name)})
        return None

    # usage and budget --------------------------------------------------------------------

    def _run(self, invocation_id: str) -> Ledger:
        ledger = self.runs.get(invocation_id)
        if ledger is None:
            ledger = self.runs[invocation_id] = Ledger()
            while len(self.runs) > _RUNS_KEPT:
                self.runs.popitem(last=False)
        return ledger

    async def before_model_callback(self, *, callback_context: CallbackContext,
                                    llm_request: LlmRequest) -> LlmResponse | None:
        agent = callback_context.agent_name
        set_attributes(**{"agentspec.agent.name": agent,
                          "agentspec.agent.kind": self.kinds.get(agent)})
        job = JOB.get()
        if job is not None:
            self._check("job", job[1], agent)
        else:
            self._check("run", self._run(callback_context.invocation_id), agent)
        ANSWERED_BY.set(None)
        show = REQUESTS.get()
        if show is not None:
            show(agent, llm_request)
        return None

    def _check(self, scope: str, ledger: Ledger, agent: str) -> None:
        tokens, cost = self.budget.get(f"{scope}_tokens"), self.budget.get(f"{scope}_cost")
        spent = ledger.total
        if tokens is not None and spent.total >= tokens:
            raise BudgetExceeded(
                f"the {scope}'s budget of {int(tokens)} tokens is spent ({spent.total} "
                f"tokens in {spent.calls} model calls); agent `{agent}`'s next model call "
                f"was not made (`budget.{scope}.tokens`)")
        if cost is not None and spent.cost is None:
            raise BudgetExceeded(
                f"the {scope}'s cost is unknown (a model without a price answered), so its "
                f"budget of ${cost} cannot be kept; agent `{agent}`'s next model call was "
                f"not made (give every model a `price:`)")
        if cost is not None and spent.cost is not None and spent.cost >= cost:
            raise BudgetExceeded(
                f"the {scope}'s budget of ${cost} is spent (${spent.cost:.4f} in "
                f"{spent.calls} model calls); agent `{agent}`'s next model call was not "
                f"made (`budget.{scope}.cost`)")

    async def after_model_callback(self, *, callback_context: CallbackContext,
                                   llm_response: LlmResponse) -> LlmResponse | None:
        if llm_response.partial:  # a streamed chunk: the final response carries the sums
            return None
        usage = llm_response.usage_metadata
        call = call_tokens(usage) if usage is not None else Tokens(calls=1)
        model = ANSWERED_BY.get() or _model_of(callback_context) or "unknown"
        call.cost = 0.0 if _costs_nothing(callback_context) else \
            call_cost(call, model, self.prices) if usage is not None else None
        agent = callback_context.agent_name
        job = JOB.get()
        for ledger in (self._run(callback_context.invocation_id), COLLECTING.get(),
                       job[1] if job else None):
            if ledger is not None:
                ledger.record(agent, model, call)
        note("agentspec.usage", **{"agentspec.model": model,
                                   "agentspec.usage.input_tokens": call.prompt,
                                   "agentspec.usage.output_tokens": call.output,
                                   "agentspec.usage.cost_usd": call.cost})
        return None

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        self.runs.pop(invocation_context.invocation_id, None)
        return None


def _costs_nothing(callback_context: CallbackContext) -> bool:
    """A scripted model's call: no service was called."""
    agent = callback_context._invocation_context.agent
    return bool(getattr(type(getattr(agent, "canonical_model", None)), "COSTS_NOTHING", False))


def _model_of(callback_context: CallbackContext) -> str | None:
    agent = callback_context._invocation_context.agent
    model = getattr(agent, "canonical_model", None)
    name = getattr(model, "model", None)
    return name if isinstance(name, str) else None


def observer(*, spec: str, kinds: Mapping[str, str] | None = None,
             telemetry: Mapping[str, Any] | None = None,
             budget: Mapping[str, float | int | None] | None = None,
             prices: Mapping[str, Mapping[str, float | None]] | None = None) -> Observer:
    """The plugin a generated app carries; with `telemetry`, the process traces from now on
    (unless the `OTEL_*` environment or the host program set tracing up already)."""
    if telemetry is not None:
        install_tracing(**telemetry)
    return Observer(spec=spec, kinds=kinds, budget=budget, prices=prices)


def observer_of(app: Any) -> Observer:
    """The app's observer, added when its spec asked for none (`agentspec run`, `test`)."""
    for plugin in app.plugins:
        if isinstance(plugin, Observer):
            return plugin
    added = Observer(spec=app.name)
    app.plugins.append(added)
    return added


@contextmanager
def collecting(ledger: Ledger) -> Iterator[Ledger]:
    """Model calls made in this context (and the tasks it starts) are summed in `ledger`."""
    token = COLLECTING.set(ledger)
    try:
        yield ledger
    finally:
        COLLECTING.reset(token)
