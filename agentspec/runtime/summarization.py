"""Summarization: a size check before each model call, and the history of what it drops.

With a `tokens` or `fraction` trigger, `SummaryCheck` runs before each model call of every LLM
agent (in the place of ADK's compaction request processor, ahead of the contents processor)
and estimates the size of the request about to be sent: the prompt token count the model
reported for this agent's latest call (`usage_metadata.prompt_token_count`) plus a quarter of
the characters of every event since (the model's answer, tool results, other agents' turns,
the user's message); since the latest summary, or when no count was reported, a quarter of
the characters of the summary and the events after it. Counting stops as soon as the
threshold is reached, so the check reads only the newest events: it costs microseconds, not
a pass over the conversation. When it fires, ADK's compaction summarizes everything but the
newest `keep` events (never separating a function call from its response). An `invocations`
trigger is ADK's, after each invocation, as is a second token check there.

`HistorySummarizer` wraps ADK's summarizer: the events a summary replaces (not a previous
summary it is handed as a seed) are appended to `<history>/<user id>/<session id>.md` in a
directory backend, through the backend's confined file access, and the summary the agents
then see says where that file is, so an agent reads its own past with `read_file`. The
conversation is the current ADK session, which the check (and, for summaries made after an
invocation, `HistoryScope`, an App plugin) publishes. The history is written once the
summary exists; when it cannot be written the summary is discarded (ADK then goes on with
the whole conversation and logs the failure), so no event is ever dropped unrecorded.

A summary that fails (the summarizer's model, the history file) never fails the turn, as in
ADK, and is never silent: every summarizer the app holds is a `ReportingSummarizer` (the
config wraps whatever is set on it, ADK's lazily made default too). A failure inside the
check before a model call becomes an event the check yields; one inside ADK's own check after
a turn (an `invocations` trigger, or the token check ADK repeats there), which ADK only logs,
becomes an event appended to the session there and then (`HistoryScope` publishes the run).
Either event has no content (`FAILED_KEY` in its custom metadata): no model sees it;
`agentspec run` shows it as a warning and a scenario counts it as an error of the agent
`summarizer`.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncGenerator, Callable, Mapping
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from google.adk.agents.invocation_context import InvocationContext
from google.adk.apps.app import EventsCompactionConfig
from google.adk.apps.base_events_summarizer import BaseEventsSummarizer
from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.sessions.session import Session
from google.genai import types

from agentspec.contract.backends import FilesystemDef, from_data, hops, keeps_history
from agentspec.runtime import adk
from agentspec.runtime.backends import BackendError, GlobBudget, normalize
from agentspec.runtime.backends.permissions import check
from agentspec.runtime.user_folders import path_segment

__all__ = ["FAILED_KEY", "SESSION", "HistoryScope", "HistorySummarizer", "ReportingSummarizer",
           "SummaryCheck", "SummaryConfig", "failure_event", "history_file", "install_check",
           "markdown", "prompt_tokens"]

_log = logging.getLogger("agentspec.summarization")

#: the custom metadata of the event that reports a failed summary (`failures.py`, `run`)
FAILED_KEY = "agentspec_summary_failed"
#: the failures of the summaries made in this check (ADK swallows the summarizer's error)
_FAILURES: ContextVar[list[str] | None] = ContextVar("agentspec_summary_failures",
                                                     default=None)

#: the session of the run in progress (set by `HistoryScope` before the agents run)
SESSION: ContextVar[Session | None] = ContextVar("agentspec_summarization_session",
                                                 default=None)
#: the run in progress, whose session a failure after the turn is appended to
_RUN: ContextVar[InvocationContext | None] = ContextVar("agentspec_summarization_run",
                                                        default=None)
#: set on a summarizer's error once the run has reported it (an event, `run`'s warning)
_REPORTED = "_agentspec_reported"


class _SaidAlready(logging.Filter):
    """Drops ADK's own log of a failed summary (a warning with a traceback, which a plain
    `agentspec run` prints to stderr) when agentspec has reported the failure already."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not getattr(error, _REPORTED, False)


_ADK_COMPACTION_LOG = logging.getLogger("google_adk.google.adk.apps.compaction")
if not any(isinstance(f, _SaidAlready) for f in _ADK_COMPACTION_LOG.filters):
    _ADK_COMPACTION_LOG.addFilter(_SaidAlready())

def history_file(directory: str, session: Session) -> str:
    """The history file of a conversation, `<directory>/<user id>/<session id>.md`, each id
    encoded by `path_segment`: injective, so no id can name another path or another
    conversation's file."""
    return normalize(f"{directory}/{path_segment(session.user_id)}/"
                     f"{path_segment(session.id)}.md")


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
        try:  # a history the `write` lists deny fails before the summarizer is paid
            target, inner_path = self.backend(path)
        except BackendError as error:
            raise RuntimeError(f"summarization.history: {error}") from None
        summary = await self.inner.maybe_summarize_events(events=events)
        compaction = summary.actions.compaction if summary is not None else None
        if compaction is None or compaction.compacted_content is None:
            return summary
        if dropped:  # only once the summary exists: a failed one leaves no section behind
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


