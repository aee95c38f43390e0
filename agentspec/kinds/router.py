"""`kind: router`: picks one child per turn, by a state key, a python function or a model."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from agentspec.contract.frozen import FrozenMap
from agentspec.diagnostics import codes
from agentspec.diagnostics.model import Risk
from agentspec.ir.tree import LlmFields, LlmNode, ModelNode, RouteNode, RouterNode, ToolNode
from agentspec.kindapi import Kind, Site
from agentspec.kindapi.rule import Found, Path, Rule
from agentspec.kinds.workflow import check_children
from agentspec.language.agents import TOOL_ERRORS_DEFAULT, RouterAgent
from agentspec.validate.semantic.references import agent_reference, model_reference

if TYPE_CHECKING:
    from agentspec.ir.lower import Lowering
    from agentspec.ir.plan import Call, Value
    from agentspec.ir.planning import PlanBuilder
    from agentspec.review.ruletypes import AgentPair
    from agentspec.validate.semantic.context import Context

__all__ = ["KIND"]


def check(ctx: Context, name: str, agent: RouterAgent) -> None:
    check_children(ctx, name, agent, "router")
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
    return RouterNode(**site.common, mode=site.mode, route=RouteNode(
        state=route.state, map=None if table is None else FrozenMap(table),
        python=python, model=model, instruction=route.instruction, default=agent.default,
        fallback=tuple(agent.fallback or ())))


def plan(builder: PlanBuilder, node: RouterNode, children: list[Value]) -> Call:
    # deferred: validate imports every kind, and plans nothing
    from agentspec.ir.plan import Call, Import, ListOf
    from agentspec.ir.values import kwargs, lit, model_value, python_object

    route = node.route
    return Call(Import("agentspec.runtime.router", "router"), kwargs(
        name=node.name, description=lit(node.description),
        sub_agents=ListOf(tuple(children)), state=lit(route.state),
        map=None if route.map is None else lit(dict(route.map)),
        function=None if route.python is None else python_object(route.python),
        model=model_value(route.model), instruction=lit(route.instruction),
        default=route.default, fallback=lit(list(route.fallback)) if route.fallback else None,
        mode=node.mode, **builder.callbacks(node)))


def _how(route: RouteNode) -> str:
    return (f"state {route.state}" if route.state else f"python {route.python.ref}"
            if route.python else f"model {route.model.id if route.model else '?'}")


def label(node: RouterNode) -> list[str]:
    return [node.name, "router", *(["offline (background job)"] if node.offline else []),
            f"route: {_how(node.route)}"]


def _route_change(was: RouteNode | None, now: RouteNode | None) -> str:
    """What a reviewer needs to look at: how it routes, and which other settings moved."""
    if was is None or now is None:
        return "the route changed"
    before, after = _how(was), _how(now)
    same_way = before.split()[0] == after.split()[0]  # `model a -> b`, not `model a -> model b`
    parts = [] if before == after else [
        f"{before} -> {after.split(maxsplit=1)[1] if same_way else after}"]
    parts += [field for field in ("map", "instruction", "default", "fallback")
              if getattr(was, field) != getattr(now, field)]
    return "the route changed" + (f": {', '.join(parts)}" if parts else "")


def _route_changed(pair: AgentPair) -> Iterator[Found]:
    was = pair.before.route if isinstance(pair.before, RouterNode) else None
    now = pair.after.route if isinstance(pair.after, RouterNode) else None
    if was != now:
        yield Found(Risk.MEDIUM, _route_change(was, now), ("route",), ("route",))


def _models(node: RouterNode) -> tuple[ModelNode | None]:
    return (node.route.model,)


def _tools(node: RouterNode) -> tuple[ToolNode, ...]:
    return ()


def _as_llm(node: RouterNode) -> LlmFields:
    return LlmNode(name=node.name, file=node.file, line=node.line,
                   tool_errors=TOOL_ERRORS_DEFAULT)


def _example(name: str, model: str, children: tuple[str, ...]) -> dict[str, Any]:
    return {"kind": name, "sub_agents": list(children), "route": {"state": "route"},
            **({"default": children[0]} if children else {})}


def _references(ctx: Context, name: str, agent: RouterAgent) -> None:
    base = ("agents", name)
    model_reference(ctx, agent.route.model, *base, "route", "model")
    if agent.default:
        agent_reference(ctx, agent.default, *base, "default")
    for index, option in enumerate(agent.fallback or ()):
        agent_reference(ctx, option, *base, "fallback", index)
    for field in ("map", "routes"):
        for key, target in (getattr(agent.route, field) or {}).items():
            agent_reference(ctx, target, *base, "route", field, key)


def _python_refs(name: str, agent: RouterAgent) -> Iterator[tuple[Path, str]]:
    if agent.route.python is not None:
        yield ("agents", name, "route", "python"), agent.route.python


def _marks(node: RouterNode, child: str) -> tuple[str, ...]:
    return tuple(mark for mark, names in (("default", (node.route.default,)),
                                          ("fallback", node.route.fallback))
                 if child in names)


KIND: Kind[RouterAgent, RouterNode] = Kind(
    names=("router",), spec=(RouterAgent,), node=RouterNode, name_of=lambda node: "router",
    check=check, lower=lower, plan=plan, models=_models, tools=_tools, as_llm=_as_llm,
    label=label, edge=lambda node: "option", example=_example, answers=lambda name, text: {},
    references=_references, python_refs=_python_refs, instructions=Kind.nothing,
    plan_state=None, tools_at=("tools",), runs_agents=Kind.none, marks=_marks,
    # a model route asks a classifier agent of its own
    model_agents=lambda node: (f"{node.name}_classifier",) if node.route.model else (),
    rules=(Rule(codes.ROUTE_CHANGED, ("RouterNode.route", "RouteNode.*"), _route_changed),),
    codes=(codes.ROUTER_ROUTE, codes.ROUTER_MEMBER, codes.ROUTE_CHANGED))
