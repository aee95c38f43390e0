"""`kind: router`: run exactly one sub-agent per invocation, falling back when it fails early.

The route names the agent: a session-state value (optionally mapped), an LLM classifier that
picks by the children's descriptions (structured output: `{"agent": ..., "reason": ...}`), or
a python function `fn(agent_names, ctx, failed) -> name | None`. When it gives nothing usable,
`default` runs. When the chosen agent raises before it has emitted an event, the next option
runs: the python route asked again with the failed names, then `fallback` in order; a name
already tried never runs again. A failure after the first event propagates (the user has seen
part of an answer). When every option fails, the last error is raised with the whole chain.

The choice, its reason, the failures before it and any error of the route itself (which
then gives `default`) are written to session state under
`agentspec:route:<router name>` by an event of the router's own (no content, so no model
sees it), emitted just before the chosen agent's first event: a router that emitted nothing
has not started, so it stays eligible for a fallback of an enclosing router.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Any

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.utils.context_utils import Aclosing
from pydantic import ConfigDict, Field

from agentspec.runtime.nodes import node_events
from agentspec.runtime.telemetry import note
from agentspec.runtime.workflows import NodeEntry, answer_aside

__all__ = ["ROUTE_KEY", "RouterAgent", "RoutingError", "classifier", "router"]

ROUTE_KEY = "agentspec:route:{name}"

_CLASSIFIER_PROMPT = """\
You route the user's latest request to exactly one agent. The agents:
{agents}

Answer with the name of the agent best suited to handle the request, and a short reason.
{extra}"""


class RoutingError(RuntimeError):
    """No agent could be chosen, or every agent tried failed before answering."""


@dataclass(frozen=True)
class _Choice:
    agent: str | None
    reason: str
    broken: dict[str, str] | None = None  # the route raised on the way: {agent, error}


class RouterAgent(NodeEntry, BaseAgent):
    """Runs one of `sub_agents` per invocation (see the module docstring)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    mode: str | None = None  # `single_turn` when called as a tool
    route_state: str | None = None
    route_map: dict[str, str] | None = None
    route_function: Callable[..., Any] | None = None
    classifier: LlmAgent | None = None
    default: str | None = None
    fallback: list[str] = Field(default_factory=list)

    @property
    def inner_agents(self) -> list[BaseAgent]:
        """Agents it runs that are not sub-agents (the classifier)."""
        return [self.classifier] if self.classifier is not None else []

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        children = {agent.name: agent for agent in self.sub_agents}
        failures: list[tuple[_Choice, BaseException]] = []
        choice = await self._first_choice(ctx, children)
        while True:
            assert choice.agent is not None
            emitted = False
            try:
                async with Aclosing(node_events(children[choice.agent], ctx)) as events:
                    async for event in events:
                        if not emitted:
                            emitted = True
                            yield self._record(ctx, choice, failures)
                        yield event
                return
            except Exception as error:  # noqa: BLE001 - any failure may fall back
                if emitted:
                    raise
                failures.append((choice, error))
                following = await self._next_choice(ctx, children, failures)
                if following is None:
                    chain = "; ".join(f"{tried.agent}: {type(exc).__name__}: {exc}"
                                      for tried, exc in failures)
                    raise RoutingError(f"router {self.name}: every option failed before "
                                       f"answering ({chain})") from error
                choice = following

    # choosing ------------------------------------------------------------------------------

    async def _first_choice(self, ctx: InvocationContext,
                            children: dict[str, BaseAgent]) -> _Choice:
        try:
            choice = await self._route(ctx, list(children), set())
        except Exception as error:  # noqa: BLE001 - a broken route falls to the default
            choice = _Choice(None, f"the route failed ({type(error).__name__}: {error})",
                             self._broken(error))
        if choice.agent in children:
            return choice
        if choice.agent is not None:
            choice = _Choice(None, f"{choice.reason}, which is not one of its agents")
        if self.default is None:
            raise RoutingError(f"router {self.name}: {choice.reason} and it has no default")
        return _Choice(self.default, f"{choice.reason}; the default", choice.broken)

    async def _next_choice(self, ctx: InvocationContext, children: dict[str, BaseAgent],
                           failures: list[tuple[_Choice, BaseException]]) -> _Choice | None:
        failed = {str(tried.agent) for tried, _ in failures}
        broken = None
        if self.route_function is not None:
            try:
                asked = await self._route(ctx, list(children), set(failed))
            except Exception as error:  # noqa: BLE001 - then the fallback list decides
                asked, broken = _Choice(None, ""), self._broken(error)
            if asked.agent in children and asked.agent not in failed:
                return _Choice(asked.agent, asked.reason)
        for name in self.fallback:
            if name not in failed:
                return _Choice(name, "the next fallback", broken)
        return None

    def _broken(self, error: BaseException) -> dict[str, str]:
        """A route that raised, as its record keeps it: the classifier or the router."""
        agent = self.classifier.name if self.classifier is not None else self.name
        return {"agent": agent, "error": f"{type(error).__name__}: {error}"}

    async def _route(self, ctx: InvocationContext, names: list[str],
                     failed: set[str]) -> _Choice:
        if self.route_state is not None:
            value = ctx.session.state.get(self.route_state)
            shown = f"state `{self.route_state}` is {value!r}"
            if value is None:
                return _Choice(None, f"state `{self.route_state}` is not set")
            if self.route_map is not None:
                mapped = self.route_map.get(str(value))
                return _Choice(mapped, f"{shown}, mapped to {mapped!r}" if mapped else
                               f"{shown}, which `map` does not list")
            return _Choice(str(value), shown)
        if self.route_function is not None:
            answer = self.route_function(names, ReadonlyContext(ctx), failed)
            if inspect.isawaitable(answer):
                answer = await answer
            name = getattr(self.route_function, "__name__", "the route function")
            return _Choice(answer if isinstance(answer, str) else None,
                           f"{name} chose {answer!r}")
        assert self.classifier is not None
        return await self._classify(ctx)

    async def _classify(self, ctx: InvocationContext) -> _Choice:
        """Asks the classifier; its events stay out of the conversation."""
        assert self.classifier is not None
        text = await answer_aside(self.classifier, ctx)
        try:
            answer = json.loads(text)
        except json.JSONDecodeError:
            return _Choice(None, f"the classifier's answer is not JSON: {text[:200]!r}")
        if not isinstance(answer, dict) or not isinstance(answer.get("agent"), str):
            return _Choice(None, f"the classifier named no agent: {text[:200]!r}")
        return _Choice(answer["agent"], f"the classifier: {answer.get('reason') or 'no reason'}")

    # recording -----------------------------------------------------------------------------

    def _record(self, ctx: InvocationContext, choice: _Choice,
                failures: list[tuple[_Choice, BaseException]]) -> Event:
        record: dict[str, Any] = {
            "agent": choice.agent, "reason": choice.reason,
            "failed": [{"agent": tried.agent, "reason": tried.reason,
                        "error": f"{type(exc).__name__}: {exc}"} for tried, exc in failures]}
        broken = [c.broken for c in (*(tried for tried, _ in failures), choice) if c.broken]
        if broken:
            record["route_errors"] = broken
        note("agentspec.route", **{"agentspec.router": self.name,
                                   "agentspec.route.agent": choice.agent,
                                   "agentspec.route.reason": choice.reason,
                                   "agentspec.route.failed": [str(t.agent) for t, _ in failures]})
        return Event(invocation_id=ctx.invocation_id, author=self.name, branch=ctx.branch,
                     actions=EventActions(state_delta={ROUTE_KEY.format(name=self.name): record}),
                     custom_metadata={"agentspec_route": record})


