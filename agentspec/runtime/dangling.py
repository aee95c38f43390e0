"""Function calls a conversation left unanswered get an answer saying they were cancelled.

A run that ends between a model's function call and its response (a crash, a killed worker, a
cancelled request, an interrupted run) leaves the call unanswered in the session. ADK drops
such a call from the next model request with a log line (`drop_orphaned_function_calls`), so
the model never learns that something it asked for did not finish and may say it did. As
deepagents' PatchToolCallsMiddleware does, each one is answered instead: when the next user
message arrives, one event per agent and branch holds a function response per unanswered
call, saying it was cancelled. The event is stored with the session, so every later request
shows the same history, and ADK's contents builder places each response right after its call.

Calls ADK itself keeps waiting (long-running calls: a pending approval, an offline job) and
calls without an id (nothing can answer them by id) are left alone, as ADK leaves them.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types

__all__ = ["CANCELLED", "PatchDanglingCalls", "cancelled_responses", "dangling_calls"]

CANCELLED = ("The call `{name}` (id {id}) was cancelled: the run that made it ended before its "
             "result came back (an interruption, a crash or a cancelled request). It may not "
             "have run, or run only in part. Check before relying on it, and call it again "
             "if it is still needed.")


def dangling_calls(events: Sequence[Event]) -> list[tuple[Event, types.FunctionCall]]:
    """(event, call) for every function call with an id that no event answers and that ADK
    is not keeping open (a long-running call), in session order."""
    done = {response.id for event in events
            for response in event.get_function_responses() if response.id}
    waiting = {call_id for event in events for call_id in event.long_running_tool_ids or ()}
    return [(event, call) for event in events for call in event.get_function_calls()
            if call.id and call.id not in done and call.id not in waiting]


def cancelled_responses(found: Sequence[tuple[Event, types.FunctionCall]],
                        invocation_id: str) -> list[Event]:
    """One event per (author, branch) answering that author's dangling calls."""
    grouped: dict[tuple[str, str | None], list[types.Part]] = {}
    for event, call in found:
        response = types.FunctionResponse(
            id=call.id, name=call.name,
            response={"error": CANCELLED.format(name=call.name, id=call.id)})
        grouped.setdefault((event.author, event.branch), []).append(
            types.Part(function_response=response))
    return [Event(invocation_id=invocation_id, author=author, branch=branch,
                  content=types.Content(role="user", parts=parts))
            for (author, branch), parts in grouped.items()]


class PatchDanglingCalls(BasePlugin):
    """Answers the session's dangling function calls when a new user message arrives.

    Only a plain message counts: one that carries function responses answers something the
    conversation is waiting for (an approval, a tool run by the client), so the calls still
    open belong to a paused run that this message resumes; a run without a new message
    resumes one too. The answers are stored just before the message is: ADK reads a
    function response at the end of the history as the result of an asynchronous call and
    cuts the history back to that call, and before the message nothing follows them."""

    def __init__(self) -> None:
        super().__init__(name="agentspec_dangling_calls")

    async def on_user_message_callback(self, *, invocation_context: InvocationContext,
                                       user_message: types.Content) -> types.Content | None:
        if any(part.function_response for part in user_message.parts or ()):
            return None
        await _append(invocation_context, dangling_calls(invocation_context.session.events))
        return None


async def _append(invocation_context: InvocationContext,
                  found: list[tuple[Event, types.FunctionCall]]) -> None:
    session = invocation_context.session
    for event in cancelled_responses(found, invocation_context.invocation_id):
        await invocation_context.session_service.append_event(session, event)
