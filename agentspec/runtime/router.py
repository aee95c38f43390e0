"""`kind: router`: run exactly one sub-agent per invocation, falling back when it fails early.

The route gives a key: a session-state value, an LLM classifier's pick (structured output:
`{"agent": ..., "reason": ...}`, over the keys with their agents' descriptions), or a python
function `fn(keys, ctx, failed) -> key | None`; with `routes` (`key -> agent`, the spec's
`routes` or `map`) the key is looked up, without it the key is the agent's name. When it gives
nothing usable, `default` runs. When the chosen agent raises before it has emitted an event,
the next option runs: the python route asked again (with the failed keys, and, when its
signature has an `attempts` parameter, the failed `Attempt`s: agent, key and error), then
`fallback` in order; an agent already tried never runs again. A failure after the first event
propagates (the user has seen part of an answer). When every option fails, the first agent's
own error is raised (so it is blamed as what it is: a model service, the user's code), with
the chain of attempts as a note (`attempts_note`).

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

__all__ = ["ROUTE_KEY", "Attempt", "RouterAgent", "RoutingError", "attempts_note", "classifier",
           "router"]

ROUTE_KEY = "agentspec:route:{name}"

_CLASSIFIER_PROMPT = """\
You route the user's latest request to exactly one agent. The agents:
{agents}

Answer with the name of the agent best suited to handle the request, and a short reason.
{extra}"""


_NOTE = "router {name}: every option failed before answering: "


class RoutingError(RuntimeError):
    """No agent could be chosen."""


@dataclass(frozen=True)
class Attempt:
    """A chosen agent that failed before its first event, as a python route sees it."""

    agent: str
    key: str
    error: BaseException


def attempts_note(error: BaseException) -> str | None:
    """The chain of attempts a router added to the error it raised, if it did."""
    notes = getattr(error, "__notes__", None) or []
    return next((n for n in notes if isinstance(n, str) and n.startswith("router ")
                 and "every option failed" in n), None)


def _takes_attempts(function: Callable[..., Any]) -> bool:
    try:
        parameter = inspect.signature(function).parameters.get("attempts")
    except (TypeError, ValueError):  # a builtin or C callable: the three-argument form
        return False
    return parameter is not None and parameter.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


@dataclass(frozen=True)
class _Choice:
    agent: str | None
    reason: str
    broken: dict[str, str] | None = None  # the route raised on the way: {agent, error}
    key: str | None = None  # what the route gave, when `routes` maps it to `agent`


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
        choice: _Choice | None = await self._first_choice(ctx, children)
        while choice is not None:
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
                choice = await self._next_choice(ctx, children, failures)
        # raised here, outside the handler, so the error keeps its own cause and context
        raise self._every_option_failed(failures)

    def _every_option_failed(self, failures: list[tuple[_Choice, BaseException]]
                             ) -> BaseException:
        """The first agent's error, carrying the chain of attempts (its cause, a model or
        the user's code, is what the run blames)."""
        first = failures[0][1]
        chain = "; ".join(f"{tried.agent}: {type(exc).__name__}: {exc}"
                          for tried, exc in failures)
        if attempts_note(first) is None:
            first.add_note(_NOTE.format(name=self.name) + chain)
        return first

    # choosing ------------------------------------------------------------------------------

    async def _first_choice(self, ctx: InvocationContext,
                            children: dict[str, BaseAgent]) -> _Choice:
        try:
            choice = await self._route(ctx, children, [])
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
                asked = await self._route(ctx, children, failures)
            except Exception as error:  # noqa: BLE001 - then the fallback list decides
                asked, broken = _Choice(None, ""), self._broken(error)
            if asked.agent in children and asked.agent not in failed:
                return _Choice(asked.agent, asked.reason, key=asked.key)
        for name in self.fallback:
            if name not in failed:
                return _Choice(name, "the next fallback", broken)
        return None

    def _broken(self, error: BaseException) -> dict[str, str]:
        """A route that raised, as its record keeps it: the classifier or the router."""
        agent = self.classifier.name if self.classifier is not None else self.name
        return {"agent": agent, "error": f"{type(error).__name__}: {error}"}

    def _keys(self, children: dict[str, BaseAgent]) -> list[str]:
        """What the route chooses among: the `routes` keys, or the agents' names."""
        return list(self.route_map) if self.route_map is not None else list(children)

    async def _route(self, ctx: InvocationContext, children: dict[str, BaseAgent],
                     failures: list[tuple[_Choice, BaseException]]) -> _Choice:
        choice = await self._pick(ctx, children, failures)
        if self.route_map is None or choice.agent is None:
            return choice
        key, mapped = choice.agent, self.route_map.get(choice.agent)
        return _Choice(mapped, f"{choice.reason}, mapped to {mapped!r}" if mapped else
                       f"{choice.reason}, which `routes` does not list", choice.broken, key)

    async def _pick(self, ctx: InvocationContext, children: dict[str, BaseAgent],
                    failures: list[tuple[_Choice, BaseException]]) -> _Choice:
        """The key the route method gives (not yet looked up in `routes`)."""
        if self.route_state is not None:
            value = ctx.session.state.get(self.route_state)
            if value is None:
                return _Choice(None, f"state `{self.route_state}` is not set")
            return _Choice(str(value), f"state `{self.route_state}` is {value!r}")
        if self.route_function is not None:
            failed = {tried.key or str(tried.agent) for tried, _ in failures}
            extra: dict[str, Any] = {}
            if _takes_attempts(self.route_function):
                extra["attempts"] = tuple(
                    Attempt(str(tried.agent), tried.key or str(tried.agent), error)
                    for tried, error in failures)
            answer = self.route_function(self._keys(children), ReadonlyContext(ctx), failed,
                                         **extra)
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
            **({"key": choice.key} if choice.key is not None else {}),
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
    """A router over `sub_agents`; exactly one of `state`, `function`, `model` routes, and
    `map` (the spec's `routes`, or `map` with `state`) turns the key it gives into an agent."""
    judge = None
    if model is not None:
        described = {a.name: a.description or "no description" for a in sub_agents}
        options = ([(key, described.get(agent, "no description")) for key, agent in map.items()]
                   if map is not None else list(described.items()))
        judge = classifier(name, model, options, instruction)
    return RouterAgent(name=name, description=description or "", sub_agents=sub_agents,
                       route_state=state, route_map=map, route_function=function,
                       classifier=judge, default=default, fallback=list(fallback or []),
                       mode=mode, **callbacks)