class ReportingSummarizer(BaseEventsSummarizer):
    """`inner`, whose failure is noted for the check that asked for the summary before ADK
    logs it and goes on with the whole conversation, so the run reports it (an event)
    instead of going on in silence."""

    def __init__(self, inner: BaseEventsSummarizer) -> None:
        self.inner = inner

    async def maybe_summarize_events(self, *, events: list[Event]) -> Event | None:
        try:
            return await self.inner.maybe_summarize_events(events=events)
        except Exception as error:
            failure = f"{type(error).__name__}: {error}"
            noted = _FAILURES.get()
            if noted is not None:  # the check before a model call yields it
                noted.append(failure)
                reported = True
            else:  # ADK's check after a turn, which would only log it
                reported = await _record_after_turn(failure, events)
            if reported:
                with contextlib.suppress(AttributeError, TypeError):
                    setattr(error, _REPORTED, True)
            raise


def failure_event(context: InvocationContext, author: str, failure: str) -> Event:
    """The event that reports a failed summary: no content, so no model sees it."""
    return Event(invocation_id=context.invocation_id, author=author, branch=context.branch,
                 custom_metadata={FAILED_KEY: {
                     "agent": "summarizer", "error": failure,
                     "note": "the conversation went on unsummarized"}})


async def _record_after_turn(failure: str, events: list[Event]) -> bool:
    """Appends the failure to the session of the run that just ended. Without the run (a
    package built before the plugin was installed with every summarization), or when the
    run published is another conversation's (an earlier run in this task, of such a
    package), the failure is logged, as ADK does. Whether it was recorded."""
    context = _RUN.get()
    ours = context is not None and bool(
        {event.id for event in events} & {event.id for event in context.session.events})
    if context is None or not ours:
        _log.warning("summarization failed after the turn, so the conversation went on "
                     "unsummarized: %s", failure)
        return False
    author = context.agent.name if context.agent is not None else "summarizer"
    await context.session_service.append_event(
        session=context.session, event=failure_event(context, author, failure))
    return True


class HistoryScope(BasePlugin):
    """Publishes the run to `HistorySummarizer` (its session) and to `ReportingSummarizer`
    (where a failure after the turn is recorded): context variables, so runs of different
    conversations in one process each see their own. Installed with every summarization."""

    def __init__(self) -> None:
        super().__init__(name="agentspec_summarization_history")

    async def before_run_callback(self, *, invocation_context: InvocationContext) -> None:
        SESSION.set(invocation_context.session)
        _RUN.set(invocation_context)


def directory_backend(name: str, definitions: Mapping[str, Mapping[str, Any]]
                      ) -> Callable[[str], tuple[Any, str]]:
    """For a virtual path of backend `name`'s file tools: the directory backend that holds
    it (a composite's route followed) and the path inside that backend. BackendError when
    the `write` list of a backend on the way (the composite's, the holder's) denies it: the
    history obeys the lists the file tools do."""
    from agentspec.runtime.backends.filesystem import FilesystemBackend

    backends = {backend: from_data(data) for backend, data in definitions.items()}
    made: dict[str, FilesystemBackend] = {}

    def find(path: str) -> tuple[Any, str]:
        walked = hops(name, path, backends)
        budget = GlobBudget()
        for passed, there in walked:
            check(passed, "write", backends[passed].write, there, budget)
        backend, inner = walked[-1]
        definition = backends[backend]
        if not keeps_history(definition.type) or not isinstance(definition, FilesystemDef):
            raise RuntimeError(f"summarization.history: {path} is on backend `{backend}` "
                               f"(type {definition.type}), not a directory")
        if backend not in made:
            made[backend] = FilesystemBackend(definition.root,
                                              hard_links=definition.hard_links == "allow")
        _linked(backend, definition, inner, made[backend].resolve(inner), budget)
        return made[backend], inner

    return find


def _linked(name: str, definition: FilesystemDef, inner: str, real: str,
            budget: GlobBudget) -> None:
    """BackendError when history file `inner` of backend `name` is reached through a symbolic
    link (`real`: where it leads): the `write` list judges where it leads, as for the file
    tools, and even where the list allows it the history is not written there: only its own
    folder is kept from other users' file tools (another user's folder, or one no one
    registered as private, would let them read this conversation)."""
    if real == inner:
        return
    check(name, "write", definition.write, inner, budget, real)
    raise BackendError(f"{inner} leads to {real} through a symbolic link: a history is "
                       "written only at its own path, which other users' file tools cannot "
                       "reach; remove the link")


# the check before each model call ---------------------------------------------------------


