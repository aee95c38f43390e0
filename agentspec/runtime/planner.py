"""`kind: planner`: recursive planning on ADK's LLM, parallel and sequential agents.

Each node of the plan asks the planner model for a structured plan of its task:

    {"kind": "llm" | "parallel" | "sequential", "subtasks": [...], "reason": "..."}

`llm` (or no usable subtasks): a worker answers the task. `parallel`: each subtask is a node
of its own, run concurrently (an ADK `ParallelAgent`), and the synthesizer merges their
results. `sequential`: the subtasks run in order (an ADK `SequentialAgent`), each seeing the
previous one's result; the last result is the node's. Nodes are planned down to `max_depth`
(the root is depth 1); a node below it is a leaf whatever the model would say, and subtasks
past `max_subtasks` are dropped, with a note in the node's record. A plan that is not valid
JSON of that shape is asked for once more, then the node is answered directly.

Every node is named after its place (`<planner>`, `<planner>_2`, `<planner>_2_1`, ...) and
gets its ancestors' tasks as context; a leaf worker is also told that nobody answers its
questions, so it finishes with what it has instead of stalling the plan. Its record (task,
depth, plan, notes, result) is kept in session state under `agentspec:plan:<node>`, written
by events of the node's own that carry no content (the plan when it is made, the result when
it is known), so `agentspec run` can show the tree as it unfolds while no model sees the
bookkeeping. The record keys are
agentspec's own (an instruction cannot name them: `{agentspec:plan:...}` is not a
placeholder); the planner's `output_key` is how its final answer reaches state, and its
`results_key` how every node's task and result do (Markdown, root first). The planner
model's own answers stay out of the conversation; the workers' and synthesizers' answers are
in it.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.tools.base_tool import BaseTool
from google.adk.utils.context_utils import Aclosing
from pydantic import ConfigDict, Field

from agentspec.runtime import adk
from agentspec.runtime.instructions import Template
from agentspec.runtime.nodes import node_events
from agentspec.runtime.prompts.planner import PLANNER_PROMPT, WORKER_GUIDANCE
from agentspec.runtime.telemetry import set_attributes
from agentspec.runtime.tool_errors import error_result, mcp_errors
from agentspec.runtime.workflows import (
    NodeEntry,
    ParallelAgent,
    SequentialAgent,
    answer_aside,
    final_text,
)

__all__ = ["PLAN_KEY", "PlannerAgent", "agent_tool", "planner"]

PLAN_KEY = "agentspec:plan:{name}"
KINDS = ("llm", "parallel", "sequential")
PLAN_SCHEMA = {"type": "object", "properties": {
    "kind": {"type": "string", "enum": list(KINDS),
             "description": "llm: answer the task directly; parallel: independent subtasks; "
                            "sequential: subtasks where each needs the previous result."},
    "subtasks": {"type": "array", "items": {"type": "string"},
                 "description": "Self-contained subtasks (empty for llm)."},
    "reason": {"type": "string", "description": "Why, in one sentence."}},
    "required": ["kind", "subtasks"]}

@dataclass(frozen=True)
class _Settings:
    """What every node of one planner shares."""

    name: str
    planner: LlmAgent
    worker: LlmAgent
    synthesizer: LlmAgent
    max_depth: int
    max_subtasks: int


@dataclass
class _Plan:
    kind: str
    subtasks: list[str] = field(default_factory=list)
    reason: str = ""
    notes: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def _parse(text: str) -> _Plan | None:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or value.get("kind") not in KINDS:
        return None
    subtasks = value.get("subtasks") or []
    if not isinstance(subtasks, list) or not all(isinstance(s, str) for s in subtasks):
        return None
    return _Plan(value["kind"], [s.strip() for s in subtasks if s.strip()],
                 str(value.get("reason") or ""))


def _context(task: str, ancestors: list[str], previous: str | None) -> str:
    lines = [f"Your task: {task}"]
    if ancestors:
        lines.append("It is part of these larger tasks, outermost first:")
        lines += [f"{depth}. {text}" for depth, text in enumerate(ancestors, 1)]
    if previous is not None:
        lines.append(f"The previous step's result:\n{previous}")
    return "\n".join(lines)


class PlanNode(NodeEntry, BaseAgent):
    """One node of the plan: plans its task, then answers it or runs its subtasks."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    settings: Any = None  # _Settings
    task: str = ""
    depth: int = 1
    ancestors: list[str] = Field(default_factory=list)
    previous_node: str | None = None  # a sequential sibling whose result this node sees

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        async with Aclosing(self.solve(ctx, self.task)) as events:
            async for event in events:
                yield event

    async def solve(self, ctx: InvocationContext, task: str) -> AsyncGenerator[Event, None]:
        settings: _Settings = self.settings
        previous = None
        if self.previous_node is not None:
            previous = (ctx.session.state.get(PLAN_KEY.format(name=self.previous_node))
                        or {}).get("result")
        context = _context(task, self.ancestors, previous)
        plan = await self._plan(ctx, context) if self.depth <= settings.max_depth else _Plan(
            "llm", notes=[f"depth {self.depth} is past max_depth {settings.max_depth}: "
                          "answered directly"])
        record: dict[str, Any] = {"task": task, "depth": self.depth, "kind": plan.kind,
                                  "subtasks": plan.subtasks, "reason": plan.reason,
                                  "notes": plan.notes, "dropped": plan.dropped}
        yield self._record(ctx, record)
        answer: str | None = None
        if plan.kind == "llm":
            async with Aclosing(self._leaf(ctx, context)) as events:
                async for event in events:
                    answer = final_text(event) or answer
                    yield event
        else:
            children = [self._child(i, subtask, task, plan, record)
                        for i, subtask in enumerate(plan.subtasks, 1)]
            flow_type = ParallelAgent if plan.kind == "parallel" else SequentialAgent
            flow = flow_type(name=f"{self.name}_{plan.kind}", sub_agents=children)
            async with Aclosing(flow.run_async(ctx)) as events:
                async for event in events:
                    yield event
            results = [(child.task, (ctx.session.state.get(PLAN_KEY.format(name=child.name))
                                     or {}).get("result")) for child in children]
            if plan.kind == "sequential":
                answer = results[-1][1]
            else:
                async with Aclosing(self._synthesize(ctx, context, results)) as events:
                    async for event in events:
                        answer = final_text(event) or answer
                        yield event
        yield self._record(ctx, {**record, "result": answer})

    # the three LLM roles ---------------------------------------------------------------------

    async def _plan(self, ctx: InvocationContext, context: str) -> _Plan:
        settings: _Settings = self.settings
        notes = []
        for attempt in (1, 2):
            text = await self._ask_planner(ctx, context, retry=attempt == 2)
            plan = _parse(text)
            if plan is not None:
                break
            notes.append(f"attempt {attempt}: the plan is malformed: {text[:200]!r}")
        else:
            return _Plan("llm", notes=[*notes, "answered directly"])
        plan.notes = notes
        if plan.kind != "llm" and len(plan.subtasks) > settings.max_subtasks:
            plan.dropped = plan.subtasks[settings.max_subtasks:]
            plan.subtasks = plan.subtasks[:settings.max_subtasks]
            plan.notes.append(f"{len(plan.dropped)} subtasks past max_subtasks "
                              f"{settings.max_subtasks} dropped")
        if plan.kind != "llm" and len(plan.subtasks) < 2:
            plan.notes.append(f"a {plan.kind} plan with {len(plan.subtasks)} subtask(s): "
                              "answered directly")
            plan.kind, plan.subtasks = "llm", []
        if plan.kind == "llm":
            plan.subtasks = []
        return plan

    async def _ask_planner(self, ctx: InvocationContext, context: str, *, retry: bool) -> str:
        settings: _Settings = self.settings
        note = "\nYour previous answer was not a valid plan; answer with the JSON plan only." \
            if retry else ""
        depth_note = (f"\nThis task is at depth {self.depth} of at most {settings.max_depth}; "
                      "subtasks at the deepest level are answered directly.")
        agent = _role(settings.planner, f"{self.name}_planner", context + depth_note + note)
        return await answer_aside(agent, ctx)  # the plan is bookkeeping, not conversation

    def _leaf(self, ctx: InvocationContext, context: str) -> AsyncGenerator[Event, None]:
        settings: _Settings = self.settings
        return node_events(_role(settings.worker, f"{self.name}_worker",
                                 f"{context}\n\n{WORKER_GUIDANCE}"), ctx)

    def _synthesize(self, ctx: InvocationContext, context: str,
                    results: list[tuple[str, str | None]]) -> AsyncGenerator[Event, None]:
        settings: _Settings = self.settings
        parts = [context, "Merge the results of its subtasks into one answer to the task:"]
        parts += [f"## Subtask {i}: {task}\n{result or '(no result)'}"
                  for i, (task, result) in enumerate(results, 1)]
        return node_events(_role(settings.synthesizer, f"{self.name}_synthesizer",
                                 "\n\n".join(parts)), ctx)

    # structure ------------------------------------------------------------------------------

    def _child(self, index: int, subtask: str, task: str, plan: _Plan,
               record: dict[str, Any]) -> PlanNode:
        previous = f"{self.name}_{index - 1}" if plan.kind == "sequential" and index > 1 \
            else None
        return PlanNode(name=f"{self.name}_{index}", settings=self.settings, task=subtask,
                        depth=self.depth + 1, ancestors=[*self.ancestors, task],
                        previous_node=previous)

    def _record(self, ctx: InvocationContext, record: dict[str, Any]) -> Event:
        set_attributes(**{"agentspec.planner.node": self.name,
                          "agentspec.planner.depth": self.depth,
                          "agentspec.planner.plan": record.get("kind")})
        return Event(invocation_id=ctx.invocation_id, author=self.name, branch=ctx.branch,
                     actions=EventActions(state_delta={PLAN_KEY.format(name=self.name): record}),
                     custom_metadata={"agentspec_plan": {"node": self.name, **record}})


