"""Summarization with history: the events a summary replaces, kept as Markdown in a file.

ADK's events compaction does the summarizing. With a `tokens` or `fraction` trigger it is
checked before each model call (ADK's compaction request processor, ahead of the contents
processor) and after each invocation; an `invocations` trigger is checked after each
invocation. The size it compares with the threshold is the prompt token count the model
reported for the calling agent's latest call (`usage_metadata.prompt_token_count`), or, when
there is none since the last summary, the characters of the contents the next request would
carry divided by four. The newest events stay verbatim; the cut never separates a function
call from its response.

`HistorySummarizer` wraps ADK's summarizer: before summarizing, it appends the events being
replaced (not a previous summary it is handed as a seed) to `<history>/<conversation>.md` in
a directory backend, through the backend's confined file access, and the summary the agents
then see says where that file is, so an agent reads its own past with `read_file`. The
conversation is the current ADK session, which `HistoryScope` (an App plugin) publishes for
the run. The history is written once the summary exists; when it cannot be written the
summary is discarded (ADK then goes on with the whole conversation and logs the failure), so
no event is ever dropped unrecorded.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from google.adk.agents.invocation_context import InvocationContext
from google.adk.apps.base_events_summarizer import BaseEventsSummarizer
from google.adk.events.event import Event
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.sessions.session import Session
from google.genai import types

from agentspec.runtime.backends import BackendError, normalize

__all__ = ["SESSION", "HistoryScope", "HistorySummarizer", "history_file", "markdown"]

#: the session of the run in progress (set by `HistoryScope` before the agents run)
SESSION: ContextVar[Session | None] = ContextVar("agentspec_summarization_session",
                                                 default=None)

_SAFE = re.compile(r"[A-Za-z0-9_-]{1,80}")


def history_file(directory: str, session: Session) -> str:
    """The history file of a conversation, `<directory>/<user id>/<session id>.md`: each id
    as it is when it is a plain name, else a cleaned prefix of it and a digest of it, so no
    id can name another path or collide with another id."""
    return normalize(f"{directory}/{_name(session.user_id)}/{_name(session.id)}.md")


def _name(text: str) -> str:
    if _SAFE.fullmatch(text):
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{re.sub(r'[^A-Za-z0-9_-]', '_', text)[:40]}-{digest}"


def markdown(events: list[Event], when: datetime) -> str:
    """The events as a readable Markdown section: who said what, tool calls and results."""
    count = f"{len(events)} event{'s' if len(events) != 1 else ''}"
    lines = [f"## Summarized on {when:%Y-%m-%d %H:%M:%S} UTC ({count})", ""]
    for event in events:
        for part in (event.content.parts or []) if event.content else []:
            if part.thought:
                continue
            if part.text:
                lines += [f"### {event.author}", "", part.text.rstrip(), ""]
            if part.function_call:
                call = part.function_call
                lines += [f"### {event.author} called `{call.name}`", "",
                          _block(call.args or {}), ""]
            if part.function_response:
                response = part.function_response
                lines += [f"### `{response.name}` answered", "",
                          _block(response.response or {}), ""]
    return "\n".join(lines) + "\n"


def _block(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, indent=2, default=str)
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}json\n{text}\n{fence}"


class HistorySummarizer(BaseEventsSummarizer):
    """`inner` summarizes; the events it replaces are appended to the conversation's history
    file first (see the module docstring). `backend` gives the backend and the path inside
    it that a virtual path of the agent's file tools lands on."""

    def __init__(self, inner: BaseEventsSummarizer, directory: str,
                 backend: Callable[[str], tuple[Any, str]]) -> None:
        self.inner = inner
        self.directory = normalize(directory)
        self.backend = backend

    async def maybe_summarize_events(self, *, events: list[Event]) -> Event | None:
        session = SESSION.get()
        if session is None:
            raise RuntimeError("summarization.history: no session is known for this run "
                               "(the HistoryScope plugin is not installed on the App)")
        recorded = {event.id for event in session.events}
        dropped = [event for event in events if event.id in recorded]  # not a seed summary
        path = history_file(self.directory, session)
        summary = await self.inner.maybe_summarize_events(events=events)
        compaction = summary.actions.compaction if summary is not None else None
        if compaction is None or compaction.compacted_content is None:
            return summary
        if dropped:  # only once the summary exists: a failed one leaves no section behind
            target, inner_path = self.backend(path)
            try:
                target.append(inner_path, markdown(dropped, datetime.now(UTC)))
            except BackendError as error:
                raise RuntimeError(f"summarization.history: {error}") from None
        content = compaction.compacted_content
        content.parts = [types.Part(text=(
            "The conversation so far has been summarized. Its full text, before the "
            f"messages that follow, is in the file {path}; read it with read_file when "
            "you need details.")), *(content.parts or [])]
        return summary


class HistoryScope(BasePlugin):
    """Publishes the run's session to `HistorySummarizer` (a context variable, so runs of
    different conversations in one process each see their own)."""

    def __init__(self) -> None:
        super().__init__(name="agentspec_summarization_history")

    async def before_run_callback(self, *, invocation_context: InvocationContext) -> None:
        SESSION.set(invocation_context.session)


def directory_backend(name: str, definitions: Mapping[str, Mapping[str, Any]]
                      ) -> Callable[[str], tuple[Any, str]]:
    """For a virtual path of backend `name`'s file tools: the directory backend that holds
    it (a composite's route followed) and the path inside that backend."""
    from agentspec.runtime.backends.filesystem import FilesystemBackend

    made: dict[str, FilesystemBackend] = {}

    def find(path: str) -> tuple[Any, str]:
        backend, inner = name, normalize(path)
        while definitions[backend]["type"] == "composite":
            definition = definitions[backend]
            routes = sorted((definition.get("routes") or {}).items(),
                            key=lambda item: len(normalize(item[0])), reverse=True)
            for prefix, target in routes:
                clean = normalize(prefix)
                if inner == clean or inner.startswith(clean + "/"):
                    backend, inner = target, "/" + inner[len(clean):].lstrip("/")
                    break
            else:
                backend = definition["default"]
        definition = definitions[backend]
        if definition["type"] not in ("filesystem", "shell"):
            raise RuntimeError(f"summarization.history: {path} is on backend `{backend}` "
                               f"(type {definition['type']}), not a directory")
        if backend not in made:
            made[backend] = FilesystemBackend(definition["root"],
                                              hard_links=definition.get("hard_links") == "allow")
        return made[backend], inner

    return find
