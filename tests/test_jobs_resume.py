"""`jobs.on_done: resume` (issue 14, item 2): a finished job goes into its conversation at once
and the parent runs a turn there, with no user message; across processes, on SQLite and on
PostgreSQL (sessions and job store), exactly once also when the worker is killed mid-turn."""

from __future__ import annotations

import asyncio
import json
import signal
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from agentspec.cli import cli
from agentspec.compiler import build_objects, compile_spec
from agentspec.runtime.jobs import Job
from agentspec.runtime.jobs.delegation import JobSettings, deliver_event, enqueue
from agentspec.runtime.jobs.resume import Resumer, TurnFailed, resume_invocation
from agentspec.runtime.jobs.stores import open_store
from agentspec.runtime.jobs.worker import Worker
from agentspec.runtime.sessions import open_sessions
from tests.spec_defaults import spec_job_request, spec_job_settings
from tests.test_jobs import POSTGRES, agentspec, start_worker
from tests.test_jobs import _environ as child_environ

SPEC = """\
    agentspec: 1
    name: office
    root: lead
    agents:
      lead:
        model: gemini-2.5-flash
        instruction: Delegate reports, and tell the user when one is ready.
        tools: [{python: office_tools:notify}]
        task: {agents: [reporter]}
      reporter:
        description: Writes long reports.
        model: gemini-2.5-flash
        instruction: Write the report.
        execution_mode: offline
    jobs:
      store: "${env.JOBS_URL}"
      lease_seconds: 5
      on_done: resume
    sessions: "${env.SESSIONS_URL}"
    """
TOOLS = '''\
import os, signal
from pathlib import Path


def notify(message: str) -> dict:
    """Sends the user a message (an email, say)."""
    kill = os.environ.get("NOTIFY_KILL_FIRST")
    if kill and not Path(kill).exists():  # the worker dies in the middle of the resumed turn
        Path(kill).write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    with Path(os.environ["NOTIFY_LOG"]).open("a") as log:
        log.write(message + "\\n")
    return {"sent": True}
'''
ASK = {"call": "task", "args": {"description": "Q3 report", "subagent_type": "reporter"}}
NOTIFY = {"call": "notify", "args": {"message": "Your Q3 report is ready"}}
FOLLOW_UP = "The Q3 report is in: revenue is up 12%. I have emailed you."


def _stores(backend: str, tmp_path: Path) -> tuple[str, str]:
    """(job store URL, session store URL), each new for this test."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}", f"sqlite:///{tmp_path / 'sessions.db'}"
    if POSTGRES is None:
        pytest.skip("AGENTSPEC_TEST_POSTGRES_URL is not set (.ci/run starts a server)")
    from tests.test_job_store import _fresh_postgres

    return _fresh_postgres(), _fresh_postgres()


def _project(tmp_path: Path, backend: str) -> tuple[Path, dict[str, str]]:
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(SPEC))
    (tmp_path / "office_tools.py").write_text(TOOLS)
    scripts = {
        "first": {"lead": [ASK, {"text": "Queued: I will tell you when it is ready."}]},
        "worker": {"reporter": [{"text": "Revenue is up 12%."}],
                   "lead": [NOTIFY, {"text": FOLLOW_UP}]},
        "after": {"lead": [NOTIFY, {"text": FOLLOW_UP}]},  # a second worker: the turn only
        "thanks": {"lead": [{"text": "You are welcome."}]},
    }
    for name, replies in scripts.items():
        (tmp_path / f"{name}.yaml").write_text(json.dumps({"replies": replies}))
    jobs, sessions = _stores(backend, tmp_path)
    return tmp_path, {"JOBS_URL": jobs, "SESSIONS_URL": sessions,
                      "NOTIFY_LOG": str(tmp_path / "notify.log")}


def _events(sessions_url: str) -> list[Any]:
    async def main() -> Any:
        service, _ = open_sessions(sessions_url)
        return await service.get_session(app_name="office", user_id="user",
                                         session_id="default")

    session = asyncio.run(main())
    assert session is not None
    return list(session.events)


def _said(events: list[Any]) -> list[tuple[str, str]]:
    """(author, what) for each event: its text, or the tool it calls."""
    said = []
    for event in events:
        for part in (event.content.parts if event.content else None) or ():
            if part.text:
                said.append((event.author, part.text.splitlines()[0]))
            elif part.function_call:
                said.append((event.author, f"calls {part.function_call.name}"))
    return said


def _resumed_turns(events: list[Any], job_id: str) -> list[Any]:
    """The lead's final answers in resumed turns (one per resumption that ran)."""
    return [e for e in events if e.invocation_id.startswith("agentspec-resume-")
            and e.author == "lead" and e.is_final_response()]


