"""Test callbacks for the Agent Config import (written for agentspec's tests)."""

from __future__ import annotations

from typing import Any


def count_turns(callback_context: Any) -> None:
    callback_context.state["turns"] = callback_context.state.get("turns", 0) + 1


def tag_request(callback_context: Any, llm_request: Any) -> None:
    llm_request.append_instructions(["[tagged by a callback]"])


def after_tool(tool: Any, args: Any, tool_context: Any, tool_response: Any) -> None:
    tool_context.state["last_roll"] = str(tool_response)
