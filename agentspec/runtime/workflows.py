"""Sequential, parallel and loop agents.

ADK 2.13 deprecates SequentialAgent, ParallelAgent and LoopAgent in favour of `Workflow`, but a
Workflow cannot be an LlmAgent's sub-agent and runs LlmAgent nodes as single-turn steps that
see their predecessor's output instead of the conversation. Those semantics are what a spec's
`sequential` / `parallel` / `loop` promise (shared history and state, `output_key` hand-off,
transfer from an LLM parent), so the classic agents are used. They are subclassed here:
`typing_extensions.deprecated` warns only when the decorated class itself is instantiated, so
neither building nor ADK's own copies of these agents at run time (`clone`) warn the user.

Their loops are ADK's, except that each child runs as a node (`nodes.node_events`), the way
ADK 2.13 runs agents; ADK's own versions call `child.run_async`, under which an LLM child's
`mode: task` delegations are dropped and, under such a root, its agent tools fail.
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncGenerator
from typing import Any, ClassVar

from google.adk import agents
from google.adk.agents.base_agent import BaseAgentState
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.loop_agent import LoopAgentState
from google.adk.agents.sequential_agent import SequentialAgentState
from google.adk.events.event import Event
from google.adk.utils.context_utils import Aclosing

from agentspec.runtime import adk
from agentspec.runtime.nodes import node_events

__all__ = ["LoopAgent", "NodeEntry", "ParallelAgent", "SequentialAgent", "answer_aside",
           "final_text", "loop", "parallel", "sequential"]


def final_text(event: Event) -> str | None:
    if event.partial or not event.content:
        return None
    return "".join(p.text or "" for p in event.content.parts or [] if not p.thought) or None


async def answer_aside(agent: Any, ctx: Any) -> str:
    """Runs `agent` (a classifier, a planner) in `ctx` without passing its events on, so
    they stay out of the conversation; its last answer."""
    text = ""
    async with Aclosing(node_events(agent, ctx)) as events:
        async for event in events:
            text = final_text(event) or text
    return text


class NodeEntry:
    """How agentspec's own agents (sequential, parallel, loop, router, planner) run when ADK
    runs them as a node: their events, and the events of the children they run as nodes,
    go onto the invocation's event queue as they come, as a nested node's do. Passed up
    through the node runner that runs them instead, a child's events would be taken for
    theirs: given their node path (a single_turn agent would lose sight of its own tool
    results) and branch (which the runner then keeps for the events after them).

    The node's output, the result when the agent is called as a tool (`{agent: name}`,
    `mode: single_turn`), is the last answer its children gave (per child, when they run
    in parallel)."""

    per_child_output: ClassVar[bool] = False

    async def _run_impl(self, *, ctx: Any, node_input: Any) -> AsyncGenerator[Any, None]:
        invocation = ctx.get_invocation_context()
        ctx.event_author = self.name  # type: ignore[attr-defined]  # of its output event
        answers: dict[str, str] = {}
        async with Aclosing(self.run_async(invocation)) as events:  # type: ignore[attr-defined]
            async for event in events:
                text = final_text(event)
                if text is not None:
                    answers.pop(event.author, None)
                    answers[event.author] = text
                if not event.node_info.path:  # its own: children's come with theirs
                    event.node_info.path = ctx.node_path
                if event.isolation_scope is None:
                    event.isolation_scope = ctx.isolation_scope
                adk.add_interrupt_ids(ctx, event.long_running_tool_ids or ())
                await adk.enqueue_event(invocation, event)
        if answers:
            yield answers if self.per_child_output else list(answers.values())[-1]


with warnings.catch_warnings():  # defining a subclass warns once; that is ours to silence
    warnings.simplefilter("ignore", DeprecationWarning)

    class SequentialAgent(NodeEntry, agents.SequentialAgent):
        """Runs `sub_agents` in order (ADK SequentialAgent)."""

        mode: str | None = None

        async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
            state = self._load_agent_state(ctx, SequentialAgentState)
            resuming = state is not None
            for child in self.sub_agents[self._get_start_index(state):]:
                if ctx.is_resumable and not resuming:
                    ctx.set_agent_state(self.name, agent_state=SequentialAgentState(
                        current_sub_agent=child.name))
                    yield self._create_agent_state_event(ctx)
                resuming = False
                paused = False
                async with Aclosing(node_events(child, ctx)) as events:
                    async for event in events:
                        yield event
                        paused = paused or ctx.should_pause_invocation(event)
                if paused:
                    return
            if ctx.is_resumable and self.sub_agents:
                ctx.set_agent_state(self.name, end_of_agent=True)
                yield self._create_agent_state_event(ctx)

    class ParallelAgent(NodeEntry, agents.ParallelAgent):
        """Runs `sub_agents` concurrently on isolated branches, sharing state."""

        mode: str | None = None
        per_child_output: ClassVar[bool] = True

        async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
            if not self.sub_agents:
                return
            if ctx.is_resumable and self._load_agent_state(ctx, BaseAgentState) is None:
                ctx.set_agent_state(self.name, agent_state=BaseAgentState())
                yield self._create_agent_state_event(ctx)
            names = {child.name for child in self.sub_agents}
            runs = []
            for child in self.sub_agents:
                branch = adk.branch_context(self, child, ctx)
                if not branch.end_of_agents.get(child.name):  # done before a pause
                    runs.append(node_events(child, branch))
            escalated = paused = False
            async with Aclosing(adk.merge_runs(runs, names)) as events:
                async for event in events:
                    yield event
                    escalated = escalated or adk.asks_to_exit(event, names)
                    paused = paused or ctx.should_pause_invocation(event)
            if not paused and ctx.is_resumable and (
                    escalated or all(ctx.end_of_agents.get(n) for n in names)):
                ctx.set_agent_state(self.name, end_of_agent=True)
                yield self._create_agent_state_event(ctx)

    class LoopAgent(NodeEntry, agents.LoopAgent):
        """Repeats `sub_agents` up to `max_iterations` or until one escalates."""

        mode: str | None = None

        async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
            if not self.sub_agents:
                return
            state = self._load_agent_state(ctx, LoopAgentState)
            resuming = state is not None
            looped, start = self._get_start_state(state)
            done = paused = False
            while (self.max_iterations is None or looped < self.max_iterations) and \
                    not (done or paused):
                for child in self.sub_agents[start:]:
                    if ctx.is_resumable and not resuming:
                        ctx.set_agent_state(self.name, agent_state=LoopAgentState(
                            current_sub_agent=child.name, times_looped=looped))
                        yield self._create_agent_state_event(ctx)
                    resuming = False
                    async with Aclosing(node_events(child, ctx)) as events:
                        async for event in events:
                            yield event
                            done = done or bool(event.actions.escalate)
                            paused = paused or ctx.should_pause_invocation(event)
                    if done or paused:
                        break
                if not paused:
                    start, looped = 0, looped + 1
                    ctx.reset_sub_agent_states(self.name)
            if not paused and ctx.is_resumable:
                ctx.set_agent_state(self.name, end_of_agent=True)
                yield self._create_agent_state_event(ctx)


def sequential(**kwargs: Any) -> SequentialAgent:
    return SequentialAgent(**kwargs)


def parallel(**kwargs: Any) -> ParallelAgent:
    return ParallelAgent(**kwargs)


def loop(**kwargs: Any) -> LoopAgent:
    return LoopAgent(**kwargs)
