"""Offline jobs on Temporal (`jobs.store: temporal://...`), against a real dev server, with
workers in processes of their own and the model behind the fake Gemini server: a worker
killed in the middle of a job repeats none of the model or tool calls it had finished."""

from __future__ import annotations

import contextlib
import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentspec.cli import cli
from agentspec.runtime.jobs import JobRequest, StoreError
from agentspec.runtime.jobs.stores import open_store
from tests.buildkit import offline_project, tool_runs
from tests.fakegemini.server import FakeGemini, serve
from tests.temporalserver import task_queue_url, temporal_address
from tests.test_jobs import agentspec, start_worker, wait_for

pytest.importorskip("temporalio", reason="the `temporal` extra is not installed")

#: answered by what the conversation holds, not by order, so an attempt that started over
#: (without the journal) would be answered from its first step again, and counted
REPLIES = [{"when": '"two": true', "text": "crunched"},
           {"when": '"one": true', "call": "step_two"},
           {"call": "step_one"}]


@pytest.fixture(scope="module")
def temporal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with temporal_address(tmp_path_factory.mktemp("temporal")) as address:
        yield address


def _project(tmp_path: Path, agent_fields: str = "") -> Path:
    return offline_project(tmp_path, tools=("step_one", "step_two"), agent_fields=agent_fields)


def _runs(log: Path) -> list[str]:
    return [name for name, _ in tool_runs(log)]


def _request(text: str = "job 1") -> JobRequest:
    return JobRequest(agent="cruncher", input=text, app_name="crunch", user_id="user",
                      session_id="s", max_attempts=3, on_done="wait")


@pytest.mark.slow
def test_a_worker_killed_mid_job_repeats_no_finished_call(temporal: str,
                                                          tmp_path: Path) -> None:
    """The first worker makes two model calls and runs `step_one`, then is killed inside
    `step_two`. The second worker replays those from the job's journal: the fake model
    server sees three requests in all (not five), `step_one` ran once; only `step_two`, the
    call in flight when the worker died, runs again."""
    url = task_queue_url(temporal)
    project = _project(tmp_path)
    log = tmp_path / "crunch.log"
    store = open_store(url)
    # enough replies for the job to run twice from the start: a second attempt that called
    # the model again would be answered, and counted
    with serve(FakeGemini(replies={"cruncher": REPLIES * 2})) as fake:
        env = {"JOBS_URL": url, "CRUNCH_LOG": str(log), "CRUNCH_HANG": "step_two",
               "GOOGLE_GEMINI_BASE_URL": fake.url, "GOOGLE_API_KEY": "fake-key"}
        job, new = store.enqueue(_request())
        assert new
        first = start_worker(project, "spec.yaml", env=env)
        second = None
        try:
            wait_for(lambda: "step_two" in _runs(log),
                     timeout=120, what="the first worker to reach step_two")
            assert store.get(job.id).status == "RUNNING"  # type: ignore[union-attr]
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=30)
            second = start_worker(project, "spec.yaml", env=env)
            done = _finished(store, job.id, timeout=180,
                             what="the second worker to finish the job")
            # delivering is an update of the job's workflow: a worker answers it
            assert len(store.undelivered("crunch", "user", "s")) == 1
            assert store.mark_delivered(job.id) and not store.mark_delivered(job.id)
            assert store.undelivered("crunch", "user", "s") == []
        finally:
            first.kill()
            if second is not None:
                second.send_signal(signal.SIGTERM)
                out, err = second.communicate(timeout=60)
        assert (done.status, done.result, done.attempts) == ("DONE", "crunched", 2), (
            done, err)
        asked = [request.agent for request in fake.requests]
        assert asked == ["cruncher"] * 3, asked  # no model call made twice
        assert not fake.script_problems and not fake.violations
    assert _runs(log) == ["step_one", "step_two", "step_two"]
    store.close()


