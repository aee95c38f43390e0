"""An ADK plugin that meters usage: model calls, tokens and tool calls per agent.

The counts are kept in session state under `state_key` (so they survive with the session and
show in the dev UI), logged at the end of every run, and a per-run cap on model calls stops
an agent that loops: once `max_model_calls_per_run` is reached, the model is not called again
in that run and the agent answers with an apology instead.
"""

from __future__ import annotations

import logging
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

__all__ = ["UsageMeterPlugin"]

logger = logging.getLogger("travel_desk.usage")


class UsageMeterPlugin(BasePlugin):
    """Counts model calls, tokens and tool calls per agent into session state."""

    def __init__(self, state_key: str = "usage", max_model_calls_per_run: int = 40,
                 log_level: str = "INFO", name: str = "usage_meter") -> None:
        super().__init__(name=name)
        if not state_key:
            raise ValueError("state_key must not be empty")
        if max_model_calls_per_run < 1:
            raise ValueError("max_model_calls_per_run must be at least 1")
        level = logging.getLevelName(log_level.upper())
        if not isinstance(level, int):
            raise ValueError(f"unknown log level {log_level!r}")
        self.state_key = state_key
        self.max_model_calls_per_run = max_model_calls_per_run
        self.log_level = level
        self._calls_this_run: dict[str, int] = {}

    def _update(self, context: CallbackContext, section: str, name: str,
                amounts: dict[str, int]) -> None:
        usage: dict[str, Any] = dict(context.state.get(self.state_key) or {})
        counts: dict[str, dict[str, int]] = {k: dict(v) for k, v in
                                             (usage.get(section) or {}).items()}
        entry = counts.setdefault(name, {})
        for key, amount in amounts.items():
            entry[key] = entry.get(key, 0) + amount
        usage[section] = counts
        context.state[self.state_key] = usage  # a new value, so the change is recorded

    async def before_model_callback(self, *, callback_context: CallbackContext,
                                    llm_request: LlmRequest) -> LlmResponse | None:
        run = callback_context.invocation_id
        calls = self._calls_this_run.get(run, 0) + 1
        self._calls_this_run[run] = calls
        if calls > self.max_model_calls_per_run:
            logger.warning("run %s: model call limit %d reached in %s", run,
                           self.max_model_calls_per_run, callback_context.agent_name)
            return LlmResponse(content=types.Content(role="model", parts=[types.Part(
                text="Sorry, this request needed more steps than the desk allows in one go. "
                     "Could you split it into smaller questions?")]))
        self._update(callback_context, "model_calls", callback_context.agent_name,
                     {"calls": 1})
        return None

    async def after_model_callback(self, *, callback_context: CallbackContext,
                                   llm_response: LlmResponse) -> LlmResponse | None:
        meta = llm_response.usage_metadata
        if meta is None or llm_response.partial:
            return None
        self._update(callback_context, "model_calls", callback_context.agent_name, {
            "prompt_tokens": meta.prompt_token_count or 0,
            "output_tokens": meta.candidates_token_count or 0,
            "thought_tokens": meta.thoughts_token_count or 0})
        return None

    async def after_tool_callback(self, *, tool: BaseTool, tool_args: dict[str, Any],
                                  tool_context: ToolContext,
                                  result: dict[str, Any]) -> dict[str, Any] | None:
        failed = isinstance(result, dict) and result.get("status") == "error"
        self._update(tool_context, "tool_calls", tool.name,
                     {"calls": 1, "errors": 1 if failed else 0})
        return None

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        calls = self._calls_this_run.pop(invocation_context.invocation_id, 0)
        usage = invocation_context.session.state.get(self.state_key) or {}
        logger.log(self.log_level, "run %s: %d model call(s); session usage so far: %s",
                   invocation_context.invocation_id, calls, usage)
