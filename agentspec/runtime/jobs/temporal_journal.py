"""The step journal of a job on Temporal: model answers and tool results, replayed after a
worker dies so that none of them is asked for twice.

An app plugin (`Journal`) sees every model call and tool call of every agent in the job's
run (routers, planners and harness nodes included: they call models and tools through ADK's
flow like any agent). A call is keyed by its kind, the agent, the tool, and how many such
calls that agent made before it in this run; given the same answers an agent makes the same
calls, so the key names the same call in every attempt. Before a call the plugin looks its
key up in the journal the attempt started with: found, it answers with the recorded
response and the model or the tool is not called. After a call that was not replayed it
`record`s the answer (the workflow's signal, acknowledged by the server), and only then does
the agent go on; a tool's state changes are recorded with its result and applied again on
replay.

A call the approval gate (`interrupt_on`) stops is not recorded: the plugin notes it
(`asked`), the attempt ends there, and the workflow waits for a person's decision. The next
attempt replays the journal up to that call and hands the decision to the gate as ADK hands
it an answer (`tool_context.tool_confirmation`), but only if the call's arguments are those
the person saw; otherwise the gate asks again.

What is not step-durable: a call that was running when the worker died (it is made again);
agent `after_model` callbacks that change a model's answer are not run again on a replayed
answer (the plugin records the answer as the model gave it); calls of one agent made in
parallel with each other may be matched in another order.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.adk.tools.tool_context import ToolContext

from agentspec.runtime.harness.approvals import Decision, confirmation

__all__ = ["Journal"]

Record = Callable[[dict[str, Any]], Awaitable[None]]


def plain(value: Any) -> Any:
    """`value` as JSON gives it back (what the workflow's history holds)."""
    return json.loads(json.dumps(value, default=str))


class Journal(BasePlugin):
    """Replays `entries` (from earlier attempts) and `record`s the calls made now."""

    def __init__(self, entries: list[dict[str, Any]], record: Record,
                 decisions: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        super().__init__(name="agentspec_journal")
        self.recorded = {entry["key"]: entry for entry in entries}
        self.record = record
        #: people's answers to calls the gate stopped, by key: kind, the args they saw,
        #: and an edit's args or a rejection's message
        self.decisions = dict(decisions or {})
        #: the calls the gate stopped in this attempt: what `agentspec jobs` shows a person
        self.asked: list[dict[str, Any]] = []
        self.counts: dict[tuple[str, ...], int] = {}
        self.replayed = 0
        self.made = 0
        self._pending: dict[str, str] = {}  # the key of a call in flight: by agent, or call id

    def _key(self, *parts: str) -> str:
        number = self.counts.get(parts, 0)
        self.counts[parts] = number + 1
        return json.dumps([*parts, number])

    async def before_model_callback(self, *, callback_context: CallbackContext,
                                    llm_request: LlmRequest) -> LlmResponse | None:
        key = self._key("model", callback_context.agent_name)
        found = self.recorded.get(key)
        if found is not None:
            self.replayed += 1
            return LlmResponse.model_validate(found["response"])
        self._pending[callback_context.agent_name] = key
        return None

    async def after_model_callback(self, *, callback_context: CallbackContext,
                                   llm_response: LlmResponse) -> LlmResponse | None:
        key = self._pending.pop(callback_context.agent_name, None)
        if key is not None and not llm_response.partial:
            self.made += 1
            await self.record({"key": key, "response": llm_response.model_dump(
                mode="json", exclude_none=True)})
        return None

    async def before_tool_callback(self, *, tool: BaseTool, tool_args: dict[str, Any],
                                   tool_context: ToolContext) -> dict[str, Any] | None:
        key = self._key("tool", tool_context.agent_name, tool.name)
        found = self.recorded.get(key)
        if found is not None:
            self.replayed += 1
            for name, value in (found.get("state") or {}).items():
                tool_context.state[name] = value
            result: dict[str, Any] = found["result"]
            return result
        decided = self.decisions.get(key)
        if decided is not None and decided["args"] == plain(tool_args):
            tool_context.tool_confirmation = ToolConfirmation.model_validate(confirmation(
                Decision(decided["kind"], decided.get("edit"), decided.get("message"))))
        self._pending[f"call:{tool_context.function_call_id}"] = key
        return None

    async def after_tool_callback(self, *, tool: BaseTool, tool_args: dict[str, Any],
                                  tool_context: ToolContext, result: dict[str, Any]
                                  ) -> dict[str, Any] | None:
        key = self._pending.pop(f"call:{tool_context.function_call_id}", None)
        asked = tool_context.actions.requested_tool_confirmations.get(
            tool_context.function_call_id or "")
        if key is not None and asked is not None:  # stopped by the gate: not a result
            payload = asked.payload if isinstance(asked.payload, dict) else {}
            self.asked.append({"key": key, "agent": tool_context.agent_name,
                               "tool": tool.name, "args": plain(tool_args),
                               "question": str(payload.get("question") or ""),
                               "decisions": list(payload.get("decisions") or [])})
        elif key is not None:
            self.made += 1
            state = copy.deepcopy(dict(tool_context.actions.state_delta))
            await self.record({"key": key, "result": plain(result), "state": plain(state)})
        return None