#: step_two asks a person first; a rejection reaches the model, which says so
APPROVAL = "    interrupt_on:\n" \
           "      step_two: {decisions: [approve, reject], hint: Run step two?}\n"
APPROVAL_REPLIES = [{"when": "rejected this call", "text": "not crunched"}, *REPLIES]


@pytest.mark.slow
@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_an_approval_inside_a_job_waits_for_a_person_across_a_worker_kill(
        decision: str, temporal: str, tmp_path: Path) -> None:
    """The job's agent calls `step_one`, then `step_two`, which needs approval: the job waits
    (no activity running), `jobs show` shows the call, the worker is killed, the person
    answers with no worker running, and a new worker goes on from the journal: no model or
    tool call made twice; `step_two` runs only when approved."""
    url = task_queue_url(temporal)
    project = _project(tmp_path, APPROVAL)
    log = tmp_path / "crunch.log"
    store = open_store(url)
    with serve(FakeGemini(replies={"cruncher": APPROVAL_REPLIES * 2})) as fake:
        env = {"JOBS_URL": url, "CRUNCH_LOG": str(log), "GOOGLE_GEMINI_BASE_URL": fake.url,
               "GOOGLE_API_KEY": "fake-key"}
        job, _ = store.enqueue(_request())
        first = start_worker(project, "spec.yaml", env=env)
        second = None
        try:
            [waiting] = wait_for(lambda: store.approvals(job.id), timeout=120,
                                 what="the job to ask for an approval")
            assert (waiting["tool"], waiting["args"], waiting["decisions"]) == (
                "step_two", {}, ["approve", "reject"])
            shown = agentspec(tmp_path, "jobs", "--store", url, "show", job.id)
            assert shown.returncode == 0, shown.stderr
            assert "Run step two?" in shown.stdout and "step_two()" in shown.stdout
            assert "decisions: approve, reject" in shown.stdout
            assert "RUNNING" in shown.stdout and "waiting for a person" in shown.stdout
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=30)
            assert store.approvals(job.id) == [waiting]  # the wait outlives its worker
            refused = agentspec(tmp_path, "jobs", "--store", url, "answer", job.id, "edit",
                                "--args", "{}")
            assert refused.returncode == 1 and "offers approve, reject, not edit" in \
                refused.stderr, refused.stderr
            why = ("--message", "not today") if decision == "reject" else ()
            answered = agentspec(tmp_path, "jobs", "--store", url, "answer", job.id,
                                 decision, *why)
            assert answered.returncode == 0, answered.stderr
            assert _runs(log) == ["step_one"]  # nothing ran while nobody was there
            second = start_worker(project, "spec.yaml", env=env)
            done = _finished(store, job.id, timeout=180,
                             what="the second worker to finish the job")
        finally:
            first.kill()
            if second is not None:
                second.send_signal(signal.SIGTERM)
                _, err = second.communicate(timeout=60)
        assert (done.status, done.attempts) == ("DONE", 1), (done, err)
        assert done.result == ("crunched" if decision == "approve" else "not crunched")
        assert store.approvals(job.id) == []
        asked = [request.agent for request in fake.requests]
        assert asked == ["cruncher"] * 3, asked  # no model call made twice
        assert not fake.script_problems and not fake.violations
        if decision == "reject":
            assert "not today" in json.dumps(fake.requests[-1].body)
    assert _runs(log) == (["step_one", "step_two"] if decision == "approve" else ["step_one"])
    store.close()