@pytest.mark.slow  # over 5 s of CPU (tests/conftest.py measures it)
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_worker_resumes_the_parent_before_any_new_user_message(backend: str,
                                                                 tmp_path: Path) -> None:
    project, env = _project(tmp_path, backend)
    queued = agentspec(project, "run", "spec.yaml", "Write the Q3 report", "--script",
                       "first.yaml", env=env)
    assert queued.returncode == 0, queued.stderr
    [job] = open_store(env["JOBS_URL"]).recent()
    assert (job.status, job.on_done) == ("QUEUED", "resume")

    worker = agentspec(project, "worker", "spec.yaml", "--until-idle", "--script",
                       "worker.yaml", env=env)
    assert worker.returncode == 0, worker.stderr
    assert "1 done, 0 failed, 1 resumed" in worker.stdout
    assert f"[lead] {FOLLOW_UP}" in worker.stdout  # the resumed turn, shown as run shows it
    assert "agentspec:agentspec@" not in worker.stdout + worker.stderr  # no password shown

    events = _events(env["SESSIONS_URL"])
    assert _said(events) == [
        ("user", "Write the Q3 report"), ("lead", "calls task"),
        ("lead", "Queued: I will tell you when it is ready."),
        ("reporter", f"[background job {job.id}: Q3 report]"),  # delivered by the worker
        ("lead", "calls notify"), ("lead", FOLLOW_UP)]  # ... and the parent acted on it
    assert {e.invocation_id for e in events[-4:]} == {resume_invocation(job)}
    assert (tmp_path / "notify.log").read_text() == "Your Q3 report is ready\n"
    done = open_store(env["JOBS_URL"]).get(job.id)
    assert done is not None and done.delivered_at is not None and done.resumed_at is not None

    # the next user turn comes after it, and the front end does not deliver the job again
    thanks = agentspec(project, "run", "spec.yaml", "Thanks", "--script", "thanks.yaml", env=env)
    assert thanks.returncode == 0, thanks.stderr
    assert _said(_events(env["SESSIONS_URL"]))[-3:] == [
        ("lead", FOLLOW_UP), ("user", "Thanks"), ("lead", "You are welcome.")]
    # the run shows first what the resumed turn said, which nobody saw yet, then the chat
    shown = thanks.stdout.splitlines()
    assert shown[shown.index("you> Thanks") - 1] == f"[lead] {FOLLOW_UP}"
    assert shown[shown.index("you> Thanks") + 1:] == ["[lead] You are welcome."]
    again = agentspec(project, "run", "spec.yaml", "Bye", "--script", "thanks.yaml", env=env)
    assert again.returncode == 0 and FOLLOW_UP not in again.stdout  # shown once


