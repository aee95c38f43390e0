"""One user turn through a Runner, answering every approval the agents ask for on the way.

Shared by `agentspec run` (a person at the terminal, or a script's decisions) and the tests.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from google.adk.events.event import Event
from google.adk.runners import Runner
from google.genai import types

from agentspec.runtime.harness.approvals import (
    Decision,
    PendingApproval,
    answer,
    pending_approvals,
)

__all__ = ["Decide", "turn"]

#: gives the decision for a paused call; None leaves it waiting (the turn ends there)
Decide = Callable[[PendingApproval], Decision | None | Awaitable[Decision | None]]


async def _decided(decide: Decide, pending: PendingApproval) -> Decision | None:
    decision = decide(pending)
    return await decision if isinstance(decision, Awaitable) else decision


async def turn(runner: Runner, session_id: str, message: str | types.Content, *,
               decide: Decide, on_event: Callable[[Event], None] = lambda event: None,
               user_id: str = "user", run_config: Any = None) -> list[PendingApproval]:
    """Sends `message`, then answers approval requests with `decide` and resumes the paused
    invocation until the agents finish. Returns the calls left waiting (empty when done).
    `run_config`: ADK's `RunConfig` (`agentspec run` streams)."""
    content = message if isinstance(message, types.Content) else types.Content(
        role="user", parts=[types.Part(text=message)])
    invocation_id = None
    while True:
        waiting: list[PendingApproval] = []
        async for event in runner.run_async(user_id=user_id, session_id=session_id,
                                            new_message=content, invocation_id=invocation_id,
                                            run_config=run_config):
            on_event(event)
            waiting += pending_approvals(event)
        if not waiting:
            return []
        parts = []
        for index, pending in enumerate(waiting):
            decision = await _decided(decide, pending)
            if decision is None:
                return waiting[index:]
            parts.append(answer(pending, decision))
        content = types.Content(role="user", parts=parts)
        invocation_id = waiting[0].invocation_id