@pytest.mark.slow
def test_jobs_cli_lists_cancels_and_retries_on_temporal(temporal: str,
                                                        tmp_path: Path) -> None:
    """`agentspec jobs` over a Temporal store, with no worker running: the same request
    finds the same job; cancel and retry work on the workflow."""
    url = task_queue_url(temporal)
    store = open_store(url)
    job, new = store.enqueue(_request("to cancel"))
    again, new_again = store.enqueue(_request("to cancel"))
    assert new and not new_again and again.id == job.id
    # listing reads Temporal's visibility store, which may lag a moment behind a start
    wait_for(lambda: store.recent(), what="the job to be listed")
    listed = agentspec(tmp_path, "jobs", "--store", url, "list")
    assert listed.returncode == 0 and job.id in listed.stdout and "QUEUED" in listed.stdout, \
        listed.stderr
    cancelled = agentspec(tmp_path, "jobs", "--store", url, "cancel", job.id)
    assert cancelled.returncode == 0, cancelled.stderr
    assert store.get(job.id).status == "CANCELLED"  # type: ignore[union-attr]
    retried = agentspec(tmp_path, "jobs", "--store", url, "retry", job.id)
    assert retried.returncode == 0, retried.stderr
    assert store.get(job.id).status == "QUEUED"  # type: ignore[union-attr]
    shown = agentspec(tmp_path, "jobs", "--store", url, "--json", "show", job.id)
    assert '"status": "QUEUED"' in shown.stdout, shown.stderr
    # the retried job is a second run of its workflow: listed once, as that run (visibility
    # may lag behind the start a moment)
    wait_for(lambda: [(j.id, j.status) for j in store.recent()] == [(job.id, "QUEUED")],
             what="the retried job to be listed once, QUEUED")
    listed = agentspec(tmp_path, "jobs", "--store", url, "list")
    assert listed.stdout.count(job.id) == 1 and "CANCELLED" not in listed.stdout, \
        listed.stdout
    store.cancel(job.id)
    store.close()


@pytest.mark.slow
def test_a_namespace_that_does_not_exist_is_named(temporal: str) -> None:
    url = task_queue_url(temporal).replace("/default?", "/no-such-namespace?")
    with pytest.raises(StoreError, match="namespace `no-such-namespace` does not exist"):
        open_store(url)


def test_a_server_that_is_down_is_named_within_the_timeout() -> None:
    """Nothing listens on the port: a plain error naming the server, not a hang."""
    from tests.buildkit import free_port

    with pytest.raises(StoreError, match=r"cannot reach the Temporal server at 127\.0\.0\.1:\d+"):
        open_store(f"temporal://127.0.0.1:{free_port()}/default?task_queue=q&timeout=2")


@pytest.mark.slow
def test_on_done_wait_delivers_once_through_the_front_end(temporal: str,
                                                          tmp_path: Path) -> None:
    """The shipped deal desk with its jobs on Temporal: `run` queues a workflow, a worker
    runs it, the next `run` delivers it into the conversation, once."""
    import shutil

    from tests.buildkit import ROOT

    for name in ("offline_jobs.yaml", "deal_tools", "scenarios"):
        source = ROOT / "specs" / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, tmp_path / name)
    url = task_queue_url(temporal)
    env = {"AGENTSPEC_JOBS_STORE": url}
    session = f"sqlite:///{tmp_path / 'sessions.db'}"
    first = agentspec(tmp_path, "run", "offline_jobs.yaml", "--script",
                      "scenarios/offline_jobs.yaml", "--session", session, env=env)
    assert first.returncode == 0 and "'status': 'QUEUED'" in first.stdout, first.stderr
    store = open_store(url)
    [job] = wait_for(lambda: store.recent(), what="the job to be listed")
    worker = start_worker(tmp_path, "offline_jobs.yaml", "--script",
                          "scenarios/offline_jobs.worker.yaml", env=env)
    try:
        done = wait_for(lambda: (found := store.get(job.id)) is not None and
                        found.status == "DONE" and found, timeout=120, what="the job")
        assert done.result["score"] == 72
        after = agentspec(tmp_path, "run", "offline_jobs.yaml", "Any news on the score?",
                          "--script", "scenarios/offline_jobs.after.yaml", "--session",
                          session, env=env)
        assert after.returncode == 0, after.stderr
        assert after.stdout.splitlines()[1].startswith(f"[scorer] [background job {job.id}: ")
        again = agentspec(tmp_path, "run", "offline_jobs.yaml", "And now?", "--script",
                          "scenarios/offline_jobs.after.yaml", "--session", session, env=env)
        assert again.returncode == 0 and "[scorer]" not in again.stdout  # delivered once
        assert store.get(job.id).delivered_at is not None  # type: ignore[union-attr]
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.communicate(timeout=60)
        store.close()


