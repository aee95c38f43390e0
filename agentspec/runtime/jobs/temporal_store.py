"""The `temporal://HOST:PORT/NAMESPACE?task_queue=Q` job store: each job is a workflow.

A job's id is its workflow id, derived from what it asks (app, user, session, agent,
input), so the same request while the job is queued, running or done finds that workflow
instead of starting another (Temporal refuses the id while it is open, and after it
completed unless it failed or was cancelled: then the request is a new run, as on
SQLite/PostgreSQL). The job's record is the workflow's memo, so listing and showing jobs needs
no worker; delivering one is an update (true for exactly one caller).

The worker side (claim, leases, finish) is Temporal's own: `agentspec worker` runs a Temporal
worker (`temporal_worker.py`), so those methods of the store interface refuse.

The store's methods are synchronous, like the other stores'; they run on an event loop of
the store's own thread, each bounded by the URL's `timeout`, and a server that is down or a
namespace that does not exist is a `StoreError` naming the server and the namespace.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import hashlib
import json
import threading
from collections.abc import Coroutine
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import asdict, fields
from datetime import timedelta
from typing import Any, TypeVar

from agentspec.contract.extras import install
from agentspec.contract.temporal_url import TemporalUrlError, parse_temporal_url
from agentspec.runtime.jobs import Clock, Job, JobRequest, StoreError, now

try:
    from temporalio.client import (
        Client,
        WorkflowExecutionDescription,
        WorkflowExecutionStatus,
        WorkflowHandle,
    )
    from temporalio.common import WorkflowIDReusePolicy
    from temporalio.exceptions import WorkflowAlreadyStartedError
    from temporalio.service import RPCError, RPCStatusCode
except ImportError as missing:  # pragma: no cover - the plain install
    raise StoreError(f"a temporal:// job store needs the `temporal` extra: "
                     f"{install('temporal')}") from missing

from agentspec.runtime.jobs.temporal_workflow import WORKFLOW

__all__ = ["TemporalStore"]

_T = TypeVar("_T")
#: a workflow that ended without recording how its job ended: what the job is then
_ENDED = {WorkflowExecutionStatus.TERMINATED: "CANCELLED",
          WorkflowExecutionStatus.CANCELED: "CANCELLED",
          WorkflowExecutionStatus.TIMED_OUT: "FAILED",
          WorkflowExecutionStatus.FAILED: "FAILED"}


def _job(record: dict[str, Any]) -> Job:
    names = {f.name for f in fields(Job)}
    return Job(**{key: value for key, value in record.items() if key in names})


class TemporalStore:
    def __init__(self, url: str, clock: Clock = now) -> None:
        try:
            self.target = parse_temporal_url(url)
        except TemporalUrlError as error:
            raise StoreError(f"job store URL: {error}; {error.hint}") from None
        self.url, self.clock = url, clock
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever,
                                        name="temporal store", daemon=True)
        self._thread.start()
        self._client: Client | None = None
        self._lock = asyncio.Lock()
        self._closed = False
        atexit.register(self.close)
        try:  # a server that is down or a namespace that does not exist: said when opened
            self._call(self._connect())
        except StoreError:
            self.close()
            raise

    @property
    def where(self) -> str:
        return f"the Temporal server at {self.target.address} (namespace " \
               f"`{self.target.namespace}`)"

    def _call(self, work: Coroutine[Any, Any, _T]) -> _T:
        future = asyncio.run_coroutine_threadsafe(work, self._loop)
        try:
            return future.result(self.target.timeout + 1)
        except FutureTimeout:
            future.cancel()
            raise StoreError(f"{self.where} did not answer within {self.target.timeout:g} s "
                             "(`timeout` in the store URL)") from None
        except RPCError as error:
            raise StoreError(self._rpc(error)) from None

    def _rpc(self, error: RPCError) -> str:
        if error.status == RPCStatusCode.NOT_FOUND and "amespace" in error.message:
            return f"the namespace `{self.target.namespace}` does not exist on the Temporal " \
                   f"server at {self.target.address}: create it (`temporal operator namespace " \
                   "create`) or fix the store URL"
        return f"{self.where} refused the request: {error.message}"

    async def _connect(self) -> Client:
        async with self._lock:
            if self._client is None:
                try:
                    client = await asyncio.wait_for(Client.connect(
                        self.target.address, namespace=self.target.namespace),
                        self.target.timeout)
                    # a namespace that does not exist is refused here, not at the first job
                    await asyncio.wait_for(client.workflow_service.describe_namespace(
                        _describe_namespace(self.target.namespace)), self.target.timeout)
                except (TimeoutError, RuntimeError, OSError) as error:
                    raise StoreError(f"cannot reach {self.where}: {error or 'timed out'}"
                                     ) from None
                except RPCError as error:
                    raise StoreError(self._rpc(error)) from None
                self._client = client
            return self._client

    def _handle(self, client: Client, job_id: str) -> WorkflowHandle[Any, Any]:
        return client.get_workflow_handle(job_id)

    def job_id(self, request: JobRequest) -> str:
        """The job of `request` (workflow ids are unique per namespace: the task queue
        keeps two specs apart)."""
        what = json.dumps([self.target.task_queue, request.app_name, request.user_id,
                           request.session_id, request.agent, request.input])
        return "job-" + hashlib.sha256(what.encode()).hexdigest()[:16]

    def enqueue(self, request: JobRequest) -> tuple[Job, bool]:
        return self._call(self._enqueue(request))

    async def _enqueue(self, request: JobRequest, job_id: str | None = None,
                       attempts_from: Job | None = None) -> tuple[Job, bool]:
        client = await self._connect()
        job_id = job_id or self.job_id(request)
        at = self.clock()
        job = Job(id=job_id, available_at=at, created_at=at, updated_at=at, **asdict(request))
        record = {**job.to_dict(), "heartbeat_seconds": self.target.heartbeat}
        try:
            await client.start_workflow(
                WORKFLOW, record, id=job_id, task_queue=self.target.task_queue,
                id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
                memo={"job": job.to_dict(), "deliverable": False})
        except WorkflowAlreadyStartedError:
            found = await self._get(job_id)
            if found is None:  # pragma: no cover - started and gone at once
                raise StoreError(f"job {job_id} vanished from {self.where}") from None
            return found, False
        return job, True

    def get(self, job_id: str) -> Job | None:
        return self._call(self._get(job_id))

    async def _describe(self, job_id: str) -> WorkflowExecutionDescription | None:
        client = await self._connect()
        try:
            return await self._handle(client, job_id).describe()
        except RPCError as error:
            if error.status == RPCStatusCode.NOT_FOUND and "amespace" not in error.message:
                return None
            raise

    async def _get(self, job_id: str) -> Job | None:
        found = await self._describe(job_id)
        return None if found is None else await self._record(found)

    async def _record(self, found: WorkflowExecutionDescription) -> Job:
        memo = await found.memo()
        job = _job(memo["job"])
        ended = _ENDED.get(found.status) if found.status is not None else None
        if ended is not None and job.status not in ("DONE", "FAILED", "CANCELLED"):
            return _job({**job.to_dict(), "status": ended, "finished_at": (
                found.close_time.timestamp() if found.close_time else None)})
        return job

    def recent(self, *, status: str | None = None, session_id: str | None = None,
               limit: int = 100) -> list[Job]:
        return self._call(self._recent(status, session_id, limit))

    async def _recent(self, status: str | None, session_id: str | None, limit: int,
                      open_only: bool = False) -> list[Job]:
        client = await self._connect()
        query = f"WorkflowType = '{WORKFLOW}' AND TaskQueue = '{self.target.task_queue}'"
        if open_only:
            query += " AND ExecutionStatus = 'Running'"
        # a retried job is a new run of its workflow: visibility lists each run, and the
        # job is its newest
        newest: dict[str, Any] = {}
        async for found in client.list_workflows(query):
            known = newest.get(found.id)
            if known is None or found.start_time > known.start_time:
                newest[found.id] = found
        jobs: list[Job] = []
        for found in newest.values():
            job = await self._record(found)
            if (status is None or job.status == status) and (
                    session_id is None or job.session_id == session_id):
                jobs.append(job)
        jobs.sort(key=lambda job: job.created_at, reverse=True)
        return jobs[:limit]

    def cancel(self, job_id: str) -> Job | None:
        return self._call(self._cancel(job_id))

    async def _cancel(self, job_id: str) -> Job | None:
        job = await self._get(job_id)
        if job is None or job.status not in ("QUEUED", "RUNNING"):
            return job if job is None else None
        client = await self._connect()
        # ended at once, whether a worker runs it or none is there to see a cancellation:
        # a running attempt's next heartbeat finds its workflow gone and stops the agent
        await self._handle(client, job_id).terminate(reason="cancelled with agentspec jobs")
        return await self._get(job_id)

    def approvals(self, job_id: str) -> list[dict[str, Any]]:
        """The calls of the job waiting for a person (`interrupt_on`): each {key, agent, tool,
        args, question, decisions}, in the order the job made them."""
        return self._call(self._approvals(job_id))

    async def _approvals(self, job_id: str) -> list[dict[str, Any]]:
        found = await self._describe(job_id)
        if found is None or found.status != WorkflowExecutionStatus.RUNNING:
            return []
        waiting: list[dict[str, Any]] = (await found.memo()).get("approvals") or []
        return waiting

    def answer(self, job_id: str, number: int | None, kind: str, *,
               edit: dict[str, Any] | None = None, message: str | None = None
               ) -> dict[str, Any]:
        """Sends a person's decision (`kind`: approve, edit with `edit` as the arguments,
        reject with an optional `message`) on the job's waiting call `number` (1-based;
        None: the only one) to its workflow, which goes on once every waiting call is
        answered; the call answered. A job with no such call, or a decision the call does
        not offer, is a StoreError saying so."""
        return self._call(self._answer(job_id, number, kind, edit, message))

    async def _answer(self, job_id: str, number: int | None, kind: str,
                      edit: dict[str, Any] | None, message: str | None) -> dict[str, Any]:
        waiting = await self._approvals(job_id)
        if not waiting:
            raise StoreError(f"job {job_id} is not waiting for an approval")
        if number is None and len(waiting) > 1:
            raise StoreError(f"job {job_id} waits for {len(waiting)} approvals: say which "
                             f"with --call 1 to {len(waiting)} (`agentspec jobs show`)")
        index = 1 if number is None else number
        if not 1 <= index <= len(waiting):
            raise StoreError(f"job {job_id} has no waiting call {index} (it has "
                             f"{len(waiting)})")
        call = waiting[index - 1]
        if call.get("answered"):
            raise StoreError(f"the call to `{call['tool']}` of job {job_id} was already "
                             f"answered ({call['answered']}); a call takes one answer")
        if kind not in call["decisions"]:
            raise StoreError(f"the call to `{call['tool']}` offers "
                             f"{', '.join(call['decisions'])}, not {kind}")
        client = await self._connect()
        await self._handle(client, job_id).signal("decide", {
            "key": call["key"], "args": call["args"], "kind": kind, "edit": edit,
            "message": message})
        return call

    def retry(self, job_id: str) -> Job | None:
        return self._call(self._retry(job_id))

    async def _retry(self, job_id: str) -> Job | None:
        job = await self._get(job_id)
        if job is None or job.status not in ("FAILED", "CANCELLED"):
            return None
        request = JobRequest(**{f.name: getattr(job, f.name) for f in fields(JobRequest)})
        fresh, _ = await self._enqueue(request, job_id)
        return fresh

    def undelivered(self, app_name: str, user_id: str, session_id: str) -> list[Job]:
        return self._call(self._undelivered(app_name, user_id, session_id))

    async def _undelivered(self, app_name: str, user_id: str, session_id: str) -> list[Job]:
        client = await self._connect()
        query = f"WorkflowType = '{WORKFLOW}' AND TaskQueue = '{self.target.task_queue}' " \
                "AND ExecutionStatus = 'Running'"
        jobs = []
        async for found in client.list_workflows(query):
            memo = await found.memo()
            job = _job(memo["job"])
            if memo.get("deliverable") and (job.app_name, job.user_id, job.session_id) == (
                    app_name, user_id, session_id):
                jobs.append(job)
        return sorted(jobs, key=lambda job: job.finished_at or 0)

    def mark_delivered(self, job_id: str) -> bool:
        return self._call(self._update(job_id, "mark_delivered")) is True

    def unmark_delivered(self, job_id: str) -> None:
        self._call(self._update(job_id, "unmark_delivered"))

    async def _update(self, job_id: str, name: str) -> Any:
        client = await self._connect()
        try:
            return await self._handle(client, job_id).execute_update(
                name, rpc_timeout=timedelta(seconds=self.target.timeout))
        except RPCError:
            raise
        except Exception:  # noqa: BLE001 - a closed workflow: delivered long ago
            return False

    def _worker_side(self, *_: Any, **__: Any) -> Any:
        raise StoreError("on a temporal:// store, Temporal hands jobs to workers: run "
                         "`agentspec worker SPEC`, which runs a Temporal worker")

    claim = heartbeat = finish = fail = release = _worker_side
    claim_resume = renew_resume = end_resume = _worker_side

    def close(self) -> None:
        """Drops the client on its own loop, then stops and joins the loop's thread. Also run
        at exit: a process that ends with the client alive in that thread can crash in the
        SDK's native code while the interpreter shuts down (`jobs list` exited with SIGSEGV
        after printing its table, under load)."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)

        async def drop() -> None:
            self._client = None
            gc.collect()  # the native client is freed here, on its loop, not at shutdown

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(drop(), self._loop).result(self.target.timeout)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(self.target.timeout)
        if not self._thread.is_alive():
            self._loop.close()


def _describe_namespace(namespace: str) -> Any:
    from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest

    return DescribeNamespaceRequest(namespace=namespace)
