"""Models made of named models: `{fallback: [...]}` and `{route: ..., models: [...]}`.

The failover rules are a router's (`agentspec.runtime.router`), per model call: a call that
raises before its first response (connection refused, 429, 5xx, a timeout, any error) goes to
the next option; once a response has arrived, an error propagates (the agent has part of an
answer). A model never runs twice in one call. When every option failed, `ModelsFailed`
names each failure in order.

A routed model picks per call: by a session-state value (optionally mapped), or by a python
function `fn(model_names, ctx, failed) -> name | None` (which may be async, and is asked
again, with the names that failed, before `fallback`). A route that names none of its
`models` gives the first of them. Reading state needs the calling agent's context, which
`ModelCallContext` (an App plugin) publishes before each model call.
"""

from __future__ import annotations

import copy
import inspect
import logging
from collections.abc import AsyncGenerator, Callable
from contextvars import ContextVar
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from pydantic import ConfigDict, Field

from agentspec.runtime.blame import CALLING_AGENT, ModelError, model_error
from agentspec.runtime.telemetry import note
from agentspec.runtime.usage import ANSWERED_BY

__all__ = ["CALL", "FallbackLlm", "ModelCallContext", "ModelsFailed", "RoutedLlm",
           "fallback", "routed"]

#: the context of the model call in progress (set by `ModelCallContext`)
CALL: ContextVar[CallbackContext | None] = ContextVar("agentspec_model_call", default=None)


#: one line per switch to another model after a failure (`agentspec run` prints them)
SWITCHES = logging.getLogger("agentspec.models")


class ModelsFailed(ModelError):
    """Every model a call could go to failed before its first response; `tried` holds each
    one's failure, in order."""

    def __init__(self, model: str, tried: list[ModelError], agent: str | None = None) -> None:
        self.tried = tried
        chain = "; ".join(f"`{each.model}`" + (f" at {each.endpoint}" if each.endpoint else "")
                          + f": {each.cause}" for each in tried)
        super().__init__(f"every model failed before answering ({chain})", model=model,
                         agent=agent)


class _Composite(BaseLlm):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    #: name -> model, every model it may call
    members: dict[str, BaseLlm] = Field(default_factory=dict)
    fallback: list[str] = Field(default_factory=list)

    async def _first_choice(self) -> str:
        raise NotImplementedError

    async def _next_choice(self, failed: list[str]) -> str | None:
        return next((name for name in self.fallback if name not in failed), None)

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        failures: list[tuple[str, BaseException]] = []
        tried: list[ModelError] = []
        choice: str | None = await self._first_choice()
        while choice is not None:
            answered = False
            model = self.members[choice]
            try:
                async for response in model.generate_content_async(
                        _request_for(model, llm_request), stream=stream):
                    answered = True
                    ANSWERED_BY.set(model.model)
                    yield response
                return
            except Exception as error:  # noqa: BLE001 - any early failure moves on
                if answered:
                    raise
                failures.append((choice, error))
                failed = model_error(model, error)
                tried.append(ModelError(failed.cause, model=choice, endpoint=failed.endpoint))
            choice = await self._next_choice([name for name, _ in failures])
            if choice is not None:
                SWITCHES.warning("%smodel `%s` failed (%s); trying `%s`", _agent_prefix(),
                                 tried[-1].model, tried[-1].cause, choice)
                note("agentspec.model.fallback", **{"agentspec.model.failed": tried[-1].model,
                                                    "agentspec.model.next": choice})
        raise ModelsFailed(self.model, tried) from failures[-1][1] if failures else None


def _agent_prefix() -> str:
    agent = CALLING_AGENT.get()
    return f"[{agent}] " if agent else ""


def _request_for(model: BaseLlm, request: LlmRequest) -> LlmRequest:
    """The request as one member sees it: its own model id, and contents and settings of
    its own (a model may change them; the next one must get them as they were)."""
    return request.model_copy(update={
        "model": model.model, "contents": copy.deepcopy(request.contents),
        "config": request.config.model_copy(deep=True)})


class FallbackLlm(_Composite):
    """`fallback` in order (see the module docstring)."""

    async def _first_choice(self) -> str:
        return self.fallback[0]


class RoutedLlm(_Composite):
    """One of `choices` per call, then `fallback` (see the module docstring)."""

    choices: list[str] = Field(default_factory=list)
    route_state: str | None = None
    route_map: dict[str, str] | None = None
    route_function: Callable[..., Any] | None = None

    async def _first_choice(self) -> str:
        picked = await self._route([])
        return picked if picked in self.choices else self.choices[0]

    async def _next_choice(self, failed: list[str]) -> str | None:
        if self.route_function is not None:
            picked = await self._route(failed)
            if picked in self.members and picked not in failed:
                return picked
        return await super()._next_choice(failed)

    async def _route(self, failed: list[str]) -> str | None:
        context = CALL.get()
        if self.route_state is not None:
            if context is None:
                raise RuntimeError(f"model {self.model}: routing by state needs the "
                                   "ModelCallContext plugin on the App")
            value = context.state.get(self.route_state)
            if value is None:
                return None
            return self.route_map.get(str(value)) if self.route_map is not None else str(value)
        assert self.route_function is not None
        answer = self.route_function(list(self.choices), context, set(failed))
        if inspect.isawaitable(answer):
            answer = await answer
        return answer if isinstance(answer, str) else None


class ModelCallContext(BasePlugin):
    """Publishes each model call's context to routed models (a context variable: the call
    runs in the task that ran this callback)."""

    def __init__(self) -> None:
        super().__init__(name="agentspec_model_call_context")

    async def before_model_callback(self, *, callback_context: CallbackContext,
                                    llm_request: LlmRequest) -> LlmResponse | None:
        CALL.set(callback_context)
        return None


def fallback(*, name: str, models: dict[str, BaseLlm], order: list[str]) -> FallbackLlm:
    return FallbackLlm(model=name, members=models, fallback=order)


def routed(*, name: str, models: dict[str, BaseLlm], choices: list[str],
           fallback: list[str] | None = None, state: str | None = None,
           map: dict[str, str] | None = None,  # noqa: A002
           function: Callable[..., Any] | None = None) -> RoutedLlm:
    return RoutedLlm(model=name, members=models, choices=choices, fallback=list(fallback or []),
                     route_state=state, route_map=map, route_function=function)