@pytest.mark.slow
def test_on_done_resume_runs_the_parents_turn_once(temporal: str, tmp_path: Path) -> None:
    """`on_done: resume` on Temporal: the workflow's resume activity delivers the job and
    runs the parent's turn in the conversation store, once."""
    from tests.test_jobs_resume import FOLLOW_UP, _events, _project, _said

    project, env = _project(tmp_path, "sqlite")
    env["JOBS_URL"] = task_queue_url(temporal)
    queued = agentspec(project, "run", "spec.yaml", "Write the Q3 report", "--script",
                       "first.yaml", env=env)
    assert queued.returncode == 0, queued.stderr
    store = open_store(env["JOBS_URL"])
    [job] = wait_for(lambda: store.recent(), what="the job to be listed")
    assert job.on_done == "resume"
    worker = start_worker(project, "spec.yaml", "--script", "worker.yaml", env=env)
    try:
        resumed = wait_for(lambda: (found := store.get(job.id)) is not None and
                           found.resumed_at is not None and found, timeout=120,
                           what="the parent to be resumed")
    finally:
        worker.send_signal(signal.SIGTERM)
        out, err = worker.communicate(timeout=60)
    assert resumed.status == "DONE" and resumed.delivered_at is not None, (out, err)
    assert f"[lead] {FOLLOW_UP}" in out
    assert _said(_events(env["SESSIONS_URL"]))[-3:] == [
        ("reporter", f"[background job {job.id}: Q3 report]"),
        ("lead", "calls notify"), ("lead", FOLLOW_UP)]
    assert (tmp_path / "notify.log").read_text() == "Your Q3 report is ready\n"
    store.close()


def test_a_server_that_never_answers_is_named_after_the_timeout() -> None:
    """A port that accepts connections and never speaks (a hung server, a wrong service):
    the store gives up after the URL's `timeout`, naming the server, instead of hanging."""
    import socket

    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(8)
        port = listening.getsockname()[1]
        with pytest.raises(StoreError, match=rf"Temporal server at 127\.0\.0\.1:{port}"):
            open_store(f"temporal://127.0.0.1:{port}/default?task_queue=q&timeout=1")


def _call(args: dict[str, Any], call_id: str = "c1") -> Any:
    from types import SimpleNamespace

    return SimpleNamespace(agent_name="cruncher", function_call_id=call_id,
                           tool_confirmation=None, state={}, actions=SimpleNamespace(
                               requested_tool_confirmations={}, state_delta={}))


def test_a_decision_reaches_only_the_call_the_person_saw() -> None:
    """The journal hands a person's decision to the approval gate only for the call with the
    arguments the person was shown; the same call with other arguments is asked about again
    (the gate sees no answer)."""
    import asyncio
    from types import SimpleNamespace

    from agentspec.runtime.jobs.temporal_journal import Journal

    async def nothing(entry: dict[str, Any]) -> None:
        raise AssertionError("nothing is recorded before the call has run")

    key = json.dumps(["tool", "cruncher", "write", 0])
    decided = {key: {"kind": "approve", "args": {"path": "a.txt"}, "edit": None,
                     "message": None}}
    tool = SimpleNamespace(name="write")
    for args, answered in (({"path": "a.txt"}, True), ({"path": "../b.txt"}, False)):
        journal = Journal([], nothing, decided)
        context = _call(args)
        assert asyncio.run(journal.before_tool_callback(
            tool=tool, tool_args=args, tool_context=context)) is None  # type: ignore[arg-type]
        assert (context.tool_confirmation is not None) == answered, args
        if answered:
            assert context.tool_confirmation.confirmed


