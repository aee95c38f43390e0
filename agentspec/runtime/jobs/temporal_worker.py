"""`agentspec worker` on a `temporal://` store: a Temporal worker that runs the spec's jobs
(the workflow of `temporal_workflow.py`, and its two activities: an attempt of the agent,
journaled, and the parent's resumed turn)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, fields
from datetime import timedelta
from typing import Any, TypeVar

from google.adk.agents import BaseAgent
from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker as TemporalWorker

from agentspec.runtime.blame import describe
from agentspec.runtime.jobs import Job
from agentspec.runtime.jobs.delegation import JobSettings, notify
from agentspec.runtime.jobs.resume import Resumer
from agentspec.runtime.jobs.temporal_journal import Journal
from agentspec.runtime.jobs.temporal_store import TemporalStore
from agentspec.runtime.jobs.temporal_workflow import (
    ANSWER,
    APPROVALS,
    RESUME_ACTIVITY,
    RUN_ACTIVITY,
    JobWorkflow,
)
from agentspec.runtime.jobs.worker import JOB_PLUGINS, JOB_STATE, Report, _reported

__all__ = ["TemporalJobs"]

log = logging.getLogger("agentspec.jobs")
_T = TypeVar("_T")


def job_of(record: Mapping[str, Any]) -> Job:
    names = {f.name for f in fields(Job)}
    return Job(**{key: value for key, value in record.items() if key in names})


@dataclass
class TemporalJobs:
    """Runs jobs of `agents` from the Temporal store of `settings`."""

    agents: Mapping[str, BaseAgent]
    settings: JobSettings
    run: Callable[[BaseAgent, str], Awaitable[Any]]
    concurrency: int = 1
    report: Report = lambda what, job: None  # noqa: E731
    resumer: Resumer | None = None
    owner: str = ""
    done: int = 0
    failed: int = 0
    resumed: int = 0

    async def serve(self, stop: asyncio.Event, *, until_idle: bool = False) -> None:
        store = self.settings.open()
        if not isinstance(store, TemporalStore):
            raise TypeError("TemporalJobs needs a temporal:// store")
        await asyncio.to_thread(store.get, "-")  # fails early, naming the server or the namespace
        client = await Client.connect(store.target.address, namespace=store.target.namespace)
        worker = TemporalWorker(
            client, task_queue=store.target.task_queue, workflows=[JobWorkflow],
            activities=[self.run_job, self.resume_parent],
            max_concurrent_activities=self.concurrency,
            graceful_shutdown_timeout=timedelta(seconds=5),
            # a workflow task waits this long on the queue of the worker that ran the job
            # before any worker takes it: a dead worker's jobs would otherwise wait 10 s more
            sticky_queue_schedule_to_start_timeout=timedelta(seconds=1))
        async with worker:
            await stop.wait()

    @activity.defn(name=RUN_ACTIVITY)
    async def run_job(self, record: dict[str, Any], entries: list[dict[str, Any]],
                      decisions: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
        """An attempt: `{ANSWER: ...}`, or `{APPROVALS: [...]}` when the approval gate stopped
        calls (the workflow waits for people's decisions, then runs another)."""
        job = job_of(record)
        if job.agent not in self.agents:
            raise ApplicationError(f"this worker runs no agent `{job.agent}`",
                                   non_retryable=True)
        handle = activity.client().get_workflow_handle(activity.info().workflow_id or "")
        worker_loop = asyncio.get_running_loop()

        async def record_entry(entry: dict[str, Any]) -> None:  # on the agent's loop
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(
                handle.signal("record", entry), worker_loop))

        journal = Journal(entries, record_entry, decisions)
        self.report("claimed", job)

        async def attempt() -> Any:
            JOB_STATE.set(job.state)
            JOB_PLUGINS.set((journal,))
            try:
                return await _reported(self.run(self.agents[job.agent], job.input))
            except Exception:
                if journal.asked:  # a paused run ends without an answer: not a failure
                    return None
                raise

        try:
            answer = await _in_thread(attempt, self.settings_heartbeat())
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - the workflow decides on a retry
            text = self.settings.scrubbed(describe(error, job.agent))
            last = job.attempts >= job.max_attempts
            self.failed += last
            self.report("failed" if last else "will retry",
                        Job(**{**job.to_dict(), "error": text}))
            if last:
                await notify(self.settings, Job(**{**job.to_dict(), "status": "FAILED",
                                                   "error": text}))
            raise ApplicationError(text) from None
        if journal.asked:
            self.report("waiting for approval", job)
            return {APPROVALS: journal.asked}
        self.done += 1
        log.info("job %s: %d calls made, %d replayed from the journal", job.id, journal.made,
                 journal.replayed)
        finished = Job(**{**job.to_dict(), "status": "DONE", "result": answer})
        self.report("done", finished)
        await notify(self.settings, finished)
        return {ANSWER: answer}

    def settings_heartbeat(self) -> float:
        store = self.settings.open()
        return store.target.heartbeat if isinstance(store, TemporalStore) else 10.0

    @activity.defn(name=RESUME_ACTIVITY)
    async def resume_parent(self, record: dict[str, Any]) -> str:
        job = job_of(record)
        if self.resumer is None:  # a worker without a session store: a front end delivers
            return "no conversation"
        self.report("resuming", job)
        resumer = self.resumer
        what: str = await _in_thread(lambda: _reported(resumer.resume(self.settings, job)),
                                     self.settings_heartbeat())
        self.resumed += what == "resumed"
        self.report(what, job)
        return what


async def _in_thread(work: Callable[[], Awaitable[_T]], heartbeat: float) -> _T:
    """`work` on an event loop of its own thread, while this activity heartbeats from the
    worker's loop: ADK runs a sync tool on its loop, and a tool that blocks it for longer than
    the heartbeat timeout would otherwise have a live worker taken for dead. Cancelling the
    activity cancels `work`."""
    loop = asyncio.new_event_loop()
    started: asyncio.Future[asyncio.Task[_T]] = asyncio.get_running_loop().create_future()
    outer = asyncio.get_running_loop()

    def run() -> _T:
        asyncio.set_event_loop(loop)
        try:
            task = loop.create_task(_awaited(work))
            outer.call_soon_threadsafe(started.set_result, task)
            return loop.run_until_complete(task)
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    thread = asyncio.ensure_future(asyncio.to_thread(run))
    try:
        while True:
            activity.heartbeat()
            done, _ = await asyncio.wait([thread], timeout=heartbeat / 3)
            if done:
                return thread.result()
    except asyncio.CancelledError:
        if started.done():
            loop.call_soon_threadsafe(started.result().cancel)
        with contextlib.suppress(BaseException):
            await thread
        raise


async def _awaited(work: Callable[[], Awaitable[_T]]) -> _T:
    return await work()
