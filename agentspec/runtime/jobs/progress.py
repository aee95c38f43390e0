"""What a running job did last, as `jobs show` / `jobs list` tell it.

`run_agent` passes each event of the job's agent to the reporter the worker set for the
job's task (`REPORTER`); `describe` turns the events worth telling (a model reply, a tool
call, a tool result; not a streamed fragment) into one line. The worker's lease thread writes
the newest line with the next renewal, which the reporter brings forward, so the event loop
never waits for the store and a burst of events costs one write.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

__all__ = ["REPORTER", "Latest", "describe"]

#: set for the task that runs a job: called with each event of its agent
REPORTER: ContextVar[Callable[[Any], None] | None] = ContextVar("agentspec_job_reporter",
                                                               default=None)

_LONGEST = 200


def describe(event: Any) -> str | None:
    """One line for an event worth telling, or None."""
    if getattr(event, "partial", False) or event.content is None:
        return None
    author = event.author or "the agent"
    calls = event.get_function_calls()
    if calls:
        return _cut(f"tool call {_names(calls)} by {author}")
    responses = event.get_function_responses()
    if responses:
        return _cut(f"tool result {_names(responses)} for {author}")
    if author != "user" and any(p.text and not p.thought for p in event.content.parts or ()):
        return _cut(f"model reply by {author}")
    return None


def _names(parts: list[Any]) -> str:
    return ", ".join(f"`{part.name}`" for part in parts)


def _cut(text: str) -> str:
    return text if len(text) <= _LONGEST else text[:_LONGEST - 1] + "…"


class Latest:
    """The newest line not yet written; `take` hands it over once."""

    def __init__(self, wake: Callable[[], None]) -> None:
        self._lock = threading.Lock()
        self._line: str | None = None
        self._wake = wake

    def report(self, event: Any) -> None:
        line = describe(event)
        if line is None:
            return
        with self._lock:
            self._line = line
        self._wake()

    def take(self) -> str | None:
        with self._lock:
            line, self._line = self._line, None
            return line
