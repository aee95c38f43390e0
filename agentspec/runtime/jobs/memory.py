"""`memory://`: jobs in a dict, for tests and a single process."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from agentspec.runtime.jobs import Clock, Job, JobRequest, finished, new_job, now
from agentspec.runtime.jobs.sql import ABANDONED_ERROR

__all__ = ["MemoryStore"]


class MemoryStore:
    def __init__(self, url: str = "memory://", clock: Clock = now) -> None:
        self.url = url
        self._now = clock
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

    def _put(self, job: Job) -> Job:
        self._jobs[job.id] = job
        return job

    def enqueue(self, request: JobRequest) -> tuple[Job, bool]:
        with self._lock:
            matching = [
                job for job in self._jobs.values()
                if job.status in ("QUEUED", "RUNNING", "DONE")
                and (job.app_name, job.user_id, job.session_id) == (
                    request.app_name, request.user_id, request.session_id)
                and ((job.agent, job.input) == (request.agent, request.input) or (
                    request.function_call_id and
                    job.function_call_id == request.function_call_id))]
            if matching:  # an active one first, else the newest DONE one
                return min(matching, key=lambda j: (j.status == "DONE", -j.created_at)), False
            return self._put(new_job(request, self._now())), True

    def get(self, job_id: str) -> Job | None:
        return self._jobs.get(job_id)

    def recent(self, *, status: str | None = None, session_id: str | None = None,
             limit: int = 100) -> list[Job]:
        found = [j for j in self._jobs.values() if (status is None or j.status == status)
                 and (session_id is None or j.session_id == session_id)]
        return sorted(found, key=lambda j: j.created_at, reverse=True)[:limit]

    def claim(self, owner: str, lease_seconds: float,
              agents: tuple[str, ...] | None = None) -> Job | None:
        with self._lock:
            moment = self._now()
            for job in list(self._jobs.values()):  # its workers kept dying with it
                if job.status == "RUNNING" and (job.lease_expires_at or 0) < moment and \
                        job.attempts >= job.max_attempts:
                    self._put(finished(job, self._now(), status="FAILED", error=ABANDONED_ERROR))
            runnable = [j for j in self._jobs.values()
                        if (agents is None or j.agent in agents) and (
                            (j.status == "QUEUED" and j.available_at <= moment) or
                            (j.status == "RUNNING" and (j.lease_expires_at or 0) < moment))]
            if not runnable:
                return None
            job = min(runnable, key=lambda j: (j.available_at, j.created_at))
            return self._put(replace(job, status="RUNNING", attempts=job.attempts + 1,
                                     lease_owner=owner, lease_expires_at=moment + lease_seconds,
                                     started_at=job.started_at or moment, updated_at=moment,
                                     last_event=None, last_event_at=None))

    def _held(self, job_id: str, owner: str) -> Job | None:
        job = self._jobs.get(job_id)
        return job if job is not None and job.status == "RUNNING" and \
            job.lease_owner == owner else None

    def heartbeat(self, job_id: str, owner: str, lease_seconds: float,
                  last_event: str | None = None) -> bool:
        with self._lock:
            job = self._held(job_id, owner)
            if job is None:
                return False
            moment = self._now()
            job = replace(job, lease_expires_at=moment + lease_seconds, updated_at=moment)
            if last_event is not None:
                job = replace(job, last_event=last_event, last_event_at=moment)
            self._put(job)
            return True

    def finish(self, job_id: str, owner: str, result: Any,
               usage: Mapping[str, Any] | None = None) -> Job | None:
        with self._lock:
            job = self._held(job_id, owner)
            if job is not None and usage is not None:
                job = replace(job, usage=dict(usage))
            return None if job is None else self._put(
                finished(job, self._now(), status="DONE", result=result, error=None))

    def fail(self, job_id: str, owner: str, error: str, retry_in: float | None,
             usage: Mapping[str, Any] | None = None) -> Job | None:
        with self._lock:
            job = self._held(job_id, owner)
            if job is None:
                return None
            if usage is not None:
                job = replace(job, usage=dict(usage))
            if retry_in is not None and job.attempts < job.max_attempts:
                moment = self._now()
                return self._put(replace(job, status="QUEUED", error=error, lease_owner=None,
                                         lease_expires_at=None, available_at=moment + retry_in,
                                         updated_at=moment))
            return self._put(finished(job, self._now(), status="FAILED", error=error))

    def release(self, job_id: str, owner: str) -> bool:
        with self._lock:
            job = self._held(job_id, owner)
            if job is None:
                return False
            self._put(replace(job, status="QUEUED", attempts=max(0, job.attempts - 1),
                              lease_owner=None, lease_expires_at=None, updated_at=self._now()))
            return True

    def cancel(self, job_id: str) -> Job | None:
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.status in ("DONE", "FAILED", "CANCELLED"):
                return job
            return self._put(finished(job, self._now(), status="CANCELLED"))

    def retry(self, job_id: str) -> Job | None:
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.status not in ("FAILED", "CANCELLED"):
                return job
            moment = self._now()
            return self._put(replace(job, status="QUEUED", attempts=0, error=None,
                                     finished_at=None, delivered_at=None, resumed_at=None,
                                     available_at=moment, updated_at=moment))

    def undelivered(self, app_name: str, user_id: str, session_id: str) -> list[Job]:
        found = [j for j in self._jobs.values() if j.status in ("DONE", "FAILED")
                 and j.delivered_at is None
                 and (j.on_done != "resume" or j.resumed_at is not None)
                 and (j.app_name, j.user_id, j.session_id) == (app_name, user_id, session_id)]
        return sorted(found, key=lambda j: j.finished_at or 0)

    def mark_delivered(self, job_id: str) -> bool:
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.delivered_at is not None:
                return False
            self._put(replace(job, delivered_at=self._now()))
            return True

    def unmark_delivered(self, job_id: str) -> None:
        with self._lock:
            job = self._jobs.get(job_id)
            if job is not None:
                self._put(replace(job, delivered_at=None))

    def _resuming(self, job_id: str, owner: str | None, moment: float) -> Job | None:
        """The job if its parent waits to be resumed and `owner` may hold the lease (None:
        nobody holds a live one)."""
        job = self._jobs.get(job_id)
        if job is None or not job.resumes or job.resumed_at is not None:
            return None
        if owner is None:
            free = job.lease_owner is None or (job.lease_expires_at or 0) < moment
            return job if free else None
        return job if job.lease_owner == owner else None

    def claim_resume(self, owner: str, lease_seconds: float,
                     agents: tuple[str, ...] | None = None,
                     job_id: str | None = None) -> Job | None:
        with self._lock:
            moment = self._now()
            waiting = [j for j in self._jobs.values()
                       if (job_id is None or j.id == job_id)
                       and (agents is None or j.agent in agents)
                       and self._resuming(j.id, None, moment) is not None]
            if not waiting:
                return None
            job = min(waiting, key=lambda j: j.finished_at or 0)
            return self._put(replace(job, lease_owner=owner,
                                     lease_expires_at=moment + lease_seconds, updated_at=moment))

    def renew_resume(self, job_id: str, owner: str, lease_seconds: float) -> bool:
        with self._lock:
            moment = self._now()
            job = self._resuming(job_id, owner, moment)
            if job is None:
                return False
            self._put(replace(job, lease_expires_at=moment + lease_seconds, updated_at=moment))
            return True

    def end_resume(self, job_id: str, owner: str, resumed: bool) -> bool:
        with self._lock:
            moment = self._now()
            job = self._resuming(job_id, owner, moment)
            if job is None:
                return False
            self._put(replace(job, lease_owner=None, lease_expires_at=None, updated_at=moment,
                              resumed_at=moment if resumed else None))
            return True

    def close(self) -> None:
        pass