def classifier(router_name: str, model: Any, agents: list[tuple[str, str]],
               instruction: str | None = None) -> LlmAgent:
    """The LLM that picks a child by description, answering `{"agent", "reason"}`."""
    listing = "\n".join(f"- {name}: {description}" for name, description in agents)
    schema = {"type": "object", "properties": {
        "agent": {"type": "string", "enum": [name for name, _ in agents],
                  "description": "The agent that handles the request."},
        "reason": {"type": "string", "description": "Why, in one sentence."}},
        "required": ["agent", "reason"]}
    prompt = _CLASSIFIER_PROMPT.format(agents=listing, extra=instruction or "")
    return LlmAgent(name=f"{router_name}_classifier", model=model,
                    description=f"Chooses the agent of router {router_name}.",
                    static_instruction=prompt, output_schema=schema, mode="chat",
                    disallow_transfer_to_parent=True, disallow_transfer_to_peers=True)


def router(*, name: str, sub_agents: list[BaseAgent], description: str | None = None,
           state: str | None = None, map: dict[str, str] | None = None,  # noqa: A002
           function: Callable[..., Any] | None = None, model: Any = None,
           instruction: str | None = None, default: str | None = None,
           fallback: list[str] | None = None, mode: str | None = None,
           **callbacks: Any) -> RouterAgent:
    """A router over `sub_agents`; exactly one of `state`, `function`, `model` routes."""
    judge = None
    if model is not None:
        judge = classifier(name, model, [(a.name, a.description or "no description")
                                         for a in sub_agents], instruction)
    return RouterAgent(name=name, description=description or "", sub_agents=sub_agents,
                       route_state=state, route_map=map, route_function=function,
                       classifier=judge, default=default, fallback=list(fallback or []),
                       mode=mode, **callbacks)
