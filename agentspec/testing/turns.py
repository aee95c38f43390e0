"""A conversation played to its end on an app, offline of any store the project keeps: what
`agentspec test` (a scenario) and `agentspec eval` (a case) both do with a spec's agents.

A run gets a job store and a `type: store` files database of its own (`isolated`), then
`play` opens a Runner on in-memory services, creates the session with the given state,
sends each message as a turn (approvals answered by `decide`), records what the agents did
(an `Outcome`: calls, agents, final answer, failures, state) and closes the Runner. Every
failure of an agent is reported by the caller from the outcome, so ADK's own traceback of
it is not logged as well.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from google.adk.events.event import Event

    from agentspec.runtime.harness.approvals import Decision, PendingApproval
    from agentspec.runtime.usage import Ledger
    from agentspec.testing.scenarios import Outcome

    #: the answer to a call waiting for approval; None leaves it waiting
    Decide = Callable[[PendingApproval], Decision | None]

__all__ = ["Played", "Unanswered", "environment_set", "isolated", "play", "spec_app"]


def spec_app(spec: Path, environment: str | None, *, scripted: bool) -> tuple[Any, list[str]]:
    """The app of `spec`, compiled and built for one run, or None and why it cannot run (the
    compiler's errors, or the build's problems). `scripted`: its models are to be scripted,
    so a missing provider package is no problem."""
    from agentspec.compiler import build_objects, compile_spec
    from agentspec.runtime.models import SCRIPTED

    compiled = compile_spec(spec, environment=environment)
    if not compiled.ok:
        return None, [f"{d.code} {d.message}" for d in compiled.diagnostics if d.is_error]
    token = SCRIPTED.set(scripted)
    try:
        app, problems = build_objects(compiled)
    finally:
        SCRIPTED.reset(token)
    if problems:
        return None, [f"cannot build: {p.code} {p.message}" + (f" ({p.hint})" if p.hint else "")
                      for p in problems]
    return app, []


@contextlib.contextmanager
def environment_set(values: Mapping[str, str]) -> Iterator[None]:
    """`values` set in the process's environment for one run, the old values put back."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def isolated(env: Mapping[str, str], label: str) -> Iterator[None]:
    """`env` set for one run, with a job store (`label` names it) and a database for
    `type: store` files of the run's own, never the project's: gone with the run."""
    from agentspec.runtime.backends.store import close_files
    from agentspec.runtime.backends.store_table import STORE_OVERRIDE as FILES
    from agentspec.runtime.jobs.delegation import STORE_OVERRIDE as JOBS

    jobs = f"memory://{label}-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="agentspec-files-") as scratch:
        files = f"sqlite:///{Path(scratch) / 'files.db'}"
        try:
            with environment_set({**env, JOBS: jobs, FILES: files}):
                yield
        finally:
            close_files(files)


class Unanswered(Exception):
    """A turn ended with a call still waiting for a person's approval."""

    def __init__(self, pending: PendingApproval) -> None:
        super().__init__(f"`{pending.tool}` of `{pending.agent}` is still waiting for a "
                         "person's approval")
        self.pending = pending


@dataclass
class Played:
    """What a played conversation did (`outcome`), and the session's events as stored."""

    outcome: Outcome
    events: list[Event]


async def _play(app: Any, messages: Sequence[str], state: Mapping[str, Any],
                decide: Decide) -> Played:
    from google.adk.artifacts import InMemoryArtifactService
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    from agentspec.testing.conversation import turn
    from agentspec.testing.scenarios import Outcome

    outcome = Outcome()

    def answered(pending: PendingApproval) -> Decision | None:
        decision = decide(pending)
        if decision is not None and decision.kind == "reject":
            outcome.settled.add(pending.call_id)  # its error result is the person's no
        return decision

    runner = Runner(app=app, session_service=InMemorySessionService(),
                    artifact_service=InMemoryArtifactService())
    try:
        session = await runner.session_service.create_session(
            app_name=app.name, user_id="user", state=dict(state))
        for message in messages:
            left = await turn(runner, session.id, message, decide=answered,
                              on_event=outcome.record)
            if left:
                raise Unanswered(left[0])
        stored = await runner.session_service.get_session(app_name=app.name, user_id="user",
                                                          session_id=session.id)
        events = list(stored.events) if stored else []
        outcome.after_turns(events)
    finally:
        await runner.close()
    outcome.state = dict(stored.state) if stored else {}
    return Played(outcome, events)


def play(app: Any, messages: Sequence[str], *, state: Mapping[str, Any], decide: Decide,
         usage: Ledger | None = None) -> Played:
    """`messages` sent in turn to `app` in a session created with `state`, each approval
    answered by `decide` (an `Unanswered` error when it leaves one waiting); with `usage`,
    the tokens the model calls report are summed there. An agent's failure is in the
    outcome's `failures`; what the agents' run raised is raised."""
    from agentspec.runtime.nodes import FAILURES_REPORTED
    from agentspec.runtime.observing import collecting, observer_of

    reported = FAILURES_REPORTED.set(True)  # the caller reports each failure
    try:
        if usage is None:
            return asyncio.run(_play(app, messages, state, decide))
        observer_of(app)
        with collecting(usage):
            return asyncio.run(_play(app, messages, state, decide))
    finally:
        FAILURES_REPORTED.reset(reported)