class SummaryConfig(EventsCompactionConfig):
    """ADK's compaction settings, marked as agentspec's: `SummaryCheck` measures for them,
    and every summarizer set on them (ADK makes its default one when first needed) reports
    its failures (`ReportingSummarizer`)."""

    def __init__(self, **data: Any) -> None:
        super().__init__(**data)
        self.summarizer = self.summarizer  # wrapped by __setattr__

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "summarizer" and value is not None and \
                not isinstance(value, ReportingSummarizer):
            value = ReportingSummarizer(value)
        super().__setattr__(name, value)


_SIZES: dict[str, int] = {}
"""Characters of events already measured, by event id (events do not change once stored)."""
_MAX_SIZES = 200_000


def _event_chars(event: Event) -> int:
    size = _SIZES.get(event.id) if event.id else None
    if size is None:
        size = _chars(event.content)
        if event.id:
            if len(_SIZES) >= _MAX_SIZES:
                _SIZES.clear()
            _SIZES[event.id] = size
    return size


def _chars(content: types.Content | None) -> int:
    total = 0
    for part in (content.parts or []) if content is not None else []:
        if part.text:
            total += len(part.text)
        if part.function_call:
            total += len(part.function_call.name or "") + len(
                json.dumps(part.function_call.args or {}, default=str))
        if part.function_response:
            total += len(part.function_response.name or "") + len(
                json.dumps(part.function_response.response or {}, default=str))
    return total


def prompt_tokens(events: list[Event], agent: str, scope: str | None, limit: int) -> int:
    """The estimated size, in tokens, of `agent`'s next request (see the module docstring);
    the counting stops once it reaches `limit`."""
    chars = 0
    summarized_until: float | None = None
    for event in reversed(events):
        if event.isolation_scope != scope:
            continue
        compaction = event.actions.compaction if event.actions else None
        if compaction is not None:
            if summarized_until is None and compaction.compacted_content is not None:
                chars += _chars(compaction.compacted_content)
                summarized_until = compaction.end_timestamp or 0.0
            continue
        if summarized_until is not None:
            if event.timestamp <= summarized_until:
                break  # older events are in the summary
        elif event.author == agent and event.usage_metadata is not None and \
                event.usage_metadata.prompt_token_count is not None:
            return event.usage_metadata.prompt_token_count + (chars + _event_chars(event)) // 4
        chars += _event_chars(event)
        if chars // 4 >= limit:
            break
    return chars // 4


class SummaryCheck(adk.CompactionRequestProcessor):
    """ADK's compaction request processor, measuring agentspec's settings by `prompt_tokens`
    (any other settings are left to ADK's own code)."""

    async def run_async(self, invocation_context: InvocationContext, llm_request: LlmRequest
                        ) -> AsyncGenerator[Event, None]:
        config = invocation_context.events_compaction_config
        if not isinstance(config, SummaryConfig):
            async for event in super().run_async(invocation_context, llm_request):
                yield event
            return
        threshold, keep = config.token_threshold, config.event_retention_size
        if threshold is None or keep is None:
            return
        session, agent = invocation_context.session, adk.require_agent(invocation_context)
        scope = invocation_context.isolation_scope
        if prompt_tokens(session.events, agent.name, scope, threshold) < threshold:
            return
        failures: list[str] = []
        token = _FAILURES.set(failures)
        try:
            if await _summarize(invocation_context, agent, config, keep):
                invocation_context.token_compaction_checked = True
        finally:
            _FAILURES.reset(token)
        for failure in failures:  # no content: no model sees it; `run` and `test` do
            yield failure_event(invocation_context, agent.name, failure)


async def _summarize(context: InvocationContext, agent: Any, config: SummaryConfig,
                     keep: int) -> bool:
    """ADK's token-threshold compaction, once the check has fired."""
    session, scope = context.session, context.isolation_scope
    events = [e for e in adk.apply_rewinds(session.events) if e.isolation_scope == scope]
    dropped = adk.events_to_compact(events=events, event_retention_size=keep)
    if not dropped or not adk.is_range_worth_compacting(events=events,
                                                      events_to_compact=dropped):
        return False
    adk.ensure_summarizer(config=config, agent=agent)  # wrapped as it is set
    SESSION.set(session)
    summary = await adk.summarize_events(
        session=session, config=config, events=events, events_to_compact=dropped,
        trigger="token_threshold")
    if summary is None:
        return False
    summary.isolation_scope = scope
    await context.session_service.append_event(session=session, event=summary)
    return True


def install_check() -> None:
    """Put `SummaryCheck` where ADK's flows take their compaction processor from (each
    flow is made per run, from this module attribute). Settings that are not agentspec's
    keep ADK's behaviour."""
    if not isinstance(adk.compaction_request_processor(), SummaryCheck):
        adk.install_compaction_request_processor(SummaryCheck())
