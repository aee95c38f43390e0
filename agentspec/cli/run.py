"""`agentspec run`: talk to a spec's agents, with a real model or a script."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import textwrap
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
from agentspec.cli.inputs import parse_state, state_option
from agentspec.cli.progress import show_request, streaming, usage_lines
from agentspec.cli.run_output import Echo, Switches, Watch, caught_up, short


async def _session(runner: Any, session_id: str, state: dict[str, str]) -> str:
    """Continues the session, or creates it with `state` and each key the spec says its
    creator supplies (asked for at a terminal)."""
    from agentspec.cli.inputs import supplied
    from agentspec.runtime.state import required_inputs

    service = runner.session_service
    found = await service.get_session(app_name=runner.app_name, user_id="user",
                                      session_id=session_id)
    if found is None:
        await service.create_session(app_name=runner.app_name, user_id="user",
                                     session_id=session_id,
                                     state=supplied(required_inputs(runner.app), state))
    elif state:  # a continued conversation: the given keys change its state
        from google.adk.events import Event, EventActions

        await service.append_event(found, Event(author="user",
                                                actions=EventActions(state_delta=state)))
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
        text = input(f"  new arguments as a JSON object (empty keeps {short(shown, 200)}): ")
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
                              f"{pending.tool}({short(pending.args)})")
        decision = decisions.pop(0)
        click.echo(f"[{pending.agent}] {pending.tool}({short(pending.args)}): scripted "
                   f"{decision.kind}" + (f" {short(decision.args)}" if decision.args else ""))
        return decision

    return decide


async def _deliveries(runner: Any, session_id: str, echo: Echo) -> None:
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


async def _turn(runner: Any, session_id: str, message: str, decide: Decide,
                echo: Echo) -> None:
    from agentspec.runtime.observing import collecting
    from agentspec.runtime.usage import Ledger
    from agentspec.testing.conversation import turn

    await caught_up(runner, session_id, echo, first=False)
    await _deliveries(runner, session_id, echo)
    ledger = Ledger()

    def asked(pending: Any) -> Any:  # the elapsed line keeps off the approval prompt
        echo.end()
        with echo.elapsed.paused():
            return decide(pending)

    try:
        with collecting(ledger), echo.elapsed.running():
            waiting = await turn(runner, session_id, message, decide=asked, on_event=echo,
                                 run_config=streaming())
    finally:
        echo.usage.add(ledger)
        if echo.per_turn:
            echo.flush()
            for line in usage_lines(ledger, "turn usage"):
                click.echo(line)
    echo.end()
    for pending in waiting:
        click.echo(f"agentspec: {pending.tool} is left waiting for approval")
    echo.flush()
    await caught_up(runner, session_id, echo, first=False)


async def _chat(app: Any, services: tuple[Any, Any], session_url: str | None,
                session_id: str, messages: list[str], decide: Decide,
                state: dict[str, str], echo: Echo) -> None:
    """MESSAGES in turn, or a chat at the terminal when there are none."""
    from google.adk.runners import Runner

    from agentspec.runtime.sessions import reachable

    sessions, artifacts = services
    runner = Runner(app=app, session_service=sessions, artifact_service=artifacts)
    try:
        await reachable(sessions, session_url, app.name)
        await _session(runner, session_id, state)
        await caught_up(runner, session_id, echo, first=True)
        if messages:
            for message in messages:
                click.echo(f"you> {message}")
                await _turn(runner, session_id, message, decide, echo)
            return
        with Watch(session_url, runner.app_name, session_id, echo) as watch:
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
    code, the script, the environment, a store); None for a failure of agentspec itself. A
    router whose every option failed raised the first one's error: the chain follows it."""
    from agentspec.runtime.router import attempts_note

    said, chain = _blame(exc, agent), attempts_note(exc)
    return f"{said} ({chain})" if said is not None and chain is not None else said


