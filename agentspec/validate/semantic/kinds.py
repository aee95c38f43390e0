"""Rules of each agent kind, and of the sections that are not agents."""

from __future__ import annotations

import re

from agentspec.diagnostics import codes
from agentspec.resolve.interpolate import has_env_ref
from agentspec.spec.agents import (
    LlmAgent,
    LoopAgent,
    ParallelAgent,
    PlannerAgent,
    RouterAgent,
    SequentialAgent,
)
from agentspec.spec.document import FractionTrigger, KeepEvents, KeepInvocations
from agentspec.spec.models import ModelDef, ThinkingConfig
from agentspec.spec.tools import BuiltinTool
from agentspec.validate.semantic.context import Context

__all__ = ["check_kinds", "check_sections"]

MAX_DEPTH, MAX_SUBTASKS, MAX_LEAVES = 6, 16, 1024
_STORE = re.compile(r"^(memory://|sqlite:///.+|postgres(ql)?(\+\w+)?://.+)$")


def _children(agent: object) -> list[str]:
    return [c for c in getattr(agent, "sub_agents", None) or () if isinstance(c, str)]


def _router(ctx: Context, name: str, agent: RouterAgent) -> None:
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
    if route.instruction is not None and route.model is None:
        ctx.report(codes.ROUTER_ROUTE("`instruction` works only with `model`",
                                      ctx.key_at(*base, "route", "instruction")))
    children = set(_children(agent))
    options: list[tuple[str, tuple[str | int, ...]]] = (
        [(agent.default, (*base, "default"))] if agent.default else [])
    options += [(f, (*base, "fallback", i)) for i, f in enumerate(agent.fallback or ())]
    options += [(t, (*base, "route", "map", k)) for k, t in (route.map or {}).items()]
    for option, path in options:
        if option in ctx.defined["agents"] and option not in children:
            ctx.report(codes.ROUTER_MEMBER(
                f"`{option}` is not one of `{name}`'s sub_agents", ctx.at(*path),
                hint=f"add `{option}` to `sub_agents` or pick one of them"))


def _planner(ctx: Context, name: str, agent: PlannerAgent) -> None:
    base = ("agents", name)
    depth_ok = 1 <= agent.max_depth <= MAX_DEPTH
    subtasks_ok = 1 <= agent.max_subtasks <= MAX_SUBTASKS
    if not depth_ok:
        ctx.report(codes.PLANNER_BOUNDS(f"`max_depth` must be between 1 and {MAX_DEPTH}",
                                        ctx.at(*base, "max_depth")))
    if not subtasks_ok:
        ctx.report(codes.PLANNER_BOUNDS(f"`max_subtasks` must be between 1 and {MAX_SUBTASKS}",
                                        ctx.at(*base, "max_subtasks")))
    if depth_ok and subtasks_ok and agent.max_subtasks ** agent.max_depth > MAX_LEAVES:
        span = ctx.at(*base, "max_subtasks") if ctx.has(*base, "max_subtasks") else ctx.at(
            *base, "max_depth")
        ctx.report(codes.PLANNER_BOUNDS(
            f"up to {agent.max_subtasks ** agent.max_depth:,} leaf calls "
            f"({agent.max_subtasks} ** {agent.max_depth}); the limit is {MAX_LEAVES}", span,
            hint="lower `max_subtasks` or `max_depth`"))


def _has_exit_loop(ctx: Context, start: str) -> bool:
    """Whether `start` or any agent below it has the `exit_loop` builtin tool."""
    seen, todo = {start}, [start]
    while todo:
        agent = ctx.spec.agents.get(todo.pop())
        for tool in getattr(agent, "tools", None) or ():
            target = (ctx.spec.tools or {}).get(tool) if isinstance(tool, str) else tool
            if isinstance(target, BuiltinTool) and target.builtin == "exit_loop":
                return True
        fresh = [c for c in _children(agent) if c not in seen]
        seen.update(fresh)
        todo.extend(fresh)
    return False


