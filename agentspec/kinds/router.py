"""`kind: router`: picks one child per turn, by a state key, a python function or a model."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentspec.diagnostics import codes
from agentspec.ir.plan import Call, Import, ListOf, Value
from agentspec.ir.tree import RouteNode, RouterNode
from agentspec.ir.values import kwargs, lit, model_value, python_object
from agentspec.kinds.kind import Kind, Site
from agentspec.language.agents import RouterAgent
from agentspec.review.rule import AgentPair, Found, Rule

if TYPE_CHECKING:
    from agentspec.ir.lower import Lowering
    from agentspec.ir.planning import PlanBuilder
    from agentspec.validate.semantic.context import Context

__all__ = ["KIND"]


def check(ctx: Context, name: str, agent: RouterAgent) -> None:
    route, base = agent.route, ("agents", name)
    methods = [m for m in ("state", "model", "python") if getattr(route, m) is not None]
    if len(methods) != 1:
        found = ", ".join(f"`{m}`" for m in methods) or "none"
        ctx.report(codes.ROUTER_ROUTE(
            f"`route` needs exactly one of `state`, `model`, `python`; found {found}",
            ctx.at(*base, "route"), hint="keep one route method"))
    if route.map is not None and route.state is None:
        ctx.report(codes.ROUTER_ROUTE("`map` works only with `state`",
                                      ctx.key_at(*base, "route", "map")))
    if route.map is not None and route.routes is not None:
        ctx.report(codes.ROUTER_ROUTE("`map` and `routes` are the same table; give one",
                                      ctx.key_at(*base, "route", "map"),
                                      hint="move the `map` entries into `routes`"))
    if route.instruction is not None and route.model is None:
        ctx.report(codes.ROUTER_ROUTE("`instruction` works only with `model`",
                                      ctx.key_at(*base, "route", "instruction")))
    children = {c for c in agent.sub_agents or () if isinstance(c, str)}
    options: list[tuple[str, tuple[str | int, ...]]] = (
        [(agent.default, (*base, "default"))] if agent.default else [])
    options += [(f, (*base, "fallback", i)) for i, f in enumerate(agent.fallback or ())]
    options += [(t, (*base, "route", field, k)) for field in ("map", "routes")
                for k, t in (getattr(route, field) or {}).items()]
    for option, path in options:
        if option in ctx.defined["agents"] and option not in children:
            ctx.report(codes.ROUTER_MEMBER(
                f"`{option}` is not one of `{name}`'s sub_agents", ctx.at(*path),
                hint=f"add `{option}` to `sub_agents` or pick one of them"))


def lower(lowering: Lowering, name: str, agent: RouterAgent, site: Site) -> RouterNode:
    route = agent.route
    python = None if route.python is None else lowering.python(
        route.python, lowering.span("agents", name, "route", "python"))
    model, _, _ = lowering.model(route.model)
    table = route.routes if route.routes is not None else route.map  # one table: key -> agent
    return RouterNode(**site.common, route=RouteNode(
        state=route.state, map=None if table is None else tuple(table.items()),
        python=python, model=model, instruction=route.instruction, default=agent.default,
        fallback=tuple(agent.fallback or ())))


def plan(builder: PlanBuilder, node: RouterNode, children: list[Value]) -> Call:
    route = node.route
    return Call(Import("agentspec.runtime.router", "router"), kwargs(
        name=node.name, description=lit(node.description),
        sub_agents=ListOf(tuple(children)), state=lit(route.state),
        map=None if route.map is None else lit(dict(route.map)),
        function=None if route.python is None else python_object(route.python),
        model=model_value(route.model), instruction=lit(route.instruction),
        default=route.default, fallback=lit(list(route.fallback)) if route.fallback else None,
        mode=node.mode, **builder.callbacks(node)))


def label(node: RouterNode) -> list[str]:
    route = node.route
    how = (f"state {route.state}" if route.state else f"python {route.python.ref}"
           if route.python else f"model {route.model.id if route.model else '?'}")
    return [node.name, "router", *(["offline (background job)"] if node.offline else []),
            f"route: {how}"]


def _route_changed(pair: AgentPair) -> Iterator[Found]:
    was = pair.before.route if isinstance(pair.before, RouterNode) else None
    now = pair.after.route if isinstance(pair.after, RouterNode) else None
    if was != now:
        yield Found("medium", "the route changed", ("route",), ("route",))


KIND: Kind[RouterAgent, RouterNode] = Kind(
    names=("router",), spec=(RouterAgent,), node=RouterNode, check=check, lower=lower,
    plan=plan, label=label, edge=lambda node: "option",
    rules=(Rule(codes.ROUTE_CHANGED, ("RouterNode.route", "RouteNode.*"), _route_changed),))
