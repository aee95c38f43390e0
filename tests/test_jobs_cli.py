"""Jobs around the edges: `agentspec jobs`, the webhook, the `task` tool and `job_status`
with offline agents, a worker told to stop."""

from __future__ import annotations

import asyncio
import http.server
import json
import socket
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from agentspec.cli import cli
from agentspec.compiler import build_objects, compile_spec
from agentspec.runtime.jobs import Job
from agentspec.runtime.jobs.delegation import notify, offline_agents
from agentspec.runtime.jobs.stores import open_store
from agentspec.runtime.jobs.worker import Worker
from tests.buildkit import scripted_turn
from tests.spec_defaults import spec_job_request, spec_job_settings

SPEC = """\
    agentspec: 1
    name: office
    root: lead
    agents:
      lead:
        model: gemini-2.5-flash
        instruction: Delegate reports.
        task: {agents: [reporter, helper]}
      reporter:
        description: Writes long reports.
        model: gemini-2.5-flash
        instruction: Write the report.
        execution_mode: offline
      helper: {description: Helps now., model: gemini-2.5-flash, instruction: Help.}
    """


@pytest.fixture
def office(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, str]:
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    monkeypatch.setenv("AGENTSPEC_JOBS_STORE", url)
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(SPEC))
    app, problems = build_objects(compile_spec(tmp_path / "spec.yaml", environ={}))
    assert problems == []
    return app, url


