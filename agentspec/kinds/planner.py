"""`kind: planner`: a recursive planner that splits a task into subtasks, runs workers at the
leaves and synthesizes their answers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from agentspec.contract.frozen import FrozenMap
from agentspec.diagnostics import codes
from agentspec.diagnostics.model import Risk
from agentspec.ir.tree import LlmFields, LlmNode, ModelNode, PlannerNode, PlannerRoles, ToolNode
from agentspec.kindapi import Kind, Site
from agentspec.kindapi.rule import Found, Path, Rule, limit, model_text, text_diff
from agentspec.language.agents import TOOL_ERRORS_DEFAULT, PlannerAgent
from agentspec.validate.semantic.pyrefs import tool_refs
from agentspec.validate.semantic.references import model_reference, tool_references

if TYPE_CHECKING:
    from agentspec.ir.lower import Lowering
    from agentspec.ir.plan import Call, Value
    from agentspec.ir.planning import PlanBuilder
    from agentspec.review.ruletypes import AgentPair
    from agentspec.validate.semantic.context import Context

__all__ = ["KIND", "MAX_DEPTH", "MAX_LEAVES", "MAX_SUBTASKS"]

MAX_DEPTH, MAX_SUBTASKS, MAX_LEAVES = 6, 16, 1024
#: the agents a planner runs for its roles, by suffix (`agentspec.runtime.planner`)
ROLES = ("planner", "worker", "synthesizer")


def check(ctx: Context, name: str, agent: PlannerAgent) -> None:
    base = ("agents", name)
    if agent.results_key is not None and agent.results_key == agent.output_key:
        ctx.report(codes.PLANNER_RESULTS_KEY(
            f"`results_key` and `output_key` are both `{agent.output_key}`: one would overwrite "
            "the other", ctx.at(*base, "results_key"),
            hint="give every node's results a key of their own"))
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


def lower(lowering: Lowering, name: str, agent: PlannerAgent, site: Site) -> PlannerNode:
    worker, synthesizer = agent.worker, agent.synthesizer
    tools = [lowering.tool(name, index, entry, {}, where=("worker", "tools"))
             for index, entry in enumerate(worker.tools or () if worker else ())]
    # a role without a model of its own uses the planner's (the synthesizer: the worker's)
    planner_model = agent.model
    worker_model = (worker.model if worker else None) or planner_model
    synthesizer_model = (synthesizer.model if synthesizer else None) or worker_model
    roles = {"planner": lowering.model(planner_model), "worker": lowering.model(worker_model),
             "synthesizer": lowering.model(synthesizer_model)}
    errors = (worker and worker.tool_errors) or TOOL_ERRORS_DEFAULT
    return PlannerNode(**site.common, mode=site.mode, tool_errors=errors,
                       output_key=agent.output_key, results_key=agent.results_key,
                       roles=PlannerRoles(
        model=roles["planner"][0], instruction=agent.instruction,
        max_depth=agent.max_depth, max_subtasks=agent.max_subtasks,
        worker_model=roles["worker"][0],
        worker_instruction=worker.instruction if worker else None,
        worker_tools=tuple(tools), synthesizer_model=roles["synthesizer"][0],
        synthesizer_instruction=synthesizer.instruction if synthesizer else None,
        settings=tuple((role, FrozenMap(generate), FrozenMap(thinking))
                       for role, (_, generate, thinking) in roles.items())))


def plan(builder: PlanBuilder, node: PlannerNode, children: list[Value]) -> Call:
    # deferred: validate imports every kind, and plans nothing
    from agentspec.ir.plan import Call, DictOf, Import, ListOf
    from agentspec.ir.values import generate_config, kwargs, lit, model_value

    roles = node.roles
    called: list[Value] = []  # agents the workers call as tools
    tools = [v for t in roles.worker_tools if (v := builder.tool(t, called)) is not None]
    tools += [Call(Import("agentspec.runtime.planner", "agent_tool"), args=(agent,))
              for agent in called]
    return Call(Import("agentspec.runtime.planner", "planner"), kwargs(
        name=node.name, description=lit(node.description), model=model_value(roles.model),
        instruction=lit(roles.instruction), max_depth=roles.max_depth,
        max_subtasks=roles.max_subtasks, worker_model=model_value(roles.worker_model),
        worker_instruction=lit(roles.worker_instruction),
        worker_tools=ListOf(tuple(tools)) if tools else None,
        synthesizer_model=model_value(roles.synthesizer_model),
        synthesizer_instruction=lit(roles.synthesizer_instruction),
        tool_errors=node.tool_errors if node.tool_errors != "return" else None,
        output_key=lit(node.output_key), results_key=lit(node.results_key),
        configs=DictOf(tuple((role, config) for role, generate, thinking in roles.settings
                             if (config := generate_config(generate, thinking)) is not None))
        or None,
        mode=node.mode, **builder.callbacks(node)))


def label(node: PlannerNode) -> list[str]:
    return [node.name, "planner", *(["offline (background job)"] if node.offline else []),
            f"max_depth {node.roles.max_depth} · max_subtasks {node.roles.max_subtasks}",
            *([f"tool errors: {node.tool_errors}"] if node.tool_errors != "return" else [])]


_ROLES: tuple[tuple[str, str, str, Path], ...] = (
    ("planner", "model", "instruction", ()), ("worker", "worker_model", "worker_instruction",
                                              ("worker",)),
    ("synthesizer", "synthesizer_model", "synthesizer_instruction", ("synthesizer",)))


def _planner_roles(pair: AgentPair) -> Iterator[Found]:
    if not isinstance(pair.before, PlannerNode) or not isinstance(pair.after, PlannerNode):
        return
    before, after = pair.before.roles, pair.after.roles
    old_settings, new_settings = dict(
        (role, (g, t)) for role, g, t in before.settings), dict(
        (role, (g, t)) for role, g, t in after.settings)
    for role, model, instruction, where in _ROLES:
        was, now = getattr(before, model), getattr(after, model)
        if was != now:
            yield Found(Risk.MEDIUM, f"{role} model {model_text(was)} -> {model_text(now)}",
                        (*where, "model"), (*where, "model"))
        was, now = getattr(before, instruction), getattr(after, instruction)
        if was != now:
            yield Found(Risk.MEDIUM, f"the {role}'s instruction changed", (*where, "instruction"),
                        (*where, "instruction"),
                        text_diff(was, now, f"{pair.old.label}:{pair.old_name}:{role}",
                                   f"{pair.new.label}:{pair.name}:{role}"))
        if old_settings.get(role) != new_settings.get(role):
            yield Found(Risk.MEDIUM, f"the {role}'s model settings (generate, thinking) changed",
                        (*where, "model"), (*where, "model"))
def _bounds(pair: AgentPair) -> Iterator[Found]:
    if isinstance(pair.before, PlannerNode) and isinstance(pair.after, PlannerNode):
        for key in ("max_depth", "max_subtasks"):
            yield from limit(key, getattr(pair.before.roles, key),
                             getattr(pair.after.roles, key), (key,), (key,))


def _models(node: PlannerNode) -> tuple[ModelNode | None, ...]:
    roles = node.roles
    return roles.model, roles.worker_model, roles.synthesizer_model


def _tools(node: PlannerNode) -> tuple[ToolNode, ...]:
    return node.roles.worker_tools


def _as_llm(node: PlannerNode) -> LlmFields:
    return LlmNode(name=node.name, file=node.file, line=node.line,
                   tool_errors=node.tool_errors, output_key=node.output_key)


def _example(name: str, model: str, children: tuple[str, ...]) -> dict[str, Any]:
    return {"kind": name, "model": model}


def _answers(name: str, text: str) -> dict[str, list[dict[str, Any]]]:
    """The planner answers with no subtasks, a worker with `text`."""
    import json  # deferred: validate imports every kind, and only tests compose answers

    plan = json.dumps({"kind": "llm", "subtasks": []})
    return {f"{name}_planner": [{"text": plan}], f"{name}_worker": [{"text": text}]}


def _results_key(pair: AgentPair) -> Iterator[Found]:
    was = pair.before.results_key if isinstance(pair.before, PlannerNode) else None
    now = pair.after.results_key if isinstance(pair.after, PlannerNode) else None
    if was != now:
        yield Found(Risk.MEDIUM, f"the results key {was or 'none'} -> {now or 'none'}",
                    ("results_key",), ("results_key",))


def _references(ctx: Context, name: str, agent: PlannerAgent) -> None:
    base = ("agents", name)
    model_reference(ctx, agent.model, *base, "model")
    if agent.worker:
        model_reference(ctx, agent.worker.model, *base, "worker", "model")
        tool_references(ctx, agent.worker.tools, *base, "worker", "tools")
    if agent.synthesizer:
        model_reference(ctx, agent.synthesizer.model, *base, "synthesizer", "model")


def _python_refs(name: str, agent: PlannerAgent) -> Iterator[tuple[Path, str]]:
    if agent.worker is not None:
        yield from tool_refs(agent.worker.tools or (), ("agents", name, "worker", "tools"))


def _instructions(name: str, agent: PlannerAgent) -> Iterator[tuple[Path, str, str]]:
    """The worker's and synthesizer's instructions (the planner's is an LLM agent's)."""
    for role, settings in (("worker", agent.worker), ("synthesizer", agent.synthesizer)):
        if settings is not None and settings.instruction:
            yield (("agents", name, role, "instruction"), f"`{name}`'s {role} instruction",
                   settings.instruction)


def _runs_agents(node: PlannerNode) -> str:
    """The nodes it makes as it goes: `planner_2`, `planner_1_2_worker`."""
    return rf"{re.escape(node.name)}(?:_\d+)+(?:_(?:{'|'.join(ROLES)}))?"


KIND: Kind[PlannerAgent, PlannerNode] = Kind(
    names=("planner",), spec=(PlannerAgent,), node=PlannerNode,
    name_of=lambda node: "planner", check=check, lower=lower, plan=plan, models=_models,
    tools=_tools, as_llm=_as_llm, label=label, edge=lambda node: "option", example=_example,
    answers=_answers, references=_references, python_refs=_python_refs,
    instructions=_instructions, plan_state=lambda agent: agent.output_key,
    tools_at=("worker", "tools"),
    model_agents=lambda node: tuple(f"{node.name}_{role}" for role in ROLES),
    runs_agents=_runs_agents, marks=Kind.nothing,
    codes=(codes.PLANNER_BOUNDS, codes.PLANNER_ROLE_CHANGED),
    rules=(Rule(codes.PLANNER_ROLE_CHANGED, (
        "PlannerNode.roles", "PlannerRoles.model", "PlannerRoles.instruction",
        "PlannerRoles.worker_model", "PlannerRoles.worker_instruction",
        "PlannerRoles.synthesizer_model", "PlannerRoles.synthesizer_instruction",
        "PlannerRoles.settings", "PlainModel.*", "LiteLlmEndpoint.*", "FallbackChain.*",
        "ModelRoute.*"), _planner_roles),
           Rule(codes.LIMIT_CHANGED, ("PlannerRoles.max_depth", "PlannerRoles.max_subtasks"),
                _bounds),
           Rule(codes.OUTPUT_KEY_CHANGED, ("PlannerNode.results_key",), _results_key)))
