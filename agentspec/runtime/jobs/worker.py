"""The worker: claims jobs of a spec's offline agents and runs them.

A worker holds a lease on each job it runs and renews it while the agent works (every third
of the lease), from a thread of its own: ADK runs a sync tool on the event loop, so a renewal
waiting for the loop would stop while such a tool blocks, and a live worker would lose its
job to another one. A failure is retried after a growing delay (2, 4, 8 ... seconds, at most 60)
until the job's attempts run out. `stop` (SIGTERM in `agentspec worker`) ends the claiming;
running jobs get `grace` seconds to finish, then are released, so another worker runs them
at once. A worker killed outright loses nothing either: its leases expire, and another
worker claims the jobs again. A result reaches the store only while its worker still holds
the lease, so each job keeps exactly one result.

A worker given a `Resumer` also resumes the parents of its finished `on_done: resume` jobs:
at once, in the task that finished the job, and, for a resumption whose worker died (its
resume lease expired), when it has no job to run (`resume.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
import os
import socket
import threading
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from google.adk.agents import BaseAgent
from google.adk.artifacts import InMemoryArtifactService
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from agentspec.contract.urls import scrubbed
from agentspec.runtime.blame import describe
from agentspec.runtime.harness.approvals import PendingApproval, pending_approvals
from agentspec.runtime.jobs import Job
from agentspec.runtime.jobs.delegation import JobSettings, notify
from agentspec.runtime.jobs.progress import REPORTER, Latest
from agentspec.runtime.jobs.resume import Resumer, TurnFailed
from agentspec.runtime.nodes import FAILURES_REPORTED
from agentspec.runtime.observing import JOB
from agentspec.runtime.usage import Ledger
from agentspec.runtime.workflows import final_text

__all__ = ["Worker", "backoff", "run_agent"]

log = logging.getLogger("agentspec.jobs")

MAX_BACKOFF = 60.0


def backoff(attempts: int, base: float = 2.0) -> float:
    return min(MAX_BACKOFF, base ** max(1, attempts))


#: the state the running job was queued with (the caller's required inputs): set for the
#: task that runs a job, so any `Worker.run` sees it without a change of signature
JOB_STATE: ContextVar[Mapping[str, Any] | None] = ContextVar("agentspec_job_state",
                                                           default=None)
#: plugins the running job's runner gets besides the agents' own (a Temporal job's journal)
JOB_PLUGINS: ContextVar[tuple[BasePlugin, ...]] = ContextVar("agentspec_job_plugins",
                                                             default=())


async def run_agent(agent: BaseAgent, request: str,
                    state: Mapping[str, Any] | None = None,
                    plugins: Sequence[BasePlugin] = ()) -> Any:
    """Runs `agent` on `request` in a session of its own, which starts with `state` (the
    spec's initial state) and the state the job was queued with (`JOB_STATE`); its last
    answer. `plugins`: the app's that watch jobs too (its observer: spans, usage, budget)."""
    state = {**(state or {}), **(JOB_STATE.get() or {})}
    plugins = [*plugins, *JOB_PLUGINS.get()]
    runner = Runner(app_name="agentspec_jobs", agent=agent, plugins=plugins or None,
                    session_service=InMemorySessionService(),
                    artifact_service=InMemoryArtifactService())
    try:
        session = await runner.session_service.create_session(
            app_name="agentspec_jobs", user_id="worker", state=copy.deepcopy(dict(state or {})))
        answer = None
        asked: list[PendingApproval] = []
        message = types.Content(role="user", parts=[types.Part(text=request)])
        report = REPORTER.get()
        async for event in runner.run_async(user_id="worker", session_id=session.id,
                                            new_message=message):
            answer = final_text(event) or answer
            asked += pending_approvals(event)
            if report is not None:
                report(event)
    finally:
        await runner.close()
    if answer is None and asked:
        raise RuntimeError(f"{asked[0].agent} asked for a person's approval of "
                           f"`{asked[0].tool}`, and a job waits for one only on a "
                           "temporal:// job store")
    if answer is None:
        raise RuntimeError(f"{agent.name} finished without an answer")
    if getattr(agent, "output_schema", None) is not None:  # structured: keep the value
        with contextlib.suppress(json.JSONDecodeError):
            return json.loads(answer)
    return answer


def _spent(job: Job, attempt: Ledger) -> dict[str, Any]:
    """The job's model calls over every attempt: the earlier ones' and this one's."""
    total = Ledger.from_json(job.usage)
    total.add(attempt)
    return total.as_json()


Report = Callable[[str, Job], None]  # (what happened, the job)
_T = TypeVar("_T")


async def _reported(work: Awaitable[_T]) -> _T:
    """`work` run where its failure is reported (the job's row and the worker's line, or
    the resumption's), so ADK's loggers leave out their tracebacks of it."""
    FAILURES_REPORTED.set(True)  # in the task's own context, which the agent's tasks copy
    return await work


@dataclass
class Worker:
    agents: Mapping[str, BaseAgent]
    settings: JobSettings
    concurrency: int = 1
    poll_seconds: float = 0.5
    grace_seconds: float = 30.0
    backoff_base: float = 2.0
    report: Report = lambda what, job: None  # noqa: E731
    owner: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}:"
                                                f"{uuid.uuid4().hex[:6]}")
    run: Callable[[BaseAgent, str], Awaitable[Any]] = run_agent
    resumer: Resumer | None = None  # resumes parents of `on_done: resume` jobs
    #: each job's model calls (this worker's attempts), by job id, for its report
    usage: dict[str, Ledger] = field(default_factory=dict)
    done: int = 0
    failed: int = 0
    resumed: int = 0

    async def serve(self, stop: asyncio.Event, *, until_idle: bool = False) -> None:
        """Claims and runs jobs until `stop` is set (or, `until_idle`, until no job of its
        agents is queued or running anywhere)."""
        store = self.settings.open()
        running: dict[asyncio.Task[None], Job] = {}
        stopping = asyncio.create_task(stop.wait())
        while not stop.is_set():
            for task in [t for t in running if t.done()]:
                running.pop(task)
            job = None
            if len(running) < self.concurrency:
                try:
                    job = await asyncio.to_thread(store.claim, self.owner,
                                                  self.settings.lease_seconds,
                                                  tuple(self.agents))
                except Exception as error:  # noqa: BLE001 - the store may come back
                    log.warning("worker %s: claiming failed: %s", self.owner,
                                self.settings.scrubbed(str(error)))
                    await asyncio.wait([stopping], timeout=self.poll_seconds * 4)
                    continue
            if job is None and len(running) < self.concurrency and self.resumer is not None:
                try:  # a resumption whose worker died
                    job = await asyncio.to_thread(store.claim_resume, self.owner,
                                                  self.settings.lease_seconds,
                                                  tuple(self.agents))
                except Exception as error:  # noqa: BLE001 - the store may come back
                    log.warning("worker %s: claiming a resumption failed: %s", self.owner,
                                self.settings.scrubbed(str(error)))
                if job is not None:
                    running[asyncio.create_task(self._resume(job))] = job
                    continue
            if job is not None:
                self.report("claimed", job)
                running[asyncio.create_task(self._run(job))] = job
                continue
            if until_idle and not running and not await asyncio.to_thread(self._pending):
                break
            # a job that finishes frees a slot at once; an empty queue is polled
            full = len(running) >= self.concurrency
            await asyncio.wait([stopping, *running], return_when=asyncio.FIRST_COMPLETED,
                               timeout=None if full else self.poll_seconds)
        stopping.cancel()
        await self._shut_down(running)

    def _pending(self) -> bool:
        """Whether jobs of these agents are still queued, or running (perhaps under a lease
        that will expire because its worker died)."""
        store = self.settings.open()
        statuses = ("QUEUED", "RUNNING") + (("DONE", "FAILED") if self.resumer else ())
        return any(job.agent in self.agents and (job.status in ("QUEUED", "RUNNING") or (
            job.resumes and job.resumed_at is None))
            for status in statuses for job in store.recent(status=status, limit=1000))

    async def _shut_down(self, running: dict[asyncio.Task[None], Job]) -> None:
        if not running:
            return
        _, unfinished = await asyncio.wait(running, timeout=self.grace_seconds)
        store = self.settings.open()
        for task in unfinished:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            job = running[task]
            if job.status == "RUNNING":
                if await asyncio.to_thread(store.release, job.id, self.owner):
                    self.report("released", job)
            elif await asyncio.to_thread(store.end_resume, job.id, self.owner, False):
                self.report("released", job)  # its resumption, to another worker

    async def _run(self, job: Job) -> None:
        store = self.settings.open()
        beats: list[_Lease] = []  # the lease, once made: an event brings its next beat forward

        def wake() -> None:
            for lease in beats:
                lease.poke()

        latest = Latest(wake)
        token = JOB_STATE.set(job.state)  # the task copies the context as it is now
        usage = Ledger()
        running = JOB.set((job.id, usage))
        reporting = REPORTER.set(latest.report)
        try:
            work = asyncio.ensure_future(_reported(self.run(self.agents[job.agent], job.input)))
        finally:
            REPORTER.reset(reporting)
            JOB_STATE.reset(token)
            JOB.reset(running)
        self.usage[job.id] = usage
        lost = asyncio.Event()

        def on_lost() -> None:  # on the event loop, once the thread finds the lease gone
            if work.done():
                return  # finished meanwhile: its result reaches the store or is dropped there
            self.report("lost the lease", job)
            lost.set()
            work.cancel()

        loop = asyncio.get_running_loop()
        lease = _Lease(job.id, lambda: _beat(store, job.id, self.owner,
                                             self.settings.lease_seconds, latest.take()),
                       self.settings.lease_seconds, lambda: loop.call_soon_threadsafe(on_lost))
        beats.append(lease)
        lease.start()
        work.add_done_callback(lambda _: lease.stop())  # before the result is recorded
        try:
            answer = await work
        except asyncio.CancelledError:
            if not lost.is_set():
                raise
            return  # the lease was lost: another worker has the job
        except Exception as error:  # noqa: BLE001 - the job failed; the worker goes on
            after = await asyncio.to_thread(
                store.fail, job.id, self.owner,
                self.settings.scrubbed(describe(error, job.agent)),
                backoff(job.attempts, self.backoff_base), _spent(job, usage))
            if after is not None:
                self.failed += after.status == "FAILED"
                self.report("failed" if after.status == "FAILED" else "will retry", after)
                if after.status == "FAILED":
                    await notify(self.settings, after)
                    await self._resume_finished(after)
        else:
            after = await asyncio.to_thread(store.finish, job.id, self.owner, answer,
                                            _spent(job, usage))
            if after is not None:
                self.done += 1
                self.report("done", after)
                await notify(self.settings, after)
                await self._resume_finished(after)
            else:
                self.report("lost the lease", job)
        finally:
            lease.stop()
            work.cancel()  # a worker stopping (or a lost lease) stops the agent too

    async def _resume_finished(self, job: Job) -> None:
        """Resumes the parent of a job this worker just finished, if it asked for that
        (another worker may have claimed the resumption meanwhile: then it resumes)."""
        if self.resumer is None or not job.resumes:
            return
        claimed = await asyncio.to_thread(self.settings.open().claim_resume, self.owner,
                                          self.settings.lease_seconds, None, job.id)
        if claimed is not None:
            await self._resume(claimed)

    async def _resume(self, job: Job) -> None:
        """Delivers the finished `job` (leased for resumption) and runs its parent's turn,
        under a renewed lease. A failed turn is reported and not run again (the job is in
        the conversation); a failure before it leaves the lease to expire, so the
        resumption is tried again (by any worker) a lease later."""
        assert self.resumer is not None
        store = self.settings.open()
        self.report("resuming", job)
        work = asyncio.ensure_future(_reported(self.resumer.resume(self.settings, job)))
        lost = asyncio.Event()

        def on_lost() -> None:
            if not work.done():
                self.report("lost the lease", job)
                lost.set()
                work.cancel()

        loop = asyncio.get_running_loop()
        lease = _Lease(job.id, lambda: store.renew_resume(job.id, self.owner,
                                                          self.settings.lease_seconds),
                       self.settings.lease_seconds, lambda: loop.call_soon_threadsafe(on_lost))
        lease.start()
        work.add_done_callback(lambda _: lease.stop())
        failure = None
        try:
            what = await work
        except asyncio.CancelledError:
            if not lost.is_set():  # the worker is stopping: another one takes it over now
                with contextlib.suppress(Exception):
                    store.end_resume(job.id, self.owner, False)
                raise
            return
        except TurnFailed as error:
            what, failure = "resume failed", self.settings.scrubbed(str(error))
            log.warning("job %s: its parent's resumed turn failed: %s", job.id, failure)
        except Exception as error:  # noqa: BLE001 - tried again when the lease expires
            why = self.settings.scrubbed(f"{type(error).__name__}: {error}")
            log.warning("job %s: resuming its parent failed: %s", job.id, why)
            self.report("resume failed", replace(job, error=why))
            return
        finally:
            lease.stop()
            work.cancel()
        if await asyncio.to_thread(store.end_resume, job.id, self.owner, True):
            self.resumed += what == "resumed"
            self.report(what, job if failure is None else replace(job, error=failure))
        else:
            self.report("lost the lease", job)