@pytest.mark.slow  # 5.2 s of CPU (a worker and an interactive run)
def test_a_chat_waiting_for_the_person_shows_the_resumed_answer_when_it_arrives(
        tmp_path: Path) -> None:
    import queue
    import subprocess
    import sys
    import threading
    import time

    project, env = _project(tmp_path, "sqlite")
    (project / "chat.yaml").write_text(json.dumps({"replies": {
        "lead": [ASK, {"text": "Queued: I will tell you when it is ready."}]}}))
    chat = subprocess.Popen([sys.executable, "-m", "agentspec", "run", "spec.yaml", "--script",
                             "chat.yaml"], cwd=project, env=child_environ(env),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    assert chat.stdout is not None and chat.stdin is not None
    threading.Thread(target=lambda: [lines.put(line) for line in chat.stdout or ()],
                     daemon=True).start()

    def wait_for(text: str) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if text in lines.get(timeout=1):
                    return
            except queue.Empty:
                continue
        raise AssertionError(f"run never printed {text!r}")

    try:
        chat.stdin.write("Write the Q3 report\n")
        chat.stdin.flush()
        wait_for("Queued: I will tell you when it is ready.")
        worker = agentspec(project, "worker", "spec.yaml", "--until-idle", "--script",
                           "worker.yaml", env=env)
        assert worker.returncode == 0, worker.stderr
        wait_for(f"[lead] {FOLLOW_UP}")  # while the chat waits for the person's next message
    finally:
        chat.stdin.close()
        chat.wait(timeout=120)
    assert chat.returncode == 0


@pytest.mark.slow  # over 5 s of CPU (tests/conftest.py measures it)
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_worker_killed_mid_resume_leaves_one_resumed_turn(backend: str,
                                                            tmp_path: Path) -> None:
    project, env = _project(tmp_path, backend)
    marker = tmp_path / "killed"
    queued = agentspec(project, "run", "spec.yaml", "Write the Q3 report", "--script",
                       "first.yaml", env=env)
    assert queued.returncode == 0, queued.stderr
    [job] = open_store(env["JOBS_URL"]).recent()

    # the first worker runs the job, delivers it, and dies inside the parent's turn (in its
    # notify tool, after the model asked for it): SIGKILL, nothing cleaned up
    first = start_worker(project, "spec.yaml", "--script", "worker.yaml",
                         env={**env, "NOTIFY_KILL_FIRST": str(marker)})
    try:
        first.wait(timeout=180)
    finally:
        first.kill()
    assert first.returncode == -signal.SIGKILL and marker.exists()
    store = open_store(env["JOBS_URL"])
    held = store.get(job.id)
    assert held is not None and held.status == "DONE" and held.resumed_at is None
    assert held.lease_owner is not None  # its resume lease, left to expire
    assert not (tmp_path / "notify.log").exists()
    delivered = [e for e in _events(env["SESSIONS_URL"])
                 if (e.custom_metadata or {}).get("agentspec_job")]
    assert len(delivered) == 1  # it died after the delivery

    # a second worker waits out the lease, then finishes the same turn: no second delivery,
    # no second run of the job, one resumed turn
    second = agentspec(project, "worker", "spec.yaml", "--until-idle", "--script",
                       "after.yaml", env=env)
    assert second.returncode == 0, second.stderr
    assert "0 done, 0 failed, 1 resumed" in second.stdout
    events = _events(env["SESSIONS_URL"])
    assert len([e for e in events if (e.custom_metadata or {}).get("agentspec_job")]) == 1
    assert len(_resumed_turns(events, job.id)) == 1
    assert {e.invocation_id for e in events if e.invocation_id.startswith(
        "agentspec-resume-")} == {resume_invocation(job)}
    assert _said(events)[-1] == ("lead", FOLLOW_UP)
    assert (tmp_path / "notify.log").read_text() == "Your Q3 report is ready\n"
    resumed = store.get(job.id)
    assert resumed is not None and resumed.attempts == 1 and resumed.resumed_at is not None
    assert resumed.lease_owner is None

    # a third worker finds nothing left to do
    third = agentspec(project, "worker", "spec.yaml", "--until-idle", "--script", "after.yaml",
                      env=env)
    assert third.returncode == 0 and "0 resumed" in third.stdout, third.stdout
    assert len(_resumed_turns(_events(env["SESSIONS_URL"]), job.id)) == 1
    store.close()


# in one process: the Resumer and the Worker ---------------------------------------------------


@pytest.fixture(autouse=True)
def _own_stores(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stores these tests name, not the suite's shared `memory://` override."""
    monkeypatch.delenv("AGENTSPEC_JOBS_STORE", raising=False)
    monkeypatch.delenv("AGENTSPEC_SESSIONS", raising=False)


@pytest.fixture
def office(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("JOBS_URL", f"sqlite:///{tmp_path / 'jobs.db'}")
    monkeypatch.setenv("SESSIONS_URL", f"sqlite:///{tmp_path / 'sessions.db'}")
    monkeypatch.setenv("NOTIFY_LOG", str(tmp_path / "notify.log"))
    monkeypatch.delenv("AGENTSPEC_JOBS_STORE", raising=False)
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(SPEC))
    (tmp_path / "office_tools.py").write_text(TOOLS)
    app, problems = build_objects(compile_spec(tmp_path / "spec.yaml"))
    assert problems == []
    return app


def _finished_job(settings: JobSettings, session_id: str, result: Any = "Revenue is up.",
                  request: str = "Q3 report") -> Job:
    store = settings.open()
    job, _ = store.enqueue(spec_job_request(agent="reporter", input=request, app_name="office",
                                      user_id="user", session_id=session_id,
                                      on_done="resume"))
    store.claim("w", 30)
    done = store.finish(job.id, "w", result)
    assert done is not None
    return done


def test_a_resumption_is_idempotent_step_by_step(office: Any) -> None:
    from agentspec.runtime.jobs.delegation import app_job_settings
    from agentspec.testing.scripted import install_script

    settings = app_job_settings(office)
    assert settings is not None and settings.on_done == "resume"
    models = install_script(office.root_agent, {"lead": [{"text": "It is ready."}]})
    sessions, _ = open_sessions(None)
    resumer = Resumer(office, sessions)

    jobs: list[Job] = []

    async def main() -> list[Any]:
        session = await sessions.create_session(app_name="office", user_id="user")
        job = _finished_job(settings, session.id)
        jobs.append(job)
        assert await resumer.resume(settings, job) == "resumed"
        assert await resumer.resume(settings, job) == "already resumed"  # no model call
        cut_short = _finished_job(settings, session.id, "Costs are down.", "Q3 costs")
        jobs.append(cut_short)
        cut = await sessions.get_session(app_name="office", user_id="user",
                                         session_id=session.id)
        await sessions.append_event(cut, deliver_event(cut_short, resume_invocation(cut_short)))
        models["lead"].replies.append({"text": "Costs are down too."})
        assert await resumer.resume(settings, cut_short) == "resumed"  # the turn, not again
        gone = _finished_job(settings, "nobody", request="Q3 elsewhere")
        assert await resumer.resume(settings, gone) == "no conversation"
        claimed = settings.open().claim_resume("w", 30, job_id=gone.id)
        assert claimed is not None and settings.open().end_resume(gone.id, "w", True)
        # no conversation to resume: the front end that has it delivers the job instead
        assert [j.id for j in settings.open().undelivered("office", "user", "nobody")] == [
            gone.id]
        stored = await sessions.get_session(app_name="office", user_id="user",
                                            session_id=session.id)
        assert stored is not None
        return list(stored.events)

    events = asyncio.run(main())
    first, cut_short = jobs
    assert _said(events) == [  # each job delivered once, each turn run once
        ("reporter", f"[background job {first.id}: Q3 report]"), ("lead", "It is ready."),
        ("reporter", f"[background job {cut_short.id}: Q3 costs]"),
        ("lead", "Costs are down too.")]
    assert models["lead"].problems == []
    assert "Revenue is up." in str(models["lead"].requests[0].contents)  # it saw the result


def replace_session(job: Job, session_id: str) -> Job:
    from dataclasses import replace

    return replace(job, session_id=session_id)


def test_a_failed_resumed_turn_is_reported_and_not_run_again(
        office: Any, caplog: pytest.LogCaptureFixture) -> None:
    from agentspec.runtime.jobs.delegation import app_job_settings
    from agentspec.testing.scripted import install_script

    settings = app_job_settings(office)
    assert settings is not None
    install_script(office.root_agent, {"lead": [{"fail": "503 UNAVAILABLE"},
                                                {"fail": "503 again"}]})
    sessions, _ = open_sessions(None)
    reported: list[tuple[str, str | None]] = []

    async def answer(agent: Any, request: str) -> str:
        return f"answered {request}"

    async def main() -> None:
        session = await sessions.create_session(app_name="office", user_id="user")
        job, _ = settings.open().enqueue(spec_job_request(
            agent="reporter", input="Q3", app_name="office", user_id="user",
            session_id=session.id, on_done="resume"))
        worker = Worker({"reporter": object()}, settings,  # type: ignore[dict-item]
                        run=answer, resumer=Resumer(office, sessions), poll_seconds=0.05,
                        report=lambda what, job: reported.append((what, job.error)))
        await asyncio.wait_for(worker.serve(asyncio.Event(), until_idle=True), 60)
        # the worker reports the failure: ADK's loggers print no traceback of it
        assert not [r.getMessage() for r in caplog.records if r.exc_info]
        stored = settings.open().get(job.id)
        assert stored is not None and stored.resumed_at is not None  # not tried again
        with pytest.raises(TurnFailed):  # what the worker met
            await Resumer(office, sessions).resume(settings, replace_session(
                _finished_job(settings, session.id, "x", "Q4"), session.id))

    asyncio.run(main())
    whats = [what for what, _ in reported]
    assert whats == ["claimed", "done", "resuming", "resume failed"], reported
    assert "agent `lead`: model `scripted` failed: ScriptedFailure: lead: 503 UNAVAILABLE" in (
        reported[-1][1] or "")


def test_a_job_whose_model_fails_records_the_agent_model_and_endpoint(office: Any) -> None:
    from agentspec.runtime.blame import ModelError
    from agentspec.runtime.jobs.delegation import app_job_settings

    settings = app_job_settings(office)
    assert settings is not None

    async def unreachable(agent: Any, request: str) -> str:
        raise ModelError("connection refused (nothing listens there)",
                         model="openai/local", endpoint="http://127.0.0.1:9/v1")

    async def main() -> Job | None:
        job, _ = settings.open().enqueue(spec_job_request(
            agent="reporter", input="Q3", app_name="office", user_id="user",
            session_id="s", max_attempts=1))
        worker = Worker({"reporter": object()}, settings,  # type: ignore[dict-item]
                        run=unreachable, poll_seconds=0.05, report=lambda what, job: None)
        await asyncio.wait_for(worker.serve(asyncio.Event(), until_idle=True), 60)
        return settings.open().get(job.id)

    failed = asyncio.run(main())
    assert failed is not None and failed.status == "FAILED"
    assert failed.error == ("agent `reporter`: model `openai/local` at http://127.0.0.1:9/v1 "
                            "failed: connection refused (nothing listens there)")


def test_a_done_job_answers_the_same_request_with_its_stored_result(tmp_path: Path) -> None:
    settings = spec_job_settings(f"sqlite:///{tmp_path / 'jobs.db'}", on_done="resume")
    session = SimpleNamespace(app_name="office", user_id="user", id="s", state={})
    invocation = SimpleNamespace(plugin_manager=SimpleNamespace(plugins=[]))
    context = SimpleNamespace(session=session, invocation_id="i", function_call_id="c1",
                              get_invocation_context=lambda: invocation)
    agent = SimpleNamespace(name="reporter", output_key=None)

    def ask(call: str) -> dict[str, Any]:
        context.function_call_id = call
        return asyncio.run(enqueue(settings, agent, "Q3", context, "task"))  # type: ignore[arg-type]

    first = ask("c1")
    assert first["status"] == "QUEUED"
    store = settings.open()
    store.claim("w", 30)
    store.finish(first["job_id"], "w", {"revenue": "+12%"})
    again = ask("c2")
    assert again["job_id"] == first["job_id"] and again["status"] == "DONE"
    assert again["result"] == {"revenue": "+12%"} and "not run again" in again["note"]
    assert len(store.recent()) == 1


def test_sessions_from_the_spec_the_environment_or_the_command(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    """`run` keeps the conversation where the spec says (default beside it for jobs that
    resume), AGENTSPEC_SESSIONS overrides the spec and --session both; a store that cannot
    be used is an error that shows no password."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AGENTSPEC_SESSIONS", raising=False)
    monkeypatch.setenv("AGENTSPEC_JOBS_STORE", f"sqlite:///{tmp_path / 'jobs.db'}")
    spec = textwrap.dedent(SPEC).replace('sessions: "${env.SESSIONS_URL}"\n', "").replace(
        '  store: "${env.JOBS_URL}"\n', "")
    (tmp_path / "spec.yaml").write_text(spec)
    (tmp_path / "office_tools.py").write_text(TOOLS)
    (tmp_path / "hi.yaml").write_text(json.dumps({"replies": {"lead": [{"text": "Hello."}]}}))

    def run(*args: str) -> Any:
        return CliRunner().invoke(cli, ["run", "spec.yaml", "Hi", "--script", "hi.yaml",
                                        *args], prog_name="agentspec")

    assert run().exit_code == 0
    assert (tmp_path / ".agentspec" / "sessions.db").is_file()  # the default beside the spec
    monkeypatch.setenv("AGENTSPEC_SESSIONS", f"sqlite:///{tmp_path / 'env.db'}")
    assert run().exit_code == 0 and (tmp_path / "env.db").is_file()
    assert run("--session", f"sqlite:///{tmp_path / 'flag.db'}").exit_code == 0
    assert (tmp_path / "flag.db").is_file()
    refused = run("--session", "postgresql://agents:hunter2@127.0.0.1:1/none?connect_timeout=2")
    assert refused.exit_code == 1 and "cannot use the session store" in refused.output
    assert "hunter2" not in refused.output and "Traceback" not in refused.output
    bad = run("--session", "no-scheme")
    assert bad.exit_code == 1 and "not a session store URL" in bad.output


def test_the_generated_package_records_on_done_and_no_session_url(tmp_path: Path) -> None:
    """The generated app's jobs resume their parent; the conversation store is the front
    end's choice (`adk api_server --session_service_uri`), so no URL (nor its password) is
    written into the package."""
    spec = textwrap.dedent(SPEC).replace('"${env.SESSIONS_URL}"',
                                         '"postgresql://agents:hunter2@db/agents"')
    (tmp_path / "spec.yaml").write_text(spec)
    (tmp_path / "office_tools.py").write_text(TOOLS)
    built = CliRunner().invoke(cli, ["build", str(tmp_path / "spec.yaml"), "-o",
                                     str(tmp_path / "out")],
                               prog_name="agentspec", env={"JOBS_URL": "memory://"})
    assert built.exit_code == 0, built.output
    source = "\n".join(p.read_text() for p in (tmp_path / "out").rglob("*.py"))
    assert "on_done='resume'" in source or 'on_done="resume"' in source
    assert "hunter2" not in source and "postgresql://agents" not in source


# the generated package behind `adk api_server`, and a worker process ----------------------

FRONT_END_MODELS = '''\
from google.adk.models.llm_response import LlmResponse
from google.genai import types


def scripted(callback_context, llm_request):
    """Stands in for the model (no script reaches a server's own runner): the lead queues the
    report, says so, and once the job is in the conversation, answers with it."""
    last = llm_request.contents[-1].parts[-1] if llm_request.contents else None
    text = last.text or "" if last is not None else ""
    if callback_context.agent_name == "reporter":
        part = types.Part(text="Revenue is up 12%.")
    elif "[background job" in str(llm_request.contents[-1]):
        part = types.Part(text="Your report is in.")
    elif last is not None and last.function_response is not None:
        part = types.Part(text="Queued.")
    elif text == "Thanks":
        part = types.Part(text="You are welcome.")
    else:
        part = types.Part(function_call=types.FunctionCall(
            name="task", args={"description": "Q3 report", "subagent_type": "reporter"}))
    return LlmResponse(content=types.Content(role="model", parts=[part]))
'''


def test_an_adk_api_server_front_end_and_a_worker_share_the_conversation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The generated package served by ADK's own API server on an SQLite session store, and
    `agentspec worker` on the same store (the spec's `sessions:`): the job the server's turn
    queued is resumed by the worker, and the server shows the follow-up before the user's
    next message."""
    from fastapi.testclient import TestClient
    from google.adk.cli.fast_api import get_fast_api_app

    monkeypatch.setenv("ADK_DISABLE_LOAD_DOTENV", "1")
    monkeypatch.delenv("AGENTSPEC_JOBS_STORE", raising=False)  # the spec's own store
    jobs = f"sqlite:///{tmp_path / 'jobs.db'}"
    sessions = f"sqlite:///{tmp_path / 'sessions.db'}"
    callback = "    callbacks: {before_model: [office_models:scripted]}\n"
    spec = textwrap.dedent(SPEC).replace("    tools: [{python: office_tools:notify}]\n",
                                         callback).replace(
        "    execution_mode: offline\n", "    execution_mode: offline\n" + callback)
    (tmp_path / "spec.yaml").write_text(spec)
    (tmp_path / "office_models.py").write_text(FRONT_END_MODELS)
    env = {"JOBS_URL": jobs, "SESSIONS_URL": sessions}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    built = CliRunner().invoke(cli, ["build", str(tmp_path / "spec.yaml"), "-o",
                                     str(tmp_path / "out")], prog_name="agentspec")
    assert built.exit_code == 0, built.output
    server = get_fast_api_app(agents_dir=str(tmp_path / "out"), web=False,
                              session_service_uri=sessions, artifact_service_uri="memory://",
                              auto_create_session=True, use_local_storage=False)

    def say(client: Any, text: str) -> None:
        done = client.post("/run", json={
            "app_name": "office", "user_id": "user", "session_id": "default",
            "new_message": {"role": "user", "parts": [{"text": text}]}})
        assert done.status_code == 200, done.text
        assert [e for e in done.json() if e.get("errorCode")] == [], done.json()

    def conversation(client: Any) -> list[tuple[str, str]]:
        got = client.get("/apps/office/users/user/sessions/default")
        assert got.status_code == 200, got.text
        return [(e["author"], p["text"].splitlines()[0]) for e in got.json()["events"]
                for p in (e.get("content") or {}).get("parts", []) if p.get("text")]

    with TestClient(server) as client:
        say(client, "Write the Q3 report")
        [job] = open_store(jobs).recent()
        assert (job.status, job.on_done) == ("QUEUED", "resume")
        (tmp_path / "none.yaml").write_text("replies: {}\n")  # the callbacks answer
        worker = agentspec(tmp_path, "worker", "spec.yaml", "--until-idle", "--script",
                           "none.yaml", env=env)
        assert worker.returncode == 0, worker.stderr
        assert "1 done, 0 failed, 1 resumed" in worker.stdout
        assert conversation(client) == [
            ("user", "Write the Q3 report"), ("lead", "Queued."),
            ("reporter", f"[background job {job.id}: Q3 report]"),
            ("lead", "Your report is in.")]
        say(client, "Thanks")
        assert conversation(client)[-3:] == [("lead", "Your report is in."),
                                             ("user", "Thanks"), ("lead", "You are welcome.")]


# the worker's side: racing workers, a worker told to stop ----------------------------------


class CountingResumer:
    """Stands in for a Resumer: counts resumptions per job (and can hang in one)."""

    def __init__(self, hang: bool = False) -> None:
        self.resumed: list[str] = []
        self.hang = hang

    async def resume(self, settings: JobSettings, job: Job) -> str:
        if self.hang:
            await asyncio.sleep(3600)
        await asyncio.sleep(0.01)  # let the other worker in
        self.resumed.append(job.id)
        return "resumed"


def test_two_workers_resume_each_finished_job_once(tmp_path: Path) -> None:
    settings = spec_job_settings(f"sqlite:///{tmp_path / 'race.db'}", on_done="resume")
    resumers = [CountingResumer(), CountingResumer()]
    ids = [_finished_job(settings, "s", request=f"deal {i}").id for i in range(12)]

    async def main() -> None:
        workers = [Worker({"reporter": object()}, settings, poll_seconds=0.02,  # type: ignore[dict-item]
                          resumer=resumer) for resumer in resumers]  # type: ignore[arg-type]
        await asyncio.wait_for(asyncio.gather(*(w.serve(asyncio.Event(), until_idle=True)
                                                for w in workers)), 120)

    asyncio.run(main())
    resumed = resumers[0].resumed + resumers[1].resumed
    assert sorted(resumed) == sorted(ids)  # every job once, by one worker or the other
    store = settings.open()
    assert all(store.get(i).resumed_at is not None for i in ids)  # type: ignore[union-attr]


def test_a_stopped_worker_gives_its_resumption_back(tmp_path: Path) -> None:
    settings = spec_job_settings(f"sqlite:///{tmp_path / 'stop.db'}", on_done="resume")
    job = _finished_job(settings, "s")

    async def main() -> None:
        stop = asyncio.Event()
        worker = Worker({"reporter": object()}, settings, grace_seconds=0.1,  # type: ignore[dict-item]
                        poll_seconds=0.02, resumer=CountingResumer(hang=True))  # type: ignore[arg-type]
        serving = asyncio.create_task(worker.serve(stop))
        await asyncio.to_thread(wait_for_lease, settings, job.id)
        stop.set()
        await serving

    asyncio.run(main())
    back = settings.open().get(job.id)
    assert back is not None and back.lease_owner is None and back.resumed_at is None
    assert settings.open().claim_resume("other", 30) is not None  # at once, not a lease later


def wait_for_lease(settings: JobSettings, job_id: str) -> None:
    from tests.test_jobs import wait_for

    wait_for(lambda: (settings.open().get(job_id) or job_id).lease_owner,  # type: ignore[union-attr]
             what="the worker to claim the resumption")


# concurrent resumptions of one conversation ------------------------------------------------


def test_concurrent_resumptions_of_one_conversation_all_resume_once(office: Any) -> None:
    """Attack (issue 21, item 17): eight parents of one conversation resumed at once; the
    session store refuses the writes of all but one of those racing (`StaleSessionError`),
    and a refused resumption used to be reported as a failed turn and never run again."""
    import os

    from agentspec.runtime.jobs.delegation import app_job_settings
    from agentspec.testing.scripted import install_script

    settings = app_job_settings(office)
    assert settings is not None
    install_script(office.root_agent, {"lead": [{"text": f"Noted {i}."} for i in range(200)]})
    sessions, _ = open_sessions(os.environ["SESSIONS_URL"])
    waits: list[float] = []

    async def no_wait(seconds: float) -> None:  # the backoff, without the waiting
        waits.append(seconds)
        await asyncio.sleep(0)

    resumer = Resumer(office, sessions, sleep=no_wait)

    async def main() -> tuple[list[str], list[Any]]:
        session = await sessions.create_session(app_name="office", user_id="user")
        jobs = [_finished_job(settings, session.id, f"Report {i}.", f"report {i}")
                for i in range(8)]
        outcomes = await asyncio.gather(*(resumer.resume(settings, job) for job in jobs))
        stored = await sessions.get_session(app_name="office", user_id="user",
                                            session_id=session.id)
        assert stored is not None
        return [job.id for job in jobs] if set(outcomes) == {"resumed"} else list(
            outcomes), list(stored.events)

    ids, events = asyncio.run(main())
    for job_id in ids:
        delivered = [e for e in events
                     if ((e.custom_metadata or {}).get("agentspec_job") or {}).get("job_id")
                     == job_id]
        answers = [e for e in events if e.invocation_id == f"agentspec-resume-{job_id}"
                   and e.author == "lead" and e.is_final_response()]
        assert (len(delivered), len(answers)) == (1, 1), job_id
    assert waits, "no resumption met a stale session: the test no longer races"