def _blame(exc: BaseException, agent: str | None) -> str | None:
    import httpx
    from google.genai.errors import APIError

    from agentspec.runtime.blame import ModelError, UserCodeError, cause, classified
    from agentspec.runtime.env import MissingEnvironmentVariable
    from agentspec.runtime.instructions import PlaceholderError
    from agentspec.runtime.jobs import StoreError
    from agentspec.runtime.remote import RemoteAgentError
    from agentspec.runtime.router import RoutingError
    from agentspec.runtime.sessions import SessionsError
    from agentspec.runtime.usage import budget_stop
    from agentspec.testing.scripted import ScriptedFailure, ScriptError

    found = classified(exc, agent)
    if isinstance(found, (ModelError, UserCodeError)):
        return str(found)
    if isinstance(exc, (APIError, httpx.HTTPError, ConnectionError, TimeoutError)):
        who = f"agent `{agent}`: " if agent else ""
        return f"{who}the model service failed: {cause(exc)}"
    if isinstance(exc, (ScriptError, ScriptedFailure, RoutingError, MissingEnvironmentVariable,
                        StoreError, PlaceholderError, SessionsError, RemoteAgentError)):
        return f"the run failed: {exc}"
    stopped = budget_stop(exc)
    if stopped is not None:
        return f"the run stopped: {stopped}"
    if isinstance(exc, ValueError):  # e.g. ADK: "API key must be set ..." or "Model ... not found"
        return str(exc)
    return None


@dataclass
class _Script:
    replies: dict[str, list[Any]]
    messages: list[str]
    decisions: list[Any] | None  # None: the person at the terminal decides


#: the keys of a script for `run --script` and `worker --script`; a scenario file (one
#: scenario) is a script too, whose other keys `run` leaves to `agentspec test`
SCRIPT_KEYS = ("replies", "messages", "decisions")


def load_script(path: Path) -> _Script:
    from agentspec.diagnostics import did_you_mean
    from agentspec.parse import load
    from agentspec.testing.models import Scenario
    from agentspec.testing.scripted import ScriptError, parse_decision

    parsed = load(path)
    if not parsed.ok or not isinstance(parsed.value, dict):
        print_diagnostics(parsed.diagnostics, {parsed.source.name: parsed.source})
        raise click.UsageError(f"{path} is not a readable script")
    known = [*SCRIPT_KEYS, *(k for k in Scenario.model_fields if k not in SCRIPT_KEYS)]
    unknown = [str(key) for key in parsed.value if key not in known]
    if "scenarios" in unknown:
        raise click.UsageError(f"{path} holds several scenarios (`scenarios:`); a script is "
                               "one: `agentspec test` runs a file of several, or give one "
                               "scenario's `messages` and `replies` in a file of its own")
    if unknown:  # a misspelt `replies:` would run with no replies at all
        close = did_you_mean(unknown[0], known)
        raise click.UsageError(
            f"{path}: a script does not take `{unknown[0][:60]}`"
            + (f" ({close})" if close else "") + "; its keys are `replies` (each agent's "
            "replies: `replies: {AGENT: [...]}`), `messages` and `decisions` (a scenario "
            "file's other keys are read by `agentspec test`)")
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
@click.option("--usage", "per_turn", is_flag=True,
              help="Show the tokens and cost of each turn (the run's are shown at the end).")
@click.option("--verbose", is_flag=True,
              help="Print the exact request each model receives (instruction, tools, "
                   "contents) on standard error.")
@state_option
@environment_option
def command(spec: Path, message: str | None, script: Path | None, session_url: str | None,
            session_id: str, per_turn: bool, verbose: bool, state_values: tuple[str, ...],
            environment: str | None) -> None:
    """Send MESSAGE to SPEC's root agent, or chat in the terminal when MESSAGE is omitted."""
    from agentspec.runtime.observing import REQUESTS, observer_of
    from agentspec.runtime.sessions import sessions_url

    state = parse_state(state_values)
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

    observer_of(app)  # counts every model call's tokens
    echo = Echo()
    echo.per_turn = per_turn
    requests = REQUESTS.set(show_request if verbose else None)
    reported = FAILURES_REPORTED.set(True)  # each is a line of the run, or its end message
    switches = Switches()
    SWITCHES.addHandler(switches)
    SWITCHES.propagate = False
    try:
        asyncio.run(_chat(app, services(session_url), session_url, session_id, messages,
                          decide, state, echo))
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
        REQUESTS.reset(requests)
        # scripted models' counts are their own: on request; a run that called no model
        # (it failed first) has nothing to sum
        if per_turn or (script is None and echo.usage.total.calls):
            for line in usage_lines(echo.usage, "usage"):
                click.echo(line, err=True)
    problems = list(dict.fromkeys(p for m in models.values() for p in m.problems))
    if problems:  # the run went on (an agent tool, a router's fallback), the script is wrong
        for problem in problems:
            click.echo(f"agentspec: {problem}", err=True)
        sys.exit(1)
