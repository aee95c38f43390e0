"""`kind: sequential | parallel | loop`: ADK's workflow agents over the children."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal

from agentspec.diagnostics import codes
from agentspec.ir.tree import AgentNode, LlmFields, LlmNode, ModelNode, ToolNode, WorkflowNode
from agentspec.kindapi import Kind, Site
from agentspec.kindapi.rule import Found, Rule, limit
from agentspec.language.agents import (
    TOOL_ERRORS_DEFAULT,
    LoopAgent,
    ParallelAgent,
    SequentialAgent,
    WorkflowAgent,
)
from agentspec.language.tools import BuiltinTool

if TYPE_CHECKING:
    from agentspec.ir.lower import Lowering
    from agentspec.ir.plan import Call, Value
    from agentspec.ir.planning import PlanBuilder
    from agentspec.review.ruletypes import AgentPair
    from agentspec.validate.semantic.context import Context

__all__ = ["KIND", "check_children"]

_KINDS: dict[type, Literal["sequential", "parallel", "loop"]] = {
    SequentialAgent: "sequential", ParallelAgent: "parallel", LoopAgent: "loop"}


def _children(agent: object) -> list[str]:
    return [c for c in getattr(agent, "sub_agents", None) or () if isinstance(c, str)]


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


def check_children(ctx: Context, name: str, agent: WorkflowAgent, kind: str) -> None:
    """An agent that runs its sub-agents has some."""
    if not agent.sub_agents and name not in ctx.broken:
        ctx.report(codes.WORKFLOW_NO_CHILDREN(
            f"`{kind}` agent `{name}` has no sub_agents", ctx.key_at("agents", name),
            hint="list the agents it runs under `sub_agents`"))


def check(ctx: Context, name: str, agent: WorkflowAgent) -> None:
    check_children(ctx, name, agent, _KINDS[type(agent)])
    if not isinstance(agent, LoopAgent) or name in ctx.broken:
        return
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


def lower(lowering: Lowering, name: str, agent: WorkflowAgent, site: Site) -> WorkflowNode:
    return WorkflowNode(**site.common, mode=site.mode, kind=_KINDS[type(agent)],
                        max_iterations=getattr(agent, "max_iterations", None))


def plan(builder: PlanBuilder, node: WorkflowNode, children: list[Value]) -> Call:
    # deferred: validate imports every kind, and plans nothing
    from agentspec.ir.plan import Call, ListOf
    from agentspec.ir.values import WORKFLOWS, kwargs, lit

    return Call(WORKFLOWS[node.kind], kwargs(
        name=node.name, description=lit(node.description),
        sub_agents=ListOf(tuple(children)), max_iterations=node.max_iterations,
        mode=node.mode, **builder.callbacks(node)))


def label(node: WorkflowNode) -> list[str]:
    return [node.name, node.kind, *(["offline (background job)"] if node.offline else []),
            *([f"max_iterations {node.max_iterations}"] if node.max_iterations is not None
              else [])]


def _iterations(node: AgentNode) -> int | None:
    return node.max_iterations if isinstance(node, WorkflowNode) else None


def _iterations_changed(pair: AgentPair) -> Iterator[Found]:
    yield from limit("max_iterations", _iterations(pair.before), _iterations(pair.after),
                     ("max_iterations",), ("max_iterations",))


def _models(node: WorkflowNode) -> tuple[ModelNode | None, ...]:
    return ()


def _tools(node: WorkflowNode) -> tuple[ToolNode, ...]:
    return ()


def _as_llm(node: WorkflowNode) -> LlmFields:
    return LlmNode(name=node.name, file=node.file, line=node.line,
                   tool_errors=TOOL_ERRORS_DEFAULT)


def _example(name: str, model: str, children: tuple[str, ...]) -> dict[str, Any]:
    return {"kind": name, "sub_agents": list(children),
            **({"max_iterations": 1} if name == "loop" else {})}


KIND: Kind[WorkflowAgent, WorkflowNode] = Kind(
    names=("sequential", "parallel", "loop"), spec=(SequentialAgent, ParallelAgent, LoopAgent),
    node=WorkflowNode, name_of=lambda node: node.kind, check=check, lower=lower, plan=plan,
    models=_models, tools=_tools, as_llm=_as_llm, label=label,
    edge=lambda node: "branch" if node.kind == "parallel" else "step", example=_example,
    answers=lambda name, text: {}, references=Kind.none, python_refs=Kind.nothing,
    instructions=Kind.nothing, plan_state=None, tools_at=("tools",), model_agents=Kind.nothing,
    runs_agents=Kind.none, marks=Kind.nothing,
    rules=(Rule(codes.LIMIT_CHANGED, ("WorkflowNode.max_iterations",), _iterations_changed),),
    codes=(codes.LOOP_ITERATIONS, codes.WORKFLOW_NO_CHILDREN, codes.LOOP_UNBOUNDED))