@pytest.fixture
def own_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests give JobSettings a store of their own: no override of it."""
    monkeypatch.delenv("AGENTSPEC_JOBS_STORE")


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name="agentspec")


def test_the_task_tool_queues_offline_agents_and_runs_the_others(office: tuple[Any, str]
                                                                 ) -> None:
    app, url = office
    turn = scripted_turn(app, {
        "lead": [{"call": "task", "args": {"description": "Q3 report", "subagent_type":
                                           "reporter"}},
                 {"call": "task", "args": {"description": "Quick fix", "subagent_type":
                                           "helper"}},
                 {"call": "job_status"}, {"text": "Report queued; fix done."}],
        "helper": [{"text": "Fixed."}]}, "Do both")
    queued, ran, status = (r for tool, r in turn.results if tool in ("task", "job_status"))
    assert queued["status"] == "QUEUED" and queued["agent"] == "reporter"
    assert ran == {"result": "Fixed."}
    assert status["jobs"] == [{"job_id": queued["job_id"], "agent": "reporter",
                               "status": "QUEUED"}]
    declared = str(turn.models["lead"].requests[0].config.tools)
    assert "reporter: Writes long reports. (runs in the background" in declared
    assert offline_agents(app.root_agent).keys() == {"reporter"}
    assert open_store(url).get(queued["job_id"]).input == "Q3 report"  # type: ignore[union-attr]


def test_job_status_shows_and_retries_a_failed_job(tmp_path: Path, own_store: None) -> None:
    from types import SimpleNamespace

    from agentspec.runtime.jobs.delegation import job_status_tool

    settings = spec_job_settings(f"sqlite:///{tmp_path / 'status.db'}")
    store = settings.open()
    job, _ = store.enqueue(spec_job_request(agent="reporter", input="Q3", app_name="office",
                                      user_id="user", session_id="s"))
    store.claim("w", 30)
    store.fail(job.id, "w", "RuntimeError: no data", retry_in=None)
    tool = job_status_tool(settings)
    mine = SimpleNamespace(session=SimpleNamespace(app_name="office", user_id="user", id="s"))
    theirs = SimpleNamespace(session=SimpleNamespace(app_name="office", user_id="user",
                                                     id="other"))

    def call(context: Any, **args: Any) -> Any:
        return asyncio.run(tool.func(tool_context=context, **args))

    assert call(mine, job_id=job.id) == {"job_id": job.id, "agent": "reporter",
                                         "status": "FAILED", "error": "RuntimeError: no data"}
    assert "no job" in call(theirs, job_id=job.id)["error"]  # another conversation's job
    assert call(mine, job_id=job.id, retry=True)["status"] == "QUEUED"
    assert "Only a FAILED" in call(mine, job_id=job.id, retry=True)["note"]


# `agentspec jobs` --------------------------------------------------------------------------


@pytest.fixture
def filled(tmp_path: Path) -> tuple[str, list[Job]]:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    store = open_store(url)
    jobs = [store.enqueue(spec_job_request(agent="reporter", input=f"report {i}", app_name="office",
                                     user_id="user", session_id="default"))[0]
            for i in range(3)]
    store.claim("w", 30)
    store.finish(jobs[0].id, "w", {"pages": 3})
    store.claim("w", 30)
    store.fail(jobs[1].id, "w", "RuntimeError: no data", retry_in=None)
    store.close()
    return url, jobs


def test_jobs_list_show_retry_cancel(filled: tuple[str, list[Job]], own_store: None) -> None:
    url, jobs = filled
    listed = invoke("jobs", "--store", url, "list")
    assert listed.exit_code == 0, listed.output
    header, *rows = listed.output.splitlines()
    assert header.split() == ["ID", "AGENT", "STATUS", "TRIES", "CREATED", "UPDATED", "INPUT",
                              "LAST", "EVENT"]
    assert sorted(r.split()[2] for r in rows) == ["DONE", "FAILED", "QUEUED"]
    failed = invoke("jobs", "--store", url, "--json", "list", "--status", "FAILED")
    assert [j["id"] for j in json.loads(failed.output)] == [jobs[1].id]
    shown = invoke("jobs", "--store", url, "show", jobs[0].id)
    assert "status: DONE" in shown.output and 'result: {"pages": 3}' in shown.output
    retried = invoke("jobs", "--store", url, "--json", "retry", jobs[1].id)
    assert json.loads(retried.output)["status"] == "QUEUED"
    cancelled = invoke("jobs", "--store", url, "--json", "cancel", jobs[2].id)
    assert json.loads(cancelled.output)["status"] == "CANCELLED"
    missing = invoke("jobs", "--store", url, "show", "nope")
    assert missing.exit_code == 1 and "there is no job nope" in missing.output
    assert invoke("jobs", "list").exit_code == 2  # neither --spec nor --store


def test_options_may_follow_the_subcommand(filled: tuple[str, list[Job]],
                                           own_store: None) -> None:
    url, jobs = filled
    before = invoke("jobs", "--store", url, "--json", "list")
    after = invoke("jobs", "list", "--store", url, "--json")
    assert after.exit_code == 0, after.output
    assert json.loads(after.output) == json.loads(before.output) and len(jobs) == 3
    shown = invoke("jobs", "show", jobs[0].id, "--store", url)
    assert shown.exit_code == 0 and "status: DONE" in shown.output


def test_cancelling_or_retrying_a_job_that_cannot_be_is_an_error(
        filled: tuple[str, list[Job]], own_store: None) -> None:
    url, jobs = filled
    done = invoke("jobs", "--store", url, "cancel", jobs[0].id)
    assert done.exit_code == 1
    assert f"job {jobs[0].id} is DONE; only a QUEUED or RUNNING job can be cancelled" in \
        done.output
    assert open_store(url).get(jobs[0].id).status == "DONE"
    queued = invoke("jobs", "--store", url, "retry", jobs[2].id)
    assert queued.exit_code == 1 and "is QUEUED; only a FAILED or CANCELLED job" in \
        queued.output
    assert invoke("jobs", "--store", url, "cancel", "nope").exit_code == 1


def test_jobs_deliver_pushes_finished_jobs_into_their_sessions(
        filled: tuple[str, list[Job]], tmp_path: Path, own_store: None) -> None:
    from google.adk.sessions.sqlite_session_service import SqliteSessionService

    url, jobs = filled
    database = tmp_path / "sessions.db"

    async def make() -> None:
        await SqliteSessionService(str(database)).create_session(
            app_name="office", user_id="user", session_id="default")

    asyncio.run(make())
    done = invoke("jobs", "--store", url, "deliver", "--session", f"sqlite:///{database}")
    assert done.exit_code == 0, done.output
    assert done.output.splitlines()[-1] == "2 job(s) delivered"  # the DONE and the FAILED
    again = invoke("jobs", "--store", url, "deliver", "--session", f"sqlite:///{database}")
    assert again.output.splitlines()[-1] == "0 job(s) delivered"

    async def read() -> Any:
        return await SqliteSessionService(str(database)).get_session(
            app_name="office", user_id="user", session_id="default")

    session = asyncio.run(read())
    texts = [e.content.parts[0].text for e in session.events]
    assert any('"pages": 3' in t for t in texts) and any("FAILED" in t for t in texts)


# the webhook -------------------------------------------------------------------------------


@pytest.fixture
def webhook() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    received: list[dict[str, Any]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append({"body": json.loads(body), "token": self.headers.get("X-Token")})
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/jobs", received
    server.shutdown()


def test_a_finished_job_is_posted_to_the_webhook(webhook: tuple[str, list[dict[str, Any]]],
                                                  tmp_path: Path, own_store: None) -> None:
    url, received = webhook
    settings = spec_job_settings(f"sqlite:///{tmp_path / 'hook.db'}", webhook=url,
                           headers={"X-Token": "t0k"})

    async def answer(agent: Any, request: str) -> str:
        return f"answered {request}"

    store = settings.open()
    job, _ = store.enqueue(spec_job_request(agent="reporter", input="Q3", session_id="s",
                                      state={"customer": "Ana"}))
    worker = Worker({"reporter": object()}, settings, run=answer)  # type: ignore[dict-item]
    asyncio.run(worker.serve(asyncio.Event(), until_idle=True))
    assert [r["body"]["id"] for r in received] == [job.id]
    assert received[0]["body"]["status"] == "DONE" and received[0]["token"] == "t0k"
    assert received[0]["body"]["result"] == "answered Q3"
    assert "state" not in received[0]["body"]  # the caller's inputs stay in the store
    asyncio.run(notify(spec_job_settings("memory://", webhook="http://127.0.0.1:1/down"), job))


# stopping a worker -------------------------------------------------------------------------


def test_a_stopped_worker_releases_what_it_could_not_finish(tmp_path: Path,
                                                           own_store: None) -> None:
    settings = spec_job_settings(f"sqlite:///{tmp_path / 'stop.db'}", lease_seconds=30)
    store = settings.open()
    quick, _ = store.enqueue(spec_job_request(agent="a", input="quick", session_id="s"))
    slow, _ = store.enqueue(spec_job_request(agent="a", input="slow", session_id="s"))

    slow_started = asyncio.Event()

    async def work(agent: Any, request: str) -> str:
        if request == "slow":
            slow_started.set()
            await asyncio.Event().wait()  # runs until the worker gives it up
        return request

    async def quick_done() -> None:
        while (job := store.get(quick.id)) is None or job.status != "DONE":
            await asyncio.sleep(0.01)

    async def main() -> None:
        stop = asyncio.Event()
        worker = Worker({"a": object()}, settings, concurrency=2, grace_seconds=0.5,
                        poll_seconds=0.05, run=work)  # type: ignore[dict-item]
        serving = asyncio.create_task(worker.serve(stop))
        # a deadline that only a hang reaches
        await asyncio.wait_for(asyncio.gather(slow_started.wait(), quick_done()), 120)
        stop.set()  # what SIGTERM does in `agentspec worker`
        await asyncio.wait_for(serving, 120)

    asyncio.run(main())
    done, released = store.get(quick.id), store.get(slow.id)
    assert done is not None and done.status == "DONE"
    assert released is not None and (released.status, released.attempts,
                                     released.lease_owner) == ("QUEUED", 0, None)


def test_the_app_plugin_delivers_before_the_next_message(office: tuple[Any, str]) -> None:
    """What `adk web` relies on: the generated App's JobDelivery plugin, without the CLI."""
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    from agentspec.testing.scripted import install_script

    app, url = office
    models = install_script(app.root_agent, {"lead": [
        {"call": "task", "args": {"description": "Q3 report", "subagent_type": "reporter"}},
        {"text": "Queued."}, {"text": "The report says: revenue is up."}]})

    async def main() -> list[Any]:
        runner = InMemoryRunner(app=app)
        session = await runner.session_service.create_session(app_name=app.name,
                                                              user_id="user")

        async def say(text: str) -> None:
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for _ in runner.run_async(user_id="user", session_id=session.id,
                                            new_message=message):
                pass

        await say("Write the Q3 report")
        store = open_store(url)
        claimed = store.claim("w", 30)
        assert claimed is not None
        store.finish(claimed.id, "w", "Revenue is up 12%.")
        await say("Is it ready?")
        stored = await runner.session_service.get_session(app_name=app.name, user_id="user",
                                                          session_id=session.id)
        await runner.close()
        assert stored is not None
        return list(stored.events)

    events = asyncio.run(main())
    delivered = [e for e in events if (e.custom_metadata or {}).get("agentspec_job")]
    assert [e.author for e in delivered] == ["reporter"]
    order = [e.author for e in events if e.content]
    assert order[order.index("reporter") + 1] == "user"  # before the new message
    last_request = models["lead"].requests[-1]
    assert "Revenue is up 12%." in str(last_request.contents)


