"""What counts as a failure in a run's events, wherever it happened: an agent that raised
(ADK's error event for a node that failed, a router's failed choice, a route that broke),
and a tool, or an agent called as a tool, whose result is an error. Errors inside agent
tools, `task` delegations and planner nodes are events of the same run, so they count too.

`agentspec test` fails a scenario on any failure it does not declare (`expect.errors`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from google.adk.events.event import Event

__all__ = ["Failure", "error_text", "failures_in"]

#: what ADK 2.13's single_turn agent tool answers when the agent raised or its input is wrong
_AGENT_TOOL_ERRORS = ("Error running sub-agent: ", "Error validating input: ")
#: ... when the agent raised: the agent's own error event says what happened
_AGENT_RAISED = "Error running sub-agent: Dynamic node "


@dataclass(frozen=True)
class Failure:
    """`agent` raised, or its `tool` (an agent called as a tool: its name) answered with an
    error; `text` says what went wrong."""

    agent: str
    text: str
    tool: str | None = None

    def __str__(self) -> str:
        if self.tool is None:
            return f"agent `{self.agent}` failed: {self.text}"
        return f"tool `{self.tool}` of agent `{self.agent}` returned an error: {self.text}"

    def names(self) -> set[str]:
        """The names an `expect.errors` entry may give it by."""
        return {self.agent} | ({self.tool} if self.tool else set())


def failures_in(event: Event, settled: Collection[str] = ()) -> list[Failure]:
    """The failures `event` shows. `settled` holds the ids of tool calls whose error result
    is no failure: calls a person rejected."""
    found = []
    if event.error_code is not None:
        found.append(Failure(event.author, f"{event.error_code}: {event.error_message or ''}"))
    summary = (event.custom_metadata or {}).get("agentspec_summary_failed")
    if summary:
        found.append(Failure(str(summary["agent"]), f"summarization failed: {summary['error']}"))
    route = (event.custom_metadata or {}).get("agentspec_route") or {}
    found += [Failure(str(tried["agent"]), str(tried["error"]))
              for tried in route.get("failed", ())]
    found += [Failure(str(broken["agent"]), str(broken["error"]))
              for broken in route.get("route_errors", ())]
    waiting = event.actions.requested_tool_confirmations or {}
    for response in event.get_function_responses():
        if response.id in waiting or response.id in settled:
            continue  # an approval's placeholder, or a person's no
        text = error_text(response.response)
        if text is not None and not text.startswith(_AGENT_RAISED):
            found.append(Failure(event.author, text, tool=response.name or ""))
    return found


def error_text(response: Any) -> str | None:
    """The error a tool's result carries: `{"error": ...}` (harness tools, agentspec's
    tool-error handling), an MCP result flagged `isError`, or ADK's agent tool's message."""
    if not isinstance(response, Mapping):
        return None
    if response.get("error") is not None:
        return str(response["error"])
    if response.get("isError") or response.get("is_error"):
        texts = [c.get("text", "") for c in response.get("content") or ()
                 if isinstance(c, Mapping)]
        return " ".join(t for t in texts if t) or "the MCP tool reported an error"
    result = response.get("result")
    if isinstance(result, str) and result.startswith(_AGENT_TOOL_ERRORS):
        return result
    return None