def _role(template: LlmAgent, name: str, context: str) -> LlmAgent:
    """A fresh LLM agent for one node: the template's model, tools and instruction, plus the
    node's context. The spec's instruction is filled from session state as any instruction
    (`{key}`, `{key?}`, `{{...}}`); the node's context is appended as it is, so braces in a
    task the model wrote reach the model instead of being read as placeholders."""
    base = Template(template.instruction) if isinstance(template.instruction, str) and \
        template.instruction else None

    async def instruction(readonly_context: ReadonlyContext) -> str:
        if base is None:
            return context
        return f"{await base(readonly_context)}\n\n{context}"

    return LlmAgent(name=name, model=template.model, description=template.description,
                    static_instruction=template.static_instruction, instruction=instruction,
                    tools=list(template.tools), output_schema=template.output_schema,
                    generate_content_config=template.generate_content_config,
                    on_tool_error_callback=template.on_tool_error_callback,
                    after_tool_callback=template.after_tool_callback,
                    include_contents="none", mode="chat", disallow_transfer_to_parent=True,
                    disallow_transfer_to_peers=True)


class PlannerAgent(PlanNode):
    """The root of a recursive plan (see the module docstring); its task is the user's latest
    message, or the request when it is called as a tool."""

    mode: str | None = None  # `single_turn` when called as a tool
    output_key: str | None = None  # the state key that receives the final answer
    results_key: str | None = None  # the state key that receives every node's result

    @property
    def inner_agents(self) -> list[BaseAgent]:
        """The role templates; every node's planner, workers and synthesizers use their
        models (a script gives replies to `<planner>_planner`, `_worker`, `_synthesizer`)."""
        settings: _Settings = self.settings
        return [settings.planner, settings.worker, settings.synthesizer]

    async def _run_impl(self, *, ctx: Any, node_input: Any) -> AsyncGenerator[Any, None]:
        token = _REQUEST.set(_request_text(node_input))  # called as a tool: the request
        try:
            async for item in super()._run_impl(ctx=ctx, node_input=node_input):
                yield item
        finally:
            _REQUEST.reset(token)

    def _record(self, ctx: InvocationContext, record: dict[str, Any]) -> Event:
        """The root's record; its final one also writes the answer to `output_key`."""
        event = super()._record(ctx, record)
        if self.output_key and record.get("result") is not None:
            event.actions.state_delta[self.output_key] = record["result"]
        if self.results_key and "result" in record:
            event.actions.state_delta[self.results_key] = self._results(ctx, record)
        return event

    def _results(self, ctx: InvocationContext, record: dict[str, Any]) -> str:
        """Every node of this run's plan, root first, depth first: its name, task and result.
        The walk follows the records this run wrote (a child is `<node>_<i>` of its parent's
        subtasks), so a deeper node left in state by an earlier turn is not listed."""
        parts: list[str] = []

        def walk(name: str, node: dict[str, Any]) -> None:
            parts.append(f"## {name}: {node.get('task')}\n{node.get('result') or '(no result)'}")
            if node.get("kind") == "llm":
                return
            for index in range(1, len(node.get("subtasks") or ()) + 1):
                child = ctx.session.state.get(PLAN_KEY.format(name=f"{name}_{index}"))
                if isinstance(child, dict):
                    walk(f"{name}_{index}", child)

        walk(self.name, record)
        return "\n\n".join(parts)

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        task = _REQUEST.get() or _request_text(ctx.user_content)
        async with Aclosing(self.solve(ctx, task or "(no task given)")) as events:
            async for event in events:
                yield event