def test_a_failing_heartbeat_is_retried_and_a_lost_lease_stops_the_agent(
        tmp_path: Path, own_store: None) -> None:
    settings = spec_job_settings(f"sqlite:///{tmp_path / 'beat.db'}", lease_seconds=5)
    store = settings.open()
    job, _ = store.enqueue(spec_job_request(agent="a", input="long", session_id="s"))
    beats: list[str] = []
    real = store.heartbeat

    def flaky(job_id: str, owner: str, lease: float) -> bool:
        beats.append(owner)
        if len(beats) == 1:
            raise RuntimeError("database is locked")
        if len(beats) == 3:
            store.cancel(job_id)  # someone else now decides about the job: the lease is gone
        return real(job_id, owner, lease)

    stopped: list[bool] = []

    async def work(agent: Any, request: str) -> str:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            stopped.append(True)
            raise
        return "never"

    async def main() -> None:
        worker = Worker({"a": object()}, settings, run=work)  # type: ignore[dict-item]
        worker.settings = spec_job_settings(settings.store, lease_seconds=0.3)
        store.heartbeat = flaky  # type: ignore[method-assign]
        await asyncio.wait_for(worker.serve(asyncio.Event(), until_idle=True), 120)

    asyncio.run(main())
    assert len(beats) >= 3  # the failed beat did not end the renewals
    assert stopped == [True]  # the agent was stopped once the lease was lost
    ended = store.get(job.id)
    assert ended is not None and ended.status == "CANCELLED" and ended.result is None


