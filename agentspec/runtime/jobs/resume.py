"""`jobs.on_done: resume`: a finished job goes into its conversation at once, and the parent
runs one turn there, with no user message, to act on it.

The worker that resumes a job holds its resume lease (`JobStore.claim_resume`), and every
step is keyed by the job inside the conversation, so a worker that dies anywhere in between
leaves work that the next one finishes without doing any of it twice:

1. delivery: the job's event (`deliver_event`, which names the job) is appended unless the
   conversation already holds it;
2. the turn runs under the invocation id `agentspec-resume-<job id>`; a conversation that
   already has that invocation's final answer is not run again, and one cut short (the worker
   died after the model called a tool, say) is continued under the same id, so the
   conversation holds one resumed turn whatever happened;
3. `end_resume` records it (`resumed_at`).

Two resumptions of one conversation at once (eight jobs of one parent finishing together, on
one worker or several) race for the conversation: the session store refuses the writes of
all but one (`StaleSessionError`). That is no failure: the refused one starts over, from a
fresh read of the conversation, after a backoff (doubling, with jitter, through the
injectable `sleep`), and the steps above make starting over safe.

A turn that fails (the model service is down, say) is not run again: the job is in the
conversation, where the parent meets it on the next turn, and the failure is reported
(`TurnFailed`). A failure before that (the session store is unreachable) leaves the lease to
expire, so the resumption is tried again a lease later.

The conversation is read and written through the session service the front end uses (the
spec's `sessions:` URL), so workers and front ends on other machines see the same turn.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from google.adk.errors import StaleSessionError
from google.adk.events.event import Event
from google.adk.runners import Runner

from agentspec.runtime.blame import describe
from agentspec.runtime.jobs import Job
from agentspec.runtime.jobs.delegation import JobSettings, deliver_event

__all__ = ["RESUME_PREFIX", "Resumer", "TurnFailed", "resume_invocation"]

log = logging.getLogger("agentspec.jobs")

RESUME_PREFIX = "agentspec-resume-"


def resume_invocation(job: Job) -> str:
    """The invocation id of the turn that resumes `job`'s parent."""
    return f"{RESUME_PREFIX}{job.id}"


class TurnFailed(Exception):
    """The resumed turn failed after the job was delivered."""


def _delivered(events: list[Event], job: Job) -> bool:
    return any(((event.custom_metadata or {}).get("agentspec_job") or {}).get("job_id")
               == job.id for event in events)


def _answered(events: list[Event], job: Job) -> bool:
    """Whether the resumed turn has its final answer (from an agent of the app, not the
    delivered job)."""
    invocation = resume_invocation(job)
    return any(event.invocation_id == invocation and event.author not in ("user", job.agent)
               and event.is_final_response() and event.content is not None
               for event in events)


@dataclass
class Resumer:
    """Resumes parents of finished jobs in the app's conversations."""

    app: Any  # the ADK App
    sessions: Any  # its session service
    artifacts: Any = None
    on_event: Callable[[Event], None] = lambda event: None  # noqa: E731
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    #: starts over after a stale session at most this many times (then the lease expires
    #: and the resumption is tried again a lease later, by any worker)
    stale_retries: int = 40
    first_backoff: float = 0.05
    max_backoff: float = 2.0

    async def resume(self, settings: JobSettings, job: Job) -> str:
        """Delivers `job` and runs its parent's turn, whatever part of that is still to do,
        starting over while the conversation changes under it (see the module docstring);
        what it did: "resumed", "already resumed" or "no conversation"."""
        delay = self.first_backoff
        for retry in range(self.stale_retries + 1):
            try:
                return await self._resume_once(settings, job)
            except (StaleSessionError, TurnFailed) as error:
                stale = error if isinstance(error, StaleSessionError) else error.__cause__
                if not isinstance(stale, StaleSessionError) or retry == self.stale_retries:
                    raise
                log.info("job %s: its conversation changed while resuming it; starting "
                         "over", job.id)
            await self.sleep(random.uniform(delay / 2, delay))
            delay = min(delay * 2, self.max_backoff)
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    async def _resume_once(self, settings: JobSettings, job: Job) -> str:
        session = await self.sessions.get_session(
            app_name=job.app_name, user_id=job.user_id, session_id=job.session_id)
        if session is None:
            log.warning("job %s: its conversation %s is not in the session store, so its "
                        "parent cannot be resumed (it is delivered when the conversation "
                        "next runs)", job.id, job.session_id)
            return "no conversation"
        invocation = resume_invocation(job)
        if not _delivered(session.events, job):
            await asyncio.to_thread(settings.open().mark_delivered, job.id)
            event = deliver_event(job, invocation)
            await self.sessions.append_event(session, event)
            self.on_event(event)
        elif _answered(session.events, job):
            return "already resumed"
        runner = Runner(app=self.app, session_service=self.sessions,
                        artifact_service=self.artifacts)
        try:
            async for event in runner.run_async(user_id=job.user_id, session_id=job.session_id,
                                                invocation_id=invocation):
                self.on_event(event)
        except Exception as error:
            raise TurnFailed(describe(error)) from error
        finally:
            await runner.close()
        return "resumed"