#: the request of a planner called as a tool, for the run it starts
_REQUEST: contextvars.ContextVar[str | None] = contextvars.ContextVar("agentspec_plan_request",
                                                                     default=None)


def _request_text(value: Any) -> str | None:
    """The task in a node input or user content: a tool's `{"request": ...}`, a string, or
    the text of a Content."""
    if isinstance(value, dict):
        value = value.get("request")
    if isinstance(value, str):
        return value.strip() or None
    parts = getattr(value, "parts", None) or []
    text = "".join(p.text or "" for p in parts if not p.thought).strip()
    return text or None


class _WorkerAgentTool(adk.SingleTurnAgentTool):
    """An agent the workers call as a tool (`worker.tools: [{agent: name}]`), as ADK calls
    an LLM agent's single_turn sub-agent; `agents` shows it to walks over the tree."""

    @property
    def agents(self) -> dict[str, BaseAgent]:
        return {self.agent.name: self.agent}


def agent_tool(agent: BaseAgent) -> BaseTool:
    """`agent` as a tool of the planner's workers."""
    return _WorkerAgentTool(agent)


def planner(*, name: str, model: Any, description: str | None = None,
            instruction: str | None = None, max_depth: int, max_subtasks: int,
            worker_model: Any = None, worker_instruction: str | None = None,
            worker_tools: list[Any] | None = None, synthesizer_model: Any = None,
            synthesizer_instruction: str | None = None, mode: str | None = None,
            configs: dict[str, Any] | None = None, tool_errors: str = "return",
            output_key: str | None = None, results_key: str | None = None,
            **callbacks: Any) -> PlannerAgent:
    """A recursive planner. The worker's model defaults to the planner's, the synthesizer's
    to the worker's; `configs` holds each role's GenerateContentConfig (by role name);
    `tool_errors` is what a worker's tool that raises does (`tool_errors.py`); `output_key`
    is the state key that receives the final answer, `results_key` every node's result."""
    worker_model = worker_model or model
    configs = configs or {}
    settings = _Settings(
        name=name,
        planner=LlmAgent(
            name=f"{name}_planner", model=model, output_schema=PLAN_SCHEMA,
            generate_content_config=configs.get("planner"),
            static_instruction=PLANNER_PROMPT.format(max_subtasks=max_subtasks,
                                                      extra=instruction or "")),
        worker=LlmAgent(name=f"{name}_worker", model=worker_model,
                        instruction=worker_instruction or "", tools=list(worker_tools or []),
                        generate_content_config=configs.get("worker"),
                        on_tool_error_callback=[error_result] if tool_errors == "return"
                        else None, after_tool_callback=mcp_errors(tool_errors)),
        synthesizer=LlmAgent(name=f"{name}_synthesizer", model=synthesizer_model or worker_model,
                             instruction=synthesizer_instruction or "",
                             generate_content_config=configs.get("synthesizer")),
        max_depth=max_depth, max_subtasks=max_subtasks)
    return PlannerAgent(name=name, description=description or "", settings=settings,
                        mode=mode, output_key=output_key, results_key=results_key,
                        **callbacks)