def test_a_store_newer_than_the_code_is_a_clear_error_not_a_bug(
        office: tuple[Any, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 12, item 12: exit 1 naming both schema versions, from every command that opens
    the store."""
    import sqlite3

    from agentspec.runtime.jobs.sql import MIGRATIONS

    _, url = office
    open_store(url).close()
    with sqlite3.connect(url.removeprefix("sqlite:///")) as connection:
        connection.execute("INSERT INTO agentspec_schema VALUES (?)", (len(MIGRATIONS) + 1,))
    script = tmp_path / "script.yaml"
    script.write_text("replies: {lead: [{text: hi}]}\n")
    monkeypatch.chdir(tmp_path)
    for args in (["jobs", "--store", url, "list"],
                 ["worker", "spec.yaml", "--until-idle", "--script", str(script)],
                 ["run", "spec.yaml", "hello", "--script", str(script)]):
        done = invoke(*args)
        assert done.exit_code == 1, (args, done.output)
        assert f"schema version {len(MIGRATIONS) + 1}" in done.output, (args, done.output)
        assert "internal error" not in done.output


REPORTING = SPEC.replace("        instruction: Delegate reports.\n",
                         "        instruction: 'Delegate reports. Last report: {report?}'\n"
                         ).replace("        execution_mode: offline\n",
                                   "        execution_mode: offline\n        output_key: report\n")


@pytest.mark.parametrize("delivery", ["jobs deliver", "agentspec run", "the app's plugin"])
def test_every_delivery_sets_the_output_key_and_logs_no_unknown_agent(
        delivery: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """Issue 12, item 7 and issue 11's noise: one delivery path with one effect (the DONE
    result under the offline agent's `output_key`), and ADK never meets an author it does
    not know."""
    from google.adk.runners import Runner
    from google.adk.sessions.sqlite_session_service import SqliteSessionService
    from google.genai import types

    from agentspec.testing.scripted import install_script

    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    monkeypatch.setenv("AGENTSPEC_JOBS_STORE", url)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(REPORTING))
    sessions = f"sqlite:///{tmp_path / 'sessions.db'}"
    first = tmp_path / "first.yaml"
    first.write_text(json.dumps({"replies": {"lead": [
        {"call": "task", "args": {"description": "Q3 report", "subagent_type": "reporter"}},
        {"text": "Queued."}]}}))
    assert invoke("run", "spec.yaml", "Write it", "--script", str(first),
                  "--session", sessions).exit_code == 0
    store = open_store(url)
    claimed = store.claim("w", 30)
    assert claimed is not None and claimed.output_key == "report"
    store.finish(claimed.id, "w", "Revenue is up 12%.")
    caplog.set_level("WARNING")
    if delivery == "jobs deliver":
        done = invoke("jobs", "--store", url, "deliver", "--session", sessions)
        assert done.output.splitlines()[-1] == "1 job(s) delivered", done.output
    second = tmp_path / "second.yaml"
    second.write_text(json.dumps({"replies": {"lead": [{"text": "Here it is."}]}}))
    if delivery == "the app's plugin":
        app, problems = build_objects(compile_spec(Path("spec.yaml"), environ={}))
        assert problems == []
        models = install_script(app.root_agent, {"lead": [{"text": "Here it is."}]})
        service = SqliteSessionService(str(tmp_path / "sessions.db"))

        async def say() -> None:
            runner = Runner(app=app, session_service=service)
            message = types.Content(role="user", parts=[types.Part(text="Ready?")])
            async for _ in runner.run_async(user_id="user", session_id="default",
                                            new_message=message):
                pass
            await runner.close()

        asyncio.run(say())
        instruction = str(models["lead"].requests[-1].config.system_instruction)
        assert "Last report: Revenue is up 12%." in instruction
    else:
        ran = invoke("run", "spec.yaml", "Ready?", "--script", str(second), "--session", sessions)
        assert ran.exit_code == 0, ran.output

    async def state() -> dict[str, Any]:
        session = await SqliteSessionService(str(tmp_path / "sessions.db")).get_session(
            app_name="office", user_id="user", session_id="default")
        assert session is not None
        return dict(session.state)

    assert asyncio.run(state())["report"] == "Revenue is up 12%."
    assert "unknown agent" not in caplog.text


class HostileReceiver:
    """A webhook receiver on loopback that misbehaves in one way until it is stopped."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.sent = 0
        self.stopped = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=8)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/hook"
        if kind != "never accepts":
            threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        self.listener.settimeout(0.1)
        while not self.stopped.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # stopped: the listener is closed
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            connection.recv(65536)
            try:
                if self.kind == "streams without end":
                    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 7000000000\r\n\r\n")
                    while not self.stopped.is_set():
                        self.sent += connection.send(b"x" * 65536)
                elif self.kind == "trickles its headers":
                    connection.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                    while not self.stopped.wait(0.05):
                        connection.sendall(b"a")
                else:  # never answers
                    self.stopped.wait()
            except OSError:
                return  # the client hung up: what a capped client does

    def stop(self) -> None:
        self.stopped.set()
        self.listener.close()


@pytest.mark.parametrize("kind", ["streams without end", "trickles its headers",
                                  "never answers", "never accepts"])
def test_a_hostile_webhook_holds_no_worker_slot(kind: str, tmp_path: Path, own_store: None,
                                                monkeypatch: pytest.MonkeyPatch,
                                                caplog: pytest.LogCaptureFixture) -> None:
    """Issue 12, item 14: the webhook exchange has a total deadline and its body is never
    read, so a worker with one slot runs its next job whatever the receiver does."""
    from agentspec.runtime.jobs import delegation

    monkeypatch.setattr(delegation, "WEBHOOK_SECONDS", 0.5, raising=False)
    receiver = HostileReceiver(kind)
    settings = spec_job_settings(f"sqlite:///{tmp_path / 'hook.db'}", webhook=receiver.url)
    store = settings.open()
    jobs = [store.enqueue(spec_job_request(agent="a", input=f"job {i}", session_id="s"))[0]
            for i in range(2)]

    async def answer(agent: Any, request: str) -> str:
        return request

    async def main() -> None:
        worker = Worker({"a": object()}, settings, concurrency=1, poll_seconds=0.05,
                        run=answer)  # type: ignore[dict-item]
        try:  # the guard only ends a hang (before the fix); it asserts no speed
            await asyncio.wait_for(worker.serve(asyncio.Event(), until_idle=True), 120)
        finally:
            receiver.stop()

    caplog.set_level("WARNING")
    asyncio.run(main())
    assert [store.get(j.id).status for j in jobs] == ["DONE", "DONE"]  # type: ignore[union-attr]
    assert receiver.sent < 64 * 1024 * 1024  # the body was not read (only socket buffers)
    if kind != "streams without end":
        assert "did not answer within" in caplog.text


# a job's session gets the caller's required state ------------------------------------------

REQUIRED_STATE_SPEC = """\
agentspec: 1
name: scoring
state:
  topic: {required: true, description: The topic}
  tone: dry
agents:
  lead:
    model: gemini-2.5-flash
    instruction: Help with {topic}.
    sub_agents: [scorer]
  scorer:
    description: Scores a topic.
    mode: single_turn
    execution_mode: offline
    model: gemini-2.5-flash
    instruction: Score the request about {topic}, {tone}.
jobs:
  store: "sqlite:///jobs.db"
"""


def test_an_offline_agent_reads_the_required_state_its_caller_had(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, own_store: None) -> None:
    (tmp_path / "j.yaml").write_text(REQUIRED_STATE_SPEC)
    (tmp_path / "run.yaml").write_text(
        "replies:\n  lead:\n    - {call: scorer, args: {request: score it}}\n"
        "    - {text: queued}\n")
    # the reply is only for a request whose instruction has the caller's topic and the
    # spec's initial state
    (tmp_path / "w.yaml").write_text("replies:\n  scorer:\n    - {when: 'about eels, dry', "
                                     "text: '90'}\n")
    monkeypatch.chdir(tmp_path)
    ran = invoke("run", "--script", "run.yaml", "--state", "topic=eels", "j.yaml", "hi")
    assert ran.exit_code == 0, ran.output
    [queued] = open_store(f"sqlite:///{tmp_path / 'jobs.db'}").recent()
    assert queued.state == {"topic": "eels"}  # the required inputs, nothing else
    worked = invoke("worker", "--until-idle", "--script", "w.yaml", "j.yaml")
    assert "1 done" in worked.output, worked.output
    [done] = open_store(f"sqlite:///{tmp_path / 'jobs.db'}").recent()
    assert (done.status, done.result) == ("DONE", "90")
