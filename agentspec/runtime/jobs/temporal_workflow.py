"""An offline job as a Temporal workflow (a `temporal://` job store).

The workflow owns the job's record (kept in its memo, so `agentspec jobs` reads it without a
worker) and runs the agent as one heartbeating activity per attempt. The activity runs
agentspec's whole runtime (routers, planners, harness nodes, callbacks, plugins), which
ADK's and the Temporal integration's in-workflow replay cannot host (they rebuild a model
from its name alone, and our runtime uses threads and the wall clock). What makes the job
step-durable instead is the journal: every model answer and tool result the agent gets is
sent to the workflow (a signal, acknowledged by the server before the agent goes on), and an
attempt that starts after a worker died gets the journal and replays those answers in order
instead of calling the model or the tool again (`temporal_journal.py`). A worker killed mid
job therefore repeats at most the one call it was making when it died.

A tool call that needs a person's approval (`interrupt_on`) ends the attempt with the calls
the gate stopped (`approvals`, kept in the memo for `agentspec jobs show`); the workflow then
waits, with no activity running, for a `decide` signal per call (sent by `agentspec jobs
answer`, accepted by the server with or without a worker) and runs the next attempt with the
journal and the decisions, which the journal hands to the gate (`temporal_journal.py`). The
wait is workflow state: a worker killed meanwhile loses neither the wait nor a decision.

The workflow ends only once its result is delivered: `on_done: wait` when a front end marks
it delivered (an update, true for exactly one caller), `on_done: resume` when the resume
activity (any worker; retried when one dies) has run the parent's turn.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.exceptions import TimeoutError as ActivityTimeout

__all__ = ["ANSWER", "APPROVALS", "RESUME_ACTIVITY", "RUN_ACTIVITY", "WORKFLOW",
           "JobWorkflow"]

WORKFLOW = "agentspec_job"
RUN_ACTIVITY = "agentspec_run_job"
RESUME_ACTIVITY = "agentspec_resume_parent"
MAX_BACKOFF = 60.0
#: the keys of an attempt's outcome: the agent's answer, or the calls waiting for a person
#: (names no answer has, so an attempt of an earlier agentspec, which returned the bare
#: answer, still reads as its answer)
ANSWER, APPROVALS = "agentspec_answer", "agentspec_approvals"


def _error(error: BaseException) -> str:
    cause = error.cause if isinstance(error, ActivityError) and error.cause else error
    if isinstance(cause, ActivityTimeout):
        return "the worker running the job stopped answering (killed, or cut off)"
    return cause.message if isinstance(cause, ApplicationError) else str(cause)


@workflow.defn(name=WORKFLOW)
class JobWorkflow:
    def __init__(self) -> None:
        self.job: dict[str, Any] = {}
        self.journal: list[dict[str, Any]] = []
        self.delivered = False
        self.resume_outcome = ""
        #: the calls waiting for a person (what the gate stopped), and people's decisions
        self.approvals: list[dict[str, Any]] = []
        self.decisions: dict[str, dict[str, Any]] = {}

    def _update(self, **changes: Any) -> None:
        at = workflow.now().timestamp()
        self.job.update(changes, updated_at=at)
        workflow.upsert_memo({"job": self.job, "deliverable": self.deliverable(),
                              "approvals": self.approvals})

    @workflow.run
    async def run(self, job: dict[str, Any]) -> dict[str, Any]:
        self.job = dict(job)
        heartbeat = timedelta(seconds=float(job.pop("heartbeat_seconds", 10.0)))
        self.job = dict(job)
        try:
            await self._attempts(heartbeat)
        except asyncio.CancelledError:
            self._update(status="CANCELLED", finished_at=workflow.now().timestamp())
            raise
        if self.job["on_done"] == "resume":
            try:
                what = await workflow.execute_activity(
                    RESUME_ACTIVITY, self.job, start_to_close_timeout=timedelta(hours=1),
                    heartbeat_timeout=heartbeat,
                    retry_policy=RetryPolicy(maximum_interval=timedelta(seconds=30)))
            except ActivityError as error:
                what = f"resume failed: {_error(error)}"
            self.resume_outcome = str(what)
            # no conversation to resume in: a front end delivers it, as on_done: wait
            self.delivered = what != "no conversation"
            self._update(resumed_at=workflow.now().timestamp())
        while True:
            await workflow.wait_condition(lambda: self.delivered)
            # a front end whose delivery failed after the mark unmarks it (a few minutes)
            try:
                await workflow.wait_condition(lambda: not self.delivered,
                                              timeout=timedelta(minutes=5))
            except TimeoutError:
                return self.job

    async def _attempts(self, heartbeat: timedelta) -> None:
        answered = False  # the run goes on after a person's decision: not a new attempt
        while True:
            if not answered:
                self._update(status="RUNNING", attempts=self.job["attempts"] + 1,
                             started_at=self.job.get("started_at") or
                             workflow.now().timestamp())
            answered = False
            try:
                outcome = await workflow.execute_activity(
                    RUN_ACTIVITY, args=[self.job, self.journal, self.decisions],
                    start_to_close_timeout=timedelta(days=1), heartbeat_timeout=heartbeat,
                    retry_policy=RetryPolicy(maximum_attempts=1),
                    cancellation_type=workflow.ActivityCancellationType.TRY_CANCEL)
            except ActivityError as error:
                died = isinstance(error.cause, ActivityTimeout)
                if self.job["attempts"] >= self.job["max_attempts"]:
                    self._update(status="FAILED", error=_error(error),
                                 finished_at=workflow.now().timestamp())
                    return
                self._update(status="QUEUED", error=_error(error))
                if not died:  # a worker that died is replaced at once; a failure waits
                    await workflow.sleep(min(MAX_BACKOFF, 2.0 ** self.job["attempts"]))
                continue
            if isinstance(outcome, dict) and outcome.keys() == {APPROVALS}:
                await self._wait_for_people(outcome[APPROVALS])
                answered = True
                continue
            answer = outcome[ANSWER] if isinstance(outcome, dict) and \
                outcome.keys() == {ANSWER} else outcome
            self._update(status="DONE", result=answer, error=None,
                         finished_at=workflow.now().timestamp())
            return

    async def _wait_for_people(self, asked: list[dict[str, Any]]) -> None:
        # a call asked again was not given its earlier answer (the person saw other
        # arguments): that answer is spent, and the call waits for a new one
        for call in asked:
            self.decisions.pop(call["key"], None)
        self.approvals = asked
        tools = ", ".join(f"`{call['tool']}`" for call in asked)
        self._update(last_event=f"waiting for a person to answer the call to {tools} "
                                "(agentspec jobs answer)",
                     last_event_at=workflow.now().timestamp())
        await workflow.wait_condition(
            lambda: all(call["key"] in self.decisions for call in self.approvals))
        kinds = ", ".join(self.decisions[call["key"]]["kind"] for call in self.approvals)
        self.approvals = []
        self._update(last_event=f"a person answered: {kinds}",
                     last_event_at=workflow.now().timestamp())

    @workflow.signal(name="decide")
    def decide(self, decision: dict[str, Any]) -> None:
        """A person's answer to a waiting call: {key, args, kind, edit?, message?}, `args`
        those the person was shown. One that names no waiting call, was shown other
        arguments (the call was asked again meanwhile), repeats an answer or is not offered
        is dropped (`agentspec jobs answer` checks the memo first and says so)."""
        key = decision.get("key")
        waiting = next((call for call in self.approvals if call["key"] == key), None)
        if waiting is None or key in self.decisions or \
                decision.get("args") != waiting["args"] or \
                decision.get("kind") not in waiting["decisions"]:
            return
        self.decisions[str(key)] = {"kind": decision["kind"], "args": waiting["args"],
                                    "edit": decision.get("edit"),
                                    "message": decision.get("message")}
        if workflow.patched("agentspec-answered-in-memo"):  # replays older histories as they ran
            # shown to `jobs answer`, which refuses a second answer instead of reporting
            # one the workflow drops
            waiting["answered"] = decision["kind"]
            self._update()

    @workflow.signal(name="record")
    def record(self, entry: dict[str, Any]) -> None:
        self.journal.append(entry)

    @workflow.update(name="mark_delivered")
    def mark_delivered(self) -> bool:
        if self.delivered or self.job.get("status") not in ("DONE", "FAILED"):
            return False
        self.delivered = True
        self._update(delivered_at=workflow.now().timestamp())
        return True

    @workflow.update(name="unmark_delivered")
    def unmark_delivered(self) -> None:
        self.delivered = False
        self._update(delivered_at=None)
        return None

    @workflow.query(name="job")
    def current(self) -> dict[str, Any]:
        return self.job

    @workflow.query(name="deliverable")
    def deliverable(self) -> bool:
        """Whether a front end is to deliver the finished job (not a resuming worker)."""
        return self.job.get("status") in ("DONE", "FAILED") and not self.delivered and (
            self.job["on_done"] != "resume" or self.resume_outcome == "no conversation")