def _beat(store: Any, job_id: str, owner: str, seconds: float, last_event: str | None) -> bool:
    """A renewal, carrying the agent's newest event when there is one (a store that predates
    events is called as it always was)."""
    if last_event is None:
        return bool(store.heartbeat(job_id, owner, seconds))
    return bool(store.heartbeat(job_id, owner, seconds, last_event=last_event))


class _Lease(threading.Thread):
    """Renews a lease (`renew`: a job's, or its resumption's) every third of it until
    stopped, whatever the event loop is doing, and at once when poked (the job's agent did
    something to record); a store error is retried at the next beat, and a lease lost to
    another worker calls `lost` once (its result would be dropped anyway)."""

    def __init__(self, job_id: str, renew: Callable[[], bool], seconds: float,
                 lost: Callable[[], object]) -> None:
        super().__init__(name=f"lease {job_id}", daemon=True)
        self.job_id, self.renew, self.seconds, self.lost = job_id, renew, seconds, lost
        self._stopped = threading.Event()
        self._wake = threading.Event()

    def stop(self) -> None:
        self._stopped.set()
        self._wake.set()

    def poke(self) -> None:
        self._wake.set()

    def run(self) -> None:
        while True:
            self._wake.wait(self.seconds / 3)
            self._wake.clear()  # before renewing: a poke from now on beats again
            if self._stopped.is_set():
                return
            try:
                held = self.renew()
            except Exception as error:  # noqa: BLE001 - try again at the next beat
                log.warning("job %s: renewing the lease failed: %s", self.job_id,
                            scrubbed(str(error)))
                continue
            if not held and not self._stopped.is_set():
                self.lost()
                return
