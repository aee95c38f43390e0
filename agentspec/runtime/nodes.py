"""Running an agent inside another agent's run the way ADK 2.13 runs agents: as a node.

ADK 2.13 runs agents through its node runtime (`NodeRunner`, what `ctx.run_node` starts).
That is where an LLM agent's `mode: task` sub-agents are dispatched, and where the agents
that `ctx.run_node` starts from a tool (ADK's single_turn agent tools, the harness's `task`)
send their events: onto the invocation's event queue, which the Runner drains. Running a
child with `child.run_async(ctx)`, as ADK's deprecated SequentialAgent, ParallelAgent and
LoopAgent do, bypasses both: a task delegation is dropped, and under a root that is no LLM
agent (the Runner then takes its legacy path, which sets up no queue) every `run_node` below
fails with "_enqueue_event called but _event_queue is not set".

`node_events` runs a child as a node on an event queue of its own and passes the child's
events on, in order, as they come: the caller sees them (a router's fallback, a classifier
kept out of the conversation), and whoever runs the caller appends them to the session
before the child goes on, as the Runner does with the events it drains.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents.context import Context
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events.event import Event

from agentspec.runtime import adk
from agentspec.runtime.adk import DynamicNodeFailError, NodeInterruptedError

__all__ = ["FAILURES_REPORTED", "node_events"]

_DONE = object()
#: set where a node's failure reaches someone who reports it: in the tasks that run nodes
#: for `node_events` (the error is raised to the caller: a router falls back, ...), and in
#: agentspec's commands (they show every failure from the events, `runtime.failures`)
FAILURES_REPORTED = contextvars.ContextVar("agentspec_failures_reported", default=False)


class _Reported(logging.Filter):
    """Drops the traceback ADK logs for a failed node (or root) where the failure is
    reported anyway: the failure is also an error event in the conversation."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (FAILURES_REPORTED.get() and record.exc_info is not None)


for _logger in adk.NODE_FAILURE_LOGGERS:
    logging.getLogger(_logger).addFilter(_Reported())


async def node_events(agent: Any, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
    """The events of `agent` run as a node in `ctx`'s invocation. A failure is raised as
    the agent raised it; a run that pauses for a person (a tool call waiting for approval)
    simply ends, its request already among the events."""
    own = ctx.model_copy()
    queue: asyncio.Queue[tuple[Any, asyncio.Event | None]] = asyncio.Queue()
    adk.set_event_queue(own, queue)

    async def drive() -> None:
        FAILURES_REPORTED.set(True)
        try:
            await Context(own).run_node(agent)
        finally:
            await queue.put((_DONE, None))

    task = asyncio.create_task(drive())
    held: Event | None = None  # an error event: the node's own when the node then fails
    try:
        while (item := await queue.get())[0] is not _DONE:
            event, processed = item
            if held is not None:
                yield held
                held = None
            if event.error_code is not None and event.content is None:
                held = event
            else:
                yield event
            if processed is not None:
                processed.set()
    finally:
        if not task.done():
            task.cancel()
        try:
            await task
        except (NodeInterruptedError, asyncio.CancelledError):
            pass
        except DynamicNodeFailError as failure:  # ADK's error event says it too: drop that
            raise failure.error from None
    if held is not None:
        yield held

