"""Background jobs for `execution_mode: offline` agents: records and the store interface.

A job is one delegation to an offline agent: who asked (app, user, session, invocation, the
function call), what (the agent and its input), and how it went (status, attempts, the lease
of the worker running it, result or error, when it was delivered). Stores keep jobs behind one
interface (`JobStore`); `open_store(url)` picks one by URL: `memory://` (tests, one process),
`sqlite:///path` (the embedded default, safe for several workers on one machine) and
`postgresql://...` (workers on many machines share one queue).

Statuses: QUEUED -> RUNNING -> DONE | FAILED (a failure with attempts left goes back to
QUEUED, later); CANCELLED by a person. A RUNNING job whose lease expired (its worker died) is
claimed again by another worker. While a job runs, its worker records the agent's last event
(`last_event`, `last_event_at`: a model reply, a tool call or result) with its lease, so
`jobs show` tells a job at work from a stuck one; a claim clears them.

What happens to a finished job is its `on_done`, recorded when it is queued. `wait`: it is
delivered into its conversation when that next runs (`undelivered`, `mark_delivered`).
`resume`: a worker delivers it and runs the parent for one turn at once. That resumption is a
phase of the finished job with a lease of its own (a finished job holds no other, so the
lease columns serve): DONE|FAILED with `resumed_at` unset is waiting; `claim_resume` leases it
to one worker, `renew_resume` keeps the lease, `end_resume` sets `resumed_at` (or gives the
lease back); a lease that expires because its worker died lets another worker claim it.

Every time a store records or compares (due, leases, ordering) comes from its `clock`, the
wall clock unless one is given, so a test moves time instead of sleeping through it.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal, Protocol, get_args

__all__ = ["FINISHED", "ON_DONE", "STATUSES", "Clock", "Job", "JobRequest", "JobStore",
           "StoreError", "new_job", "now"]

#: seconds since the epoch, as `time.time()` gives them
Clock = Callable[[], float]

STATUSES = ("QUEUED", "RUNNING", "DONE", "FAILED", "CANCELLED")
FINISHED = ("DONE", "FAILED", "CANCELLED")
OnDone = Literal["wait", "resume"]
ON_DONE: tuple[OnDone, ...] = get_args(OnDone)


class StoreError(RuntimeError):
    """The store cannot be opened or used (bad URL, unreachable server, missing driver)."""


def now() -> float:
    return time.time()


@dataclass(frozen=True, kw_only=True)
class JobRequest:
    """What a delegation asks for."""

    agent: str
    input: str
    app_name: str = ""
    user_id: str = ""
    session_id: str = ""
    invocation_id: str = ""
    function_call_id: str = ""
    tool: str = ""  # the tool the parent called (the agent's name, or `task`)
    max_attempts: int  # the spec's `jobs.max_attempts`
    output_key: str = ""  # the parent's state key a DONE result is delivered to ("": none)
    on_done: OnDone  # "wait": delivered on the next turn; "resume": a worker resumes
    #: the caller's session state the job's session starts with: the keys the spec's
    #: `state:` marks `required`, which no one else could give it
    state: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Job(JobRequest):
    """A job record: the request, and how it went."""

    id: str
    status: str = "QUEUED"
    attempts: int = 0
    lease_owner: str | None = None
    lease_expires_at: float | None = None
    available_at: float = field(default_factory=now)
    created_at: float = field(default_factory=now)
    updated_at: float = field(default_factory=now)
    started_at: float | None = None
    finished_at: float | None = None
    result: Any = None
    error: str | None = None
    delivered_at: float | None = None
    resumed_at: float | None = None  # the parent's resumed turn ended (`on_done: resume`)
    #: the tokens and cost of its model calls, every attempt's (`runtime.usage.Ledger`)
    usage: dict[str, Any] = field(default_factory=dict)
    #: while RUNNING: what the agent did last (a model reply, a tool call or result) and when
    last_event: str | None = None
    last_event_at: float | None = None

    @property
    def resumes(self) -> bool:
        """Whether a worker runs the parent when this job has finished (DONE or FAILED)."""
        return self.on_done == "resume" and self.status in ("DONE", "FAILED")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> dict[str, Any]:
        """What a parent model is told about the job."""
        found: dict[str, Any] = {"job_id": self.id, "agent": self.agent, "status": self.status}
        if self.status == "DONE":
            found["result"] = self.result
        if self.error:
            found["error"] = self.error
        if self.status in ("QUEUED", "RUNNING") and self.attempts:
            found["attempts"] = self.attempts
        return found


def new_job(request: JobRequest, at: float) -> Job:
    return Job(id=uuid.uuid4().hex[:16], available_at=at, created_at=at, updated_at=at,
               **asdict(request))


def encode(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, default=str)


def decode(text: str | None) -> Any:
    return None if text is None else json.loads(text)


class JobStore(Protocol):
    """Where jobs live; every method is atomic, so several workers can share a store."""

    url: str

    def enqueue(self, request: JobRequest) -> tuple[Job, bool]:
        """The job for `request`, and whether it is new. A request that matches a job that
        is QUEUED, RUNNING or DONE (same session, agent and input, or the same function
        call) returns that job: it never runs twice, and a DONE one answers with its stored
        result. After a FAILED or CANCELLED one, the request is a new job."""
        ...

    def get(self, job_id: str) -> Job | None: ...

    def recent(self, *, status: str | None = None, session_id: str | None = None,
             limit: int = 100) -> list[Job]:
        """Newest first."""
        ...

    def claim(self, owner: str, lease_seconds: float,
              agents: tuple[str, ...] | None = None) -> Job | None:
        """Takes the oldest runnable job (QUEUED and due, or RUNNING with an expired lease)
        for `owner`: RUNNING, one more attempt, leased until now + `lease_seconds`."""
        ...

    def heartbeat(self, job_id: str, owner: str, lease_seconds: float,
                  last_event: str | None = None) -> bool:
        """Extends the lease, and records `last_event` (now) when given; False when `owner`
        no longer holds it."""
        ...

    def finish(self, job_id: str, owner: str, result: Any,
               usage: Mapping[str, Any] | None = None) -> Job | None:
        """DONE with `result` (and `usage`, its model calls' sums), if `owner` still holds
        the job (else None: someone else has it now, and this result is dropped so that
        exactly one is kept)."""
        ...

    def fail(self, job_id: str, owner: str, error: str, retry_in: float | None,
             usage: Mapping[str, Any] | None = None) -> Job | None:
        """Back to QUEUED after `retry_in` seconds while attempts remain, else FAILED."""
        ...

    def release(self, job_id: str, owner: str) -> bool:
        """Back to QUEUED without counting the attempt (a worker shutting down)."""
        ...

    def cancel(self, job_id: str) -> Job | None: ...

    def retry(self, job_id: str) -> Job | None:
        """A FAILED or CANCELLED job queued again with fresh attempts."""
        ...

    def undelivered(self, app_name: str, user_id: str, session_id: str) -> list[Job]:
        """Finished (DONE or FAILED) jobs of a session not yet delivered, oldest first; not
        those a worker is to resume (`on_done: resume`), which it delivers itself, unless
        the worker found no conversation to deliver it to (its store is not the front
        end's): then the front end delivers it."""
        ...

    def mark_delivered(self, job_id: str) -> bool:
        """True for exactly one caller: the one that delivers the job."""
        ...

    def unmark_delivered(self, job_id: str) -> None:
        """The delivery failed after the mark: the job is delivered again next time."""
        ...

    def claim_resume(self, owner: str, lease_seconds: float,
                     agents: tuple[str, ...] | None = None,
                     job_id: str | None = None) -> Job | None:
        """Leases a finished job whose parent is to be resumed and has not been (`job_id`,
        or the oldest) to `owner`, unless another worker's lease on it is still live."""
        ...

    def renew_resume(self, job_id: str, owner: str, lease_seconds: float) -> bool:
        """Extends the resume lease; False when `owner` no longer holds it."""
        ...

    def end_resume(self, job_id: str, owner: str, resumed: bool) -> bool:
        """Ends `owner`'s resume lease: the parent's turn is over (`resumed`), or is given
        back to be claimed again (a worker stopping). False when `owner` no longer held it."""
        ...

    def close(self) -> None: ...


def finished(job: Job, at: float, **changes: Any) -> Job:
    return replace(job, finished_at=at, updated_at=at, lease_owner=None, lease_expires_at=None,
                   **changes)
