"""What `agentspec run` shows of a conversation: each event as readable lines, once; a line
per model switch; and what a resumed turn (a background job's parent, run by a worker)
added to the conversation while nobody was looking."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

import click

__all__ = ["IDLE_POLL_SECONDS", "Echo", "Switches", "Watch", "caught_up", "describe",
           "short", "unseen"]


def short(value: Any, limit: int = 300) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(event: Any, *, text: bool = True) -> list[str]:
    """Readable lines for one event: tool calls, results and answers (what a model wrote
    with its hidden characters escaped; not with `text=False`, when it was streamed),
    failures. An approval request and the stand-in result of the call it pauses are left to
    the approval prompt."""
    from agentspec.runtime.harness.approvals import is_approval_request
    from agentspec.runtime.harness.call_text import visible

    paused = event.actions.requested_tool_confirmations or {}
    lines: list[str] = []
    if event.error_code is not None:  # an agent that failed inside the run (as a tool, ...)
        lines.append(f"[{event.author}] failed: {event.error_code}: {event.error_message}")
    route = (event.custom_metadata or {}).get("agentspec_route")
    if route:
        for failed in route["failed"]:
            lines.append(f"[{event.author}] chose {failed['agent']} ({failed['reason']}), which "
                         f"failed: {short(failed['error'], 200)}")
        lines.append(f"[{event.author}] routes to {route['agent']}: {route['reason']}")
    summary = (event.custom_metadata or {}).get("agentspec_summary_failed")
    if summary:
        lines.append(f"[{event.author}] warning: summarization failed, so the conversation "
                     f"went on unsummarized: {short(summary['error'], 200)}")
    plan = (event.custom_metadata or {}).get("agentspec_plan")
    if plan and "result" not in plan:  # a node was planned; its result arrives as answers
        lines += _plan_lines(plan)
    for part in (event.content.parts if event.content else None) or ():
        if part.function_call:
            call = part.function_call
            if is_approval_request(event, call):
                continue
            if call.name == "transfer_to_agent":
                lines.append(f"[{event.author}] -> transfers to {call.args.get('agent_name')}")
            else:
                lines.append(f"[{event.author}] calls {call.name}({short(call.args)})")
        elif part.function_response and part.function_response.name != "transfer_to_agent":
            response = part.function_response
            if response.id in paused:
                continue
            lines.append(f"[{event.author}] {response.name} returned {short(response.response)}")
        elif part.text and not part.thought and text:
            lines.append(f"[{event.author}] {part.text}")
    return [visible(line) for line in lines]


def _plan_lines(plan: dict[str, Any]) -> list[str]:
    """A planned node, indented by its depth: its kind, subtasks and notes."""
    indent = "  " * (plan["depth"] - 1)
    how = {"llm": "answers directly", "parallel": "splits in parallel",
           "sequential": "splits in sequence"}[plan["kind"]]
    lines = [f"{indent}[{plan['node']}] {how}: {short(plan['task'], 160)}"]
    lines += [f"{indent}  {i}. {short(task, 160)}" for i, task in enumerate(plan["subtasks"], 1)]
    lines += [f"{indent}  ({note})" for note in plan["notes"]]
    return lines


class Echo:
    """Prints a run's events once each. An agent's failure is held back until the run goes
    on: a run that ends on it ends with one message naming the party at fault instead."""

    def __init__(self) -> None:
        from agentspec.cli.progress import Elapsed
        from agentspec.runtime.usage import Ledger

        self.shown: set[str] = set()
        self.held: Any = None
        self.failed_agent: str | None = None
        self.usage = Ledger()  # the run's model calls
        self.per_turn = False  # `--usage`: each turn's too
        self.elapsed = Elapsed()
        self.streaming: str | None = None  # the agent whose streamed text is being printed

    def __call__(self, event: Any) -> None:
        self.elapsed.clear()
        if event.partial:  # a streamed chunk: its text as it arrives
            self._stream(event)
            return
        streamed = self.streaming
        self._end_stream()
        self.flush()
        if event.id in self.shown:
            return
        self.shown.add(event.id)
        if event.error_code is not None and event.content is None:
            self.held, self.failed_agent = event, event.author
            return
        for line in describe(event, text=streamed != event.author):
            click.echo(line)

    def _stream(self, event: Any) -> None:
        from agentspec.runtime.harness.call_text import visible

        chunk = "".join(part.text for part in (event.content.parts if event.content else None)
                        or () if part.text and not part.thought)
        if not chunk:
            return
        if self.streaming != event.author:
            self._end_stream()
            self.flush()
            click.echo(f"[{event.author}] ", nl=False)
            self.streaming = event.author
        click.echo(visible(chunk), nl=False)

    def end(self) -> None:
        """A turn ended: a streamed answer that ended it gets its line break."""
        self._end_stream()

    def _end_stream(self) -> None:
        if self.streaming is not None:
            click.echo()
            self.streaming = None

    def flush(self) -> None:
        if self.held is not None:
            self._end_stream()
        held, self.held = self.held, None
        if held is not None:
            for line in describe(held):
                click.echo(line)


class Switches(logging.Handler):
    """One line per model switch after a failure (a fallback, a route asked again)."""

    def emit(self, record: logging.LogRecord) -> None:
        click.echo(record.getMessage())


async def unseen(service: Any, app_name: str, session_id: str, echo: Echo, *,
                  first: bool) -> list[Any]:
    """What others added to the conversation since it was last looked at: the answers a
    parent resumed by a finished background job gave (the worker appends them). At the start
    of a run (`first`), what resumed turns said after the last message a person sent."""
    from agentspec.runtime.jobs.resume import RESUME_PREFIX

    session = await service.get_session(app_name=app_name, user_id="user",
                                        session_id=session_id)
    events = list(session.events) if session is not None else []
    if first:
        sent = [i for i, event in enumerate(events) if event.author == "user"
                and not (event.invocation_id or "").startswith(RESUME_PREFIX)]
        echo.shown |= {event.id for event in events[:sent[-1] + 1 if sent else 0]}
        echo.shown |= {event.id for event in events
                       if not (event.invocation_id or "").startswith(RESUME_PREFIX)}
    found = []
    for event in events:
        if event.id in echo.shown or event.partial:
            continue
        if event.author == "user":
            echo.shown.add(event.id)  # a message this run sent, or a delivery's stand-in
        else:
            found.append(event)
    return found


async def caught_up(runner: Any, session_id: str, echo: Echo, *, first: bool) -> None:
    for event in await unseen(runner.session_service, runner.app_name, session_id, echo,
                               first=first):
        echo(event)
    echo.flush()


#: how often a chat waiting for the person looks for answers a resumed turn added
IDLE_POLL_SECONDS = 1.0


class Watch:
    """While the chat waits for the person, a thread of its own reads the conversation store
    every IDLE_POLL_SECONDS and shows what a resumed turn added (the person's `input` stays
    in the main thread: Ctrl-C and the terminal's line editing work as ever). Only between
    turns: `waiting` marks the time at the prompt, and a turn never starts while it shows."""

    def __init__(self, url: str | None, app_name: str, session_id: str, echo: Echo) -> None:
        self.url, self.app_name, self.session_id, self.echo = url, app_name, session_id, echo
        self.lock = threading.Lock()
        self.idle = False
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="agentspec-run-watch",
                                       daemon=True)

    def __enter__(self) -> Watch:
        if self.url is not None:  # in memory: no other process can add to it
            self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join(timeout=30)

    def prompt(self) -> str:
        with self.lock:
            self.idle = True
        try:
            return input("you> ")
        finally:
            with self.lock:
                self.idle = False

    def _watch(self) -> None:
        from agentspec.runtime.sessions import open_sessions

        loop = asyncio.new_event_loop()
        try:
            service, _ = open_sessions(self.url)
            while not self.stop.wait(IDLE_POLL_SECONDS):
                with self.lock:
                    if not self.idle:
                        continue
                    try:
                        added = loop.run_until_complete(unseen(
                            service, self.app_name, self.session_id, self.echo, first=False))
                    except Exception:  # noqa: BLE001, S112 - busy: read it again next time
                        continue  # (each turn reads it too, and fails the run if it cannot)
                    self._show(added)
        finally:
            loop.close()

    def _show(self, events: list[Any]) -> None:
        if not events:
            return
        click.echo()  # off the prompt's line
        for event in events:
            self.echo(event)
        self.echo.flush()
        click.echo("you> ", nl=False)
