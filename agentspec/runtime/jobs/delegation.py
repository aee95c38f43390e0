"""The parent's side of offline agents: queue a job, check it, get its answer delivered.

* Delegating to an offline agent (its `{agent: name}` tool, a `single_turn`/`task` sub-agent,
  or the `task` tool) queues a job and answers the call at once with `{job_id, status}`; the
  parent goes on talking. The same request while the job is queued or running returns that
  job's status: it never runs twice.
* `job_status` lets the parent model look at its jobs, and queue a failed one again.
* `JobDelivery`, an app plugin, puts every finished job of a session into that session the
  next time it runs (before the user's new message), as a message of the offline agent: its
  answer, or the error of a job that failed. Each job is delivered exactly once.
* With `jobs.on_done: resume`, a worker delivers the job instead, as soon as it finishes,
  and runs the parent for a turn (`resume.py`); the plugin leaves such jobs to it.
* A request that matches a DONE job of the conversation is answered with its stored result,
  not run again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents import BaseAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from agentspec.contract.urls import redacted, scrubbed
from agentspec.runtime.agents import walk
from agentspec.runtime.jobs import Job, JobRequest, JobStore, OnDone
from agentspec.runtime.jobs.stores import open_store
from agentspec.runtime.telemetry import set_attributes

__all__ = ["JobDelivery", "JobSettings", "OfflineAgentTool", "StoreAt", "app_job_settings",
           "deliver", "delivery_text", "enqueue", "job_settings", "job_status_tool", "notify",
           "offline_agents", "sqlite_url"]

log = logging.getLogger("agentspec.jobs")
STORE_OVERRIDE = "AGENTSPEC_JOBS_STORE"
_STORES: dict[str, JobStore] = {}
_STORES_LOCK = threading.Lock()


@dataclass(frozen=True)
class StoreAt:
    """Where jobs are kept: all that delivering finished jobs needs."""

    store: str

    @property
    def url(self) -> str:
        """The store's URL; `AGENTSPEC_JOBS_STORE` overrides the spec's (a test or a
        staging run can use another store without editing the spec)."""
        return os.environ.get(STORE_OVERRIDE) or self.store

    def open(self) -> JobStore:
        """The store, opened once per process."""
        url = self.url
        with _STORES_LOCK:
            if url not in _STORES:
                _STORES[url] = open_store(url)
            return _STORES[url]


@dataclass(frozen=True, kw_only=True)
class JobSettings(StoreAt):
    """The spec's `jobs` section: every setting the spec owns is given (its model holds
    the defaults)."""

    max_attempts: int
    lease_seconds: int
    on_done: OnDone  # recorded on each job: "resume" has a worker resume the parent
    webhook: str | None = None  # none: no one is told
    headers: dict[str, str] = field(default_factory=dict)

    def scrubbed(self, text: str) -> str:
        """`text` (an error, for a log, a job row, the model or a webhook) without the
        secrets of the store's or the webhook's URL, or of any URL it quotes."""
        return scrubbed(text, self.url, self.store, *([self.webhook] if self.webhook else []),
                        *(value for value in self.headers.values() if len(value) >= 3))


def job_settings(*, store: str, max_attempts: int, lease_seconds: int,
                 on_done: OnDone = "wait", webhook: str | None = None,
                 headers: dict[str, str] | None = None) -> JobSettings:
    """The settings a generated package passes: every value from the spec (its model holds
    the defaults). A package of runtime ABI 1 passes no `on_done`: its jobs wait, as every
    job did then."""
    return JobSettings(store, max_attempts=max_attempts, lease_seconds=lease_seconds,
                       on_done=on_done, webhook=webhook, headers=dict(headers or {}))


def sqlite_url(path: Any) -> str:
    """`sqlite:///` and an absolute path (a spec's relative path resolves beside it)."""
    return f"sqlite:///{path}"


def _inputs(tool_context: ToolContext) -> dict[str, Any]:
    """The caller's values of the state keys the spec marks `required`: a job's session is
    its own, and only the session's creator gives those (the spec's initial state the
    worker has itself). Nothing else of the session is copied into the job store."""
    from agentspec.runtime.state import required_inputs

    session = tool_context.session
    required = required_inputs(tool_context.get_invocation_context().plugin_manager)
    return {key: session.state[key] for key in required if key in session.state}


async def enqueue(settings: JobSettings, agent: BaseAgent, request: str,
                  tool_context: ToolContext, tool: str) -> dict[str, Any]:
    """Queues `agent` with `request` for the conversation `tool_context` belongs to. The job
    keeps the agent's `output_key`, so whoever delivers it needs nothing but the job."""
    session = tool_context.session
    asked = JobRequest(agent=agent.name, input=request, app_name=session.app_name,
                       user_id=session.user_id, session_id=session.id,
                       invocation_id=tool_context.invocation_id,
                       function_call_id=tool_context.function_call_id or "", tool=tool,
                       max_attempts=settings.max_attempts,
                       output_key=getattr(agent, "output_key", None) or "",
                       on_done=settings.on_done, state=_inputs(tool_context))
    try:
        job, created = await asyncio.to_thread(settings.open().enqueue, asked)
    except Exception as error:  # noqa: BLE001 - the model is told; the conversation goes on
        why = settings.scrubbed(f"{type(error).__name__}: {error}")
        log.warning("queueing %s failed: %s", agent.name, why)
        return {"error": f"The background job could not be queued ({why}). Tell the user; "
                         "it can be tried again later."}
    set_attributes(**{"agentspec.job.id": job.id, "agentspec.job.agent": agent.name})
    answer = job.summary()
    if created:
        answer["note"] = (
            f"{agent.name} works on this in the background. Tell the user it is queued and "
            "carry on; its answer will appear in this conversation when it is done "
            "(job_status checks it).")
    elif job.status == "DONE":
        answer["note"] = (f"This request was already answered by job {job.id}: this is its "
                          "stored result; it was not run again.")
    else:
        answer["note"] = (f"This request is already {job.status.lower()} as job {job.id}; "
                          "it was not started again.")
    return answer


class OfflineAgentTool(BaseTool):
    """An offline agent called as a tool: the call queues a job."""

    def __init__(self, agent: BaseAgent, settings: JobSettings) -> None:
        super().__init__(name=agent.name, description=(
            f"{agent.description or 'An agent.'} It runs as a background job: the call "
            "returns a job id at once and the answer arrives later in this conversation."))
        self.agent = agent
        self.agents = {agent.name: agent}  # found by walks over the tree (scripts, workers)
        self.settings = settings

    def _get_declaration(self) -> types.FunctionDeclaration:
        schema = getattr(self.agent, "input_schema", None)
        parameters = schema.model_json_schema() if schema is not None else {
            "type": "object", "properties": {"request": {
                "type": "string", "description": "The complete task for the agent."}},
            "required": ["request"]}
        return types.FunctionDeclaration(name=self.name, description=self.description,
                                         parameters_json_schema=parameters)

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        schema = getattr(self.agent, "input_schema", None)
        if schema is not None:  # the agent's own arguments; the job's input is their JSON
            try:
                request = schema.model_validate(args).model_dump_json()
            except ValueError as error:
                return {"error": f"The arguments do not fit {self.name}: {error}"}
        else:
            request = args.get("request")
            if not isinstance(request, str) or not request.strip():
                return {"error": "Give the task as `request`, a non-empty text."}
        return await enqueue(self.settings, self.agent, request, tool_context, self.name)


def offline_agents(root: BaseAgent) -> dict[str, BaseAgent]:
    """The agents under `root` that delegations queue as jobs, by name."""
    found: dict[str, BaseAgent] = {}
    for agent in walk(root):
        for tool in getattr(agent, "tools", None) or ():
            if isinstance(tool, OfflineAgentTool):
                found[tool.agent.name] = tool.agent
            for kind, started in (getattr(tool, "agents", None) or {}).items():
                if kind in getattr(tool, "offline", ()):
                    found[started.name] = started
    return found


def job_status_tool(settings: JobSettings) -> FunctionTool:
    async def job_status(tool_context: ToolContext, job_id: str = "",
                         retry: bool = False) -> dict[str, Any]:
        """Checks the background jobs started from this conversation.

        Without `job_id`, lists them (newest first). With `job_id`, shows that job: QUEUED or
        RUNNING (not done yet), DONE (with its result), FAILED (with the error) or CANCELLED.
        With `retry: true`, a FAILED or CANCELLED job is queued again.

        Args:
          job_id: The id a delegation returned; empty for all jobs of this conversation.
          retry: Queue the failed or cancelled job `job_id` again.
        """
        store = settings.open()
        session = tool_context.session
        if not job_id:
            jobs = await asyncio.to_thread(store.recent, session_id=session.id, limit=20)
            return {"jobs": [j.summary() for j in jobs if j.app_name == session.app_name
                             and j.user_id == session.user_id]}
        job = await asyncio.to_thread(store.get, job_id)
        if job is None or (job.app_name, job.user_id, job.session_id) != (
                session.app_name, session.user_id, session.id):
            return {"error": f"There is no job {job_id!r} in this conversation."}
        if retry:
            if job.status not in ("FAILED", "CANCELLED"):
                return {**job.summary(), "note": "Only a FAILED or CANCELLED job is retried."}
            job = await asyncio.to_thread(store.retry, job_id) or job
        return job.summary()

    return FunctionTool(job_status)


def delivery_text(job: Job) -> str:
    """How a finished job reads in the parent's conversation."""
    if job.status == "DONE":
        result = job.result if isinstance(job.result, str) else json.dumps(job.result)
        return f"[background job {job.id}: {job.input}]\n{result}"
    return (f"[background job {job.id} FAILED after {job.attempts} attempt(s): {job.error}. "
            "job_status can queue it again.]")


def deliver_event(job: Job, invocation_id: str) -> Event:
    """The offline agent's answer in its parent's session (and under its `output_key`).

    The event is marked as the agent's last (`end_of_agent`), which it is: the agent ran in
    a worker and has finished. ADK's routing skips such events; otherwise it would look for
    the agent in this tree, where it is not, and log "Event from an unknown agent"."""
    delta = {job.output_key: job.result} if job.output_key and job.status == "DONE" else {}
    return Event(invocation_id=invocation_id, author=job.agent,
                 content=types.Content(role="model", parts=[types.Part(text=delivery_text(job))]),
                 actions=EventActions(state_delta=delta, end_of_agent=True),
                 custom_metadata={"agentspec_job": {"job_id": job.id, "status": job.status}})


class JobDelivery(BasePlugin):
    """Delivers finished jobs into their session when it next runs."""

    def __init__(self, settings: JobSettings) -> None:
        super().__init__(name="agentspec_job_delivery")
        self.settings = settings

    async def on_user_message_callback(self, *, invocation_context: InvocationContext,
                                       user_message: types.Content) -> types.Content | None:
        try:
            await deliver(self.settings, invocation_context.session_service,
                          invocation_context.session, invocation_context.invocation_id)
        except Exception as error:  # noqa: BLE001 - delivery waits for the next message
            log.warning("delivering finished jobs failed: %s", self.settings.scrubbed(
                str(error)))
        return None


def app_job_settings(app: Any) -> JobSettings | None:
    """The job settings of a built App (its JobDelivery plugin's); None without offline
    agents."""
    for plugin in getattr(app, "plugins", None) or ():
        if isinstance(plugin, JobDelivery):
            return plugin.settings
    return None


async def deliver(settings: StoreAt, sessions: Any, session: Any,
                  invocation_id: str) -> list[Event]:
    """Appends every finished, undelivered job of `session` to it (each exactly once, also
    across processes); the events appended. The one way jobs are delivered: by the app's
    plugin, `agentspec run` and `agentspec jobs deliver` alike."""
    store = settings.open()
    waiting = await asyncio.to_thread(store.undelivered, session.app_name, session.user_id,
                                      session.id)
    delivered = []
    for job in waiting:
        if await asyncio.to_thread(store.mark_delivered, job.id):
            event = deliver_event(job, invocation_id)
            try:
                await sessions.append_event(session, event)
            except BaseException:
                await asyncio.to_thread(store.unmark_delivered, job.id)  # next time, then
                raise
            delivered.append(event)
    return delivered


#: the whole webhook exchange (connect, send, the answer's status line and headers) gets this
WEBHOOK_SECONDS = 10.0


async def notify(settings: JobSettings, job: Job) -> None:
    """POSTs the job record to the webhook; a failure is logged, never raised.

    The exchange has WEBHOOK_SECONDS in all, however slowly the receiver connects, reads or
    answers, and the answer's body is never read (only its status), so a receiver that
    stalls, trickles or streams without end holds a worker's slot that long at most."""
    if not settings.webhook:
        return
    import httpx

    record = job.to_dict()
    record.pop("state")  # the caller's inputs stay in the store: the receiver gets the job
    body = json.dumps(record, default=str).encode()
    headers = {"Content-Type": "application/json", **settings.headers}
    try:
        async with asyncio.timeout(WEBHOOK_SECONDS), httpx.AsyncClient(
                timeout=WEBHOOK_SECONDS) as client, client.stream(
                    "POST", settings.webhook, content=body, headers=headers) as response:
            status = response.status_code
    except TimeoutError:
        log.warning("job %s: the webhook %s did not answer within %g seconds", job.id,
                    redacted(settings.webhook), WEBHOOK_SECONDS)
        return
    except Exception as error:  # noqa: BLE001 - a notification never fails the job
        log.warning("job %s: the webhook %s failed: %s", job.id, redacted(settings.webhook),
                    settings.scrubbed(str(error)))
        return
    if not 200 <= status < 300:
        log.warning("job %s: the webhook %s answered %s", job.id, redacted(settings.webhook),
                    status)