def test_a_call_the_gate_stops_is_asked_not_journaled() -> None:
    import asyncio
    from types import SimpleNamespace

    from google.adk.tools.tool_confirmation import ToolConfirmation

    from agentspec.runtime.jobs.temporal_journal import Journal

    recorded: list[dict[str, Any]] = []

    async def record(entry: dict[str, Any]) -> None:
        recorded.append(entry)

    journal = Journal([], record)
    tool = SimpleNamespace(name="write")
    context = _call({"path": "a.txt"})
    asyncio.run(journal.before_tool_callback(tool=tool, tool_args={"path": "a.txt"},
                                             tool_context=context))  # type: ignore[arg-type]
    context.actions.requested_tool_confirmations["c1"] = ToolConfirmation(
        hint="", payload={"question": "Write it?", "decisions": ["approve", "reject"]})
    asyncio.run(journal.after_tool_callback(
        tool=tool, tool_args={"path": "a.txt"}, tool_context=context,  # type: ignore[arg-type]
        result={"error": "waiting"}))
    assert recorded == [] and journal.made == 0
    assert journal.asked == [{"key": json.dumps(["tool", "cruncher", "write", 0]),
                              "agent": "cruncher", "tool": "write",
                              "args": {"path": "a.txt"}, "question": "Write it?",
                              "decisions": ["approve", "reject"]}]


def test_jobs_answer_refuses_what_it_cannot_send(tmp_path: Path) -> None:
    """Option mistakes are usage errors; a store that does not wait for approvals says so."""
    store = f"sqlite:///{tmp_path / 'jobs.db'}"
    for args, code, said in (
            (("edit",), 2, "give --args JSON with `edit`"),
            (("approve", "--args", "{}"), 2, "give --args JSON with `edit`"),
            (("edit", "--args", "[1]"), 2, "--args must be a JSON object"),
            (("edit", "--args", "{"), 2, "--args is not JSON"),
            (("approve", "--message", "no"), 2, "--message goes with `reject`"),
            (("approve",), 1, "only jobs on a temporal:// store wait for approvals")):
        result = CliRunner().invoke(cli, ["jobs", "--store", store, "answer", "job-1", *args])
        assert result.exit_code == code and said in result.output, (args, result.output)


