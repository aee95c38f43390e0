"""`agentspec run`: talk to a spec's agents, with a real model or a script."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import sys
import textwrap
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from agentspec.cli.common import (
    built,
    environment_option,
    print_diagnostics,
    require_credentials,
    services,
)


def _short(value: Any, limit: int = 300) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(event: Any) -> list[str]:
    """Readable lines for one event: tool calls, results and answers (what a model wrote
    with its hidden characters escaped), failures. An approval request and the stand-in
    result of the call it pauses are left to the approval prompt."""
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
                         f"failed: {_short(failed['error'], 200)}")
        lines.append(f"[{event.author}] routes to {route['agent']}: {route['reason']}")
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
                lines.append(f"[{event.author}] calls {call.name}({_short(call.args)})")
        elif part.function_response and part.function_response.name != "transfer_to_agent":
            response = part.function_response
            if response.id in paused:
                continue
            lines.append(f"[{event.author}] {response.name} returned {_short(response.response)}")
        elif part.text and not part.thought:
            lines.append(f"[{event.author}] {part.text}")
    return [visible(line) for line in lines]


def _plan_lines(plan: dict[str, Any]) -> list[str]:
    """A planned node, indented by its depth: its kind, subtasks and notes."""
    indent = "  " * (plan["depth"] - 1)
    how = {"llm": "answers directly", "parallel": "splits in parallel",
           "sequential": "splits in sequence"}[plan["kind"]]
    lines = [f"{indent}[{plan['node']}] {how}: {_short(plan['task'], 160)}"]
    lines += [f"{indent}  {i}. {_short(task, 160)}" for i, task in enumerate(plan["subtasks"], 1)]
    lines += [f"{indent}  ({note})" for note in plan["notes"]]
    return lines


async def _session(runner: Any, session_id: str) -> str:
    service = runner.session_service
    found = await service.get_session(app_name=runner.app_name, user_id="user",
                                      session_id=session_id)
    if found is None:
        await service.create_session(app_name=runner.app_name, user_id="user",
                                     session_id=session_id)
    return session_id


Decide = Callable[[Any], Any]  # PendingApproval -> Decision | None (None: leave it waiting)


def _terminal_decision(pending: Any) -> Any:
    """Asks the person at the terminal; None when input ends (the call stays waiting)."""
    from agentspec.runtime.harness.approvals import Decision
    from agentspec.runtime.harness.call_text import call_text

    offered = "/".join(pending.decisions)
    click.echo(f"[{pending.agent}] needs approval: {pending.hint}")
    shown = textwrap.indent(call_text(pending.tool, pending.args), "  ")
    if sys.stdout.isatty() and shown.count("\n") + 4 > shutil.get_terminal_size().lines:
        click.echo_via_pager(shown + "\n")  # all of it, a page at a time
    else:
        click.echo(shown)
    choices = {d[0]: d for d in pending.decisions} | {d: d for d in pending.decisions}
    try:
        while (choice := input(f"  {offered}? ").strip().lower()) not in choices:
            click.echo(f"  answer one of: {offered}")
        kind = choices[choice]
        if kind == "reject":
            return Decision("reject", message=input("  reason for the agent (optional): ")
                            .strip() or None)
        if kind == "approve":
            return Decision("approve")
        return Decision("edit", args=_edited_args(pending.args))
    except EOFError:
        return None


def _edited_args(current: dict[str, Any]) -> dict[str, Any]:
    shown = json.dumps(current, ensure_ascii=False)
    while True:
        text = input(f"  new arguments as a JSON object (empty keeps {_short(shown, 200)}): ")
        if not text.strip():
            return current
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            click.echo(f"  not JSON: {exc}")
            continue
        if isinstance(value, dict):
            return value
        click.echo("  the arguments must be a JSON object")


def _scripted_decisions(decisions: list[Any]) -> Decide:
    from agentspec.testing.scripted import ScriptError

    def decide(pending: Any) -> Any:
        if not decisions:
            raise ScriptError(f"the script has no more decisions; {pending.agent} asks to approve "
                              f"{pending.tool}({_short(pending.args)})")
        decision = decisions.pop(0)
        click.echo(f"[{pending.agent}] {pending.tool}({_short(pending.args)}): scripted "
                   f"{decision.kind}" + (f" {_short(decision.args)}" if decision.args else ""))
        return decision

    return decide


class _Echo:
    """Prints a run's events once each. An agent's failure is held back until the run goes
    on: a run that ends on it ends with one message naming the party at fault instead."""

    def __init__(self) -> None:
        self.shown: set[str] = set()
        self.held: Any = None
        self.failed_agent: str | None = None

    def __call__(self, event: Any) -> None:
        self.flush()
        if event.id in self.shown:
            return
        self.shown.add(event.id)
        if event.error_code is not None and event.content is None:
            self.held, self.failed_agent = event, event.author
            return
        for line in describe(event):
            click.echo(line)

    def flush(self) -> None:
        held, self.held = self.held, None
        if held is not None:
            for line in describe(held):
                click.echo(line)


class _Switches(logging.Handler):
    """One line per model switch after a failure (a fallback, a route asked again)."""

    def emit(self, record: logging.LogRecord) -> None:
        click.echo(record.getMessage())


async def _deliveries(runner: Any, session_id: str, echo: _Echo) -> None:
    """Finished background jobs go into the conversation before the next message (the app's
    JobDelivery plugin would do it too, but out of sight), and are shown."""
    from agentspec.runtime.jobs.delegation import app_job_settings, deliver

    settings = app_job_settings(runner.app)
    if settings is None:
        return
    session = await runner.session_service.get_session(app_name=runner.app_name,
                                                        user_id="user", session_id=session_id)
    for event in await deliver(settings, runner.session_service, session,
                               "agentspec-run-delivery"):
        echo(event)


async def _unseen(service: Any, app_name: str, session_id: str, echo: _Echo, *,
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
    unseen = []
    for event in events:
        if event.id in echo.shown or event.partial:
            continue
        if event.author == "user":
            echo.shown.add(event.id)  # a message this run sent, or a delivery's stand-in
        else:
            unseen.append(event)
    return unseen


async def _caught_up(runner: Any, session_id: str, echo: _Echo, *, first: bool) -> None:
    for event in await _unseen(runner.session_service, runner.app_name, session_id, echo,
                               first=first):
        echo(event)
    echo.flush()


#: how often a chat waiting for the person looks for answers a resumed turn added
IDLE_POLL_SECONDS = 1.0


class _Watch:
    """While the chat waits for the person, a thread of its own reads the conversation store
    every IDLE_POLL_SECONDS and shows what a resumed turn added (the person's `input` stays
    in the main thread: Ctrl-C and the terminal's line editing work as ever). Only between
    turns: `waiting` marks the time at the prompt, and a turn never starts while it shows."""

    def __init__(self, url: str | None, app_name: str, session_id: str, echo: _Echo) -> None:
        self.url, self.app_name, self.session_id, self.echo = url, app_name, session_id, echo
        self.lock = threading.Lock()
        self.idle = False
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="agentspec-run-watch",
                                       daemon=True)

    def __enter__(self) -> _Watch:
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
                        unseen = loop.run_until_complete(_unseen(
                            service, self.app_name, self.session_id, self.echo, first=False))
                    except Exception:  # noqa: BLE001, S112 - busy: read it again next time
                        continue  # (each turn reads it too, and fails the run if it cannot)
                    self._show(unseen)
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


async def _turn(runner: Any, session_id: str, message: str, decide: Decide,
                echo: _Echo) -> None:
    from agentspec.testing.conversation import turn

    await _caught_up(runner, session_id, echo, first=False)
    await _deliveries(runner, session_id, echo)
    for pending in await turn(runner, session_id, message, decide=decide, on_event=echo):
        click.echo(f"agentspec: {pending.tool} is left waiting for approval")
    echo.flush()
    await _caught_up(runner, session_id, echo, first=False)


async def _chat(app: Any, services: tuple[Any, Any], session_url: str | None,
                session_id: str, messages: list[str], decide: Decide, echo: _Echo) -> None:
    """MESSAGES in turn, or a chat at the terminal when there are none."""
    from google.adk.runners import Runner

    from agentspec.runtime.sessions import reachable

    sessions, artifacts = services
    runner = Runner(app=app, session_service=sessions, artifact_service=artifacts)
    try:
        await reachable(sessions, session_url, app.name)
        await _session(runner, session_id)
        await _caught_up(runner, session_id, echo, first=True)
        if messages:
            for message in messages:
                click.echo(f"you> {message}")
                await _turn(runner, session_id, message, decide, echo)
            return
        with _Watch(session_url, runner.app_name, session_id, echo) as watch:
            while True:
                try:
                    message = watch.prompt()
                except EOFError:
                    return
                if message.strip() in ("/quit", "/exit"):
                    return
                if message.strip():
                    await _turn(runner, session_id, message, decide, echo)
    finally:
        await runner.close()


def run_failure(exc: BaseException, agent: str | None) -> str | None:
    """What to say when a run ends on `exc`: whose fault it is (a model service, the user's
    code, the script, the environment, a store); None for a failure of agentspec itself."""
    import httpx
    from google.genai.errors import APIError

    from agentspec.runtime.blame import ModelError, UserCodeError, classified, model_error
    from agentspec.runtime.env import MissingEnvironmentVariable
    from agentspec.runtime.instructions import PlaceholderError
    from agentspec.runtime.jobs import StoreError
    from agentspec.runtime.router import RoutingError
    from agentspec.runtime.sessions import SessionsError
    from agentspec.testing.scripted import ScriptedFailure, ScriptError

    found = classified(exc, agent)
    if isinstance(found, (ModelError, UserCodeError)):
        return str(found)
    if isinstance(exc, (APIError, httpx.HTTPError, ConnectionError, TimeoutError)):
        return str(model_error(None, exc, agent))
    if isinstance(exc, (ScriptError, ScriptedFailure, RoutingError, MissingEnvironmentVariable,
                        StoreError, PlaceholderError, SessionsError)):
        return f"the run failed: {exc}"
    if isinstance(exc, ValueError):  # e.g. ADK: "API key must be set ..." or "Model ... not found"
        return str(exc)
    return None


@dataclass
class _Script:
    replies: dict[str, list[Any]]
    messages: list[str]
    decisions: list[Any] | None  # None: the person at the terminal decides


def load_script(path: Path) -> _Script:
    from agentspec.parse import load
    from agentspec.testing.scripted import ScriptError, parse_decision

    parsed = load(path)
    if not parsed.ok or not isinstance(parsed.value, dict):
        print_diagnostics(parsed.diagnostics, {parsed.source.name: parsed.source})
        raise click.UsageError(f"{path} is not a readable script")
    replies = parsed.value.get("replies") or {}
    messages = parsed.value.get("messages") or []
    decisions = parsed.value.get("decisions")
    if not isinstance(replies, dict) or not isinstance(messages, list) or \
            not isinstance(decisions, (list, type(None))):
        raise click.UsageError(f"{path}: `replies` is a mapping of agent -> list, `messages` "
                               "and `decisions` are lists")
    try:
        return _Script(replies, [str(m) for m in messages],
                       None if decisions is None else [parse_decision(d) for d in decisions])
    except ScriptError as exc:
        raise click.UsageError(f"{path}: {exc}") from exc


@click.command(name="run")
@click.argument("spec", type=click.Path(path_type=Path))
@click.argument("message", required=False)
@click.option("--script", type=click.Path(path_type=Path),
              help="Run offline: scripted replies per agent (see README).")
@click.option("--session", "session_url", metavar="URL",
              help="The conversation store (sqlite:///PATH, postgresql://..., any URL ADK's "
                   "session services take); default: AGENTSPEC_SESSIONS, else the spec's "
                   "`sessions:`, else in memory.")
@click.option("--session-id", default="default", show_default=True,
              help="Which conversation in --session to continue.")
@environment_option
def command(spec: Path, message: str | None, script: Path | None, session_url: str | None,
            session_id: str, environment: str | None) -> None:
    """Send MESSAGE to SPEC's root agent, or chat in the terminal when MESSAGE is omitted."""
    from agentspec.runtime.sessions import sessions_url

    spec_built = built(spec, environment)
    app = spec_built.app
    session_url = sessions_url(session_url, spec_built.sessions)
    messages = [message] if message else []
    decide: Decide = _terminal_decision
    models: dict[str, Any] = {}
    if script is not None:
        from agentspec.testing.scripted import ScriptError, install_script

        loaded = load_script(script)
        messages = messages or loaded.messages
        if loaded.decisions is not None:
            decide = _scripted_decisions(loaded.decisions)
        try:
            models = install_script(app.root_agent, loaded.replies,
                                    app.events_compaction_config)
        except ScriptError as exc:
            raise click.UsageError(str(exc)) from exc
    else:
        require_credentials(spec_built.gemini)
    from agentspec.runtime.model_routing import SWITCHES
    from agentspec.runtime.nodes import FAILURES_REPORTED

    echo = _Echo()
    reported = FAILURES_REPORTED.set(True)  # each is a line of the run, or its end message
    switches = _Switches()
    SWITCHES.addHandler(switches)
    SWITCHES.propagate = False
    try:
        asyncio.run(_chat(app, services(session_url), session_url, session_id, messages,
                          decide, echo))
    except Exception as exc:  # noqa: BLE001 - said as whose fault it is; ours goes on up
        message = run_failure(exc, echo.failed_agent)
        if message is None:
            raise
        click.echo(f"agentspec: {message}", err=True)
        sys.exit(1)
    finally:
        SWITCHES.removeHandler(switches)
        SWITCHES.propagate = True
        FAILURES_REPORTED.reset(reported)
    problems = list(dict.fromkeys(p for m in models.values() for p in m.problems))
    if problems:  # the run went on (an agent tool, a router's fallback), the script is wrong
        for problem in problems:
            click.echo(f"agentspec: {problem}", err=True)
        sys.exit(1)