def _loop(ctx: Context, name: str, agent: LoopAgent) -> None:
    if agent.max_iterations is not None:
        if agent.max_iterations < 1:
            ctx.report(codes.LOOP_ITERATIONS(
                f"`max_iterations` is {agent.max_iterations}; a loop needs at least 1",
                ctx.at("agents", name, "max_iterations")))
        return
    if not any(_has_exit_loop(ctx, c) for c in _children(agent)):
        ctx.report(codes.LOOP_UNBOUNDED(
            f"`{name}` has no `max_iterations` and no child with the `exit_loop` tool",
            ctx.key_at("agents", name), hint="add `max_iterations: 5`"))


def _thinking(ctx: Context, thinking: ThinkingConfig | None, *path: str | int) -> None:
    if thinking is not None and thinking.budget is not None and thinking.level is not None:
        ctx.report(codes.ONE_OF("`thinking` takes a `budget` or a `level`, not both",
                                ctx.key_at(*path, "level"),
                                hint="Gemini refuses requests that set both; keep one"))


def _llm(ctx: Context, name: str, agent: LlmAgent) -> None:
    _thinking(ctx, agent.thinking, "agents", name, "thinking")
    if agent.instruction is not None and agent.instruction_file is not None:
        ctx.report(codes.ONE_OF("`instruction` and `instruction_file` exclude each other",
                                ctx.key_at("agents", name, "instruction_file"),
                                hint="keep one of them"))


def check_kinds(ctx: Context) -> None:
    for name, agent in ctx.agents():
        if isinstance(agent, (SequentialAgent, ParallelAgent, LoopAgent, RouterAgent)) and \
                not agent.sub_agents and name not in ctx.broken:
            ctx.report(codes.WORKFLOW_NO_CHILDREN(
                f"`{agent.kind}` agent `{name}` has no sub_agents", ctx.key_at("agents", name),
                hint="list the agents it runs under `sub_agents`"))
        if isinstance(agent, RouterAgent):
            _router(ctx, name, agent)
        elif isinstance(agent, PlannerAgent):
            _planner(ctx, name, agent)
        elif isinstance(agent, LoopAgent) and name not in ctx.broken:
            _loop(ctx, name, agent)
        elif isinstance(agent, LlmAgent):
            _llm(ctx, name, agent)


def _context_windows(ctx: Context) -> list[int]:
    models = ctx.spec.models or {}
    windows = []
    for _, agent in ctx.llm_agents():
        definition = models.get(agent.model or "")
        if isinstance(definition, ModelDef) and definition.context_window:
            windows.append(definition.context_window)
    return windows


def _summarization(ctx: Context) -> None:
    summary = ctx.spec.summarization
    if summary is None:
        return
    if isinstance(summary.trigger, FractionTrigger) and not _context_windows(ctx):
        ctx.report(codes.FRACTION_NEEDS_WINDOW(
            "a `fraction` trigger needs a `context_window` on the models the agents use",
            ctx.at("summarization", "trigger", "fraction"),
            hint="add `context_window:` to the model definition, or use `{tokens: N}`"))
    by_tokens = not hasattr(summary.trigger, "invocations")
    keep = summary.keep
    if (by_tokens and isinstance(keep, KeepInvocations)) or (
            not by_tokens and isinstance(keep, KeepEvents)):
        wanted = "events" if by_tokens else "invocations"
        ctx.report(codes.ONE_OF(
            f"this trigger keeps `{wanted}`, not `{'invocations' if by_tokens else 'events'}`",
            ctx.at("summarization", "keep"),
            hint=f"write `keep: {{{wanted}: N}}` (ADK pairs token triggers with kept events "
            "and invocation triggers with kept invocations)"))


def check_sections(ctx: Context) -> None:
    _summarization(ctx)
    for name, model in (ctx.spec.models or {}).items():
        if isinstance(model, ModelDef):
            _thinking(ctx, model.thinking, "models", name, "thinking")
    jobs = ctx.spec.jobs
    if jobs is not None and not has_env_ref(jobs.store) and not _STORE.match(jobs.store):
        ctx.report(codes.INVALID_STORE_URL(
            f"`{jobs.store}` is not a job store URL", ctx.at("jobs", "store"),
            hint="use `memory://`, `sqlite:///path/jobs.db` or `postgresql://host/db`"))