@pytest.mark.slow
def test_a_call_asked_again_with_other_args_waits_for_a_new_answer(temporal: str) -> None:
    """An attempt's gate stops a call whose key a person already answered, but with other
    arguments (the journal gave the gate no answer: the person saw other ones): the workflow
    waits for a person again and hands the next attempt the new answer, never the old one
    (which made the workflow run attempts without end, none of them answerable)."""
    from temporalio import activity

    from agentspec.runtime.jobs.temporal_workflow import ANSWER, APPROVALS, RUN_ACTIVITY

    key = json.dumps(["tool", "cruncher", "write", 0])
    given: list[dict[str, Any]] = []

    def asked(args: dict[str, Any]) -> dict[str, Any]:
        return {APPROVALS: [{"key": key, "agent": "cruncher", "tool": "write", "args": args,
                             "question": "Write it?", "decisions": ["approve", "reject"]}]}

    @activity.defn(name=RUN_ACTIVITY)
    async def run(record: dict[str, Any], entries: list[dict[str, Any]],
                  decisions: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
        given.append(dict(decisions or {}))
        if len(given) == 1:
            return asked({"path": "a.txt"})
        if len(given) == 2:  # the gate saw other args than the person: it asks again
            return asked({"path": "../b.txt"})
        return {ANSWER: json.dumps((decisions or {}).get(key, {}).get("args"))}

    with _worker_and_store(temporal, run) as store:
        job, _ = store.enqueue(_request())
        wait_for(lambda: store.approvals(job.id), timeout=60, what="the first question")
        store.answer(job.id, None, "approve")
        [again] = wait_for(lambda: (found := store.approvals(job.id)) and
                           found[0]["args"] != {"path": "a.txt"} and found, timeout=60,
                           what="the question asked again with the new arguments")
        assert again["args"] == {"path": "../b.txt"}
        # an answer sent for what a person saw before the call was asked again is dropped
        stale = {"key": key, "args": {"path": "a.txt"}, "kind": "approve"}
        async def send_stale() -> None:
            handle = store._handle(await store._connect(), job.id)  # type: ignore[attr-defined]
            await handle.signal("decide", stale)
        store._call(send_stale())  # type: ignore[attr-defined]
        store.answer(job.id, None, "reject")
        done = _finished(store, job.id)
    assert (done.status, done.result) == ("DONE", json.dumps({"path": "../b.txt"}))
    assert len(given) == 3 and given[2][key]["kind"] == "reject", given


@contextlib.contextmanager
def _worker_and_store(temporal: str, run: Any) -> Iterator[Any]:
    """The job store on a task queue of its own, served by a worker of the job workflow with
    `run` as the attempt activity, in a thread of its own until the block ends."""
    import asyncio
    import threading

    from temporalio.client import Client
    from temporalio.worker import Worker

    from agentspec.runtime.jobs.temporal_workflow import JobWorkflow

    url = task_queue_url(temporal)
    queue = url.split("task_queue=")[1].split("&")[0]
    stop = threading.Event()

    def work() -> None:
        async def main() -> None:
            client = await Client.connect(temporal)
            async with Worker(client, task_queue=queue, workflows=[JobWorkflow],
                              activities=[run]):
                await asyncio.to_thread(stop.wait)
        asyncio.run(main())

    thread = threading.Thread(target=work)
    thread.start()
    store = open_store(url)
    try:
        yield store
    finally:
        stop.set()
        thread.join(timeout=60)
        store.close()


def _finished(store: Any, job_id: str, *, timeout: float = 60,
              what: str = "the job to finish") -> Any:
    """The job's record once it is done or failed."""
    return wait_for(lambda: (found := store.get(job_id)) is not None and
                    found.status in ("DONE", "FAILED") and found, timeout=timeout, what=what)


@pytest.mark.slow
def test_a_call_answered_once_refuses_a_second_answer(temporal: str) -> None:
    """Two calls wait; the first is approved. Until the second is answered the first is
    still listed, and another person's `reject` of it was reported as sent while the
    workflow dropped it (the call ran approved): now it is refused, naming the answer."""
    from temporalio import activity

    from agentspec.runtime.jobs.temporal_workflow import ANSWER, APPROVALS, RUN_ACTIVITY

    keys = [json.dumps(["tool", "cruncher", "write", n]) for n in (0, 1)]

    @activity.defn(name=RUN_ACTIVITY)
    async def run(record: dict[str, Any], entries: list[dict[str, Any]],
                  decisions: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
        if not decisions:
            return {APPROVALS: [{"key": key, "agent": "cruncher", "tool": "write",
                                 "args": {"n": n}, "question": "Write it?",
                                 "decisions": ["approve", "reject"]}
                                for n, key in enumerate(keys)]}
        return {ANSWER: json.dumps([decisions[key]["kind"] for key in keys])}

    with _worker_and_store(temporal, run) as store:
        job, _ = store.enqueue(_request())
        wait_for(lambda: store.approvals(job.id), timeout=60, what="the questions")
        store.answer(job.id, 1, "approve")
        wait_for(lambda: store.approvals(job.id)[0].get("answered") == "approve",
                 timeout=60, what="the answer in the memo")
        with pytest.raises(StoreError, match=r"already answered \(approve\)"):
            store.answer(job.id, 1, "reject")
        store.answer(job.id, 2, "reject")
        done = _finished(store, job.id)
    assert (done.status, done.result) == ("DONE", json.dumps(["approve", "reject"]))
