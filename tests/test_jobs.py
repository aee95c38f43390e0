"""`execution_mode: offline` end to end, with workers in processes of their own: the shipped
deal desk's conversation, a worker killed mid-job, and four workers sharing 200 jobs on SQLite
and on PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from agentspec.runtime.jobs.stores import open_store
from tests.buildkit import ROOT, offline_project, tool_runs
from tests.spec_defaults import spec_job_request

POSTGRES = os.environ.get("AGENTSPEC_TEST_POSTGRES_URL")

pytestmark = pytest.mark.slow  # workers and conversations in processes of their own


def _environ(env: dict[str, str] | None) -> dict[str, str]:
    """A child process's environment: no model keys, the spec's own job store."""
    environ = {k: v for k, v in os.environ.items()
               if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "AGENTSPEC_JOBS_STORE")}
    return {**environ, "PYTHONPATH": str(ROOT), **(env or {})}


def agentspec(cwd: Path, *args: str, env: dict[str, str] | None = None,
              timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentspec", *args], cwd=cwd,
                          env=_environ(env), capture_output=True, text=True, timeout=timeout,
                          check=False)


def start_worker(cwd: Path, *args: str, env: dict[str, str] | None = None
                 ) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "agentspec", "worker", *args], cwd=cwd,
                            env=_environ(env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_for(check: Any, timeout: float = 60, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


# the shipped deal desk -----------------------------------------------------------------------


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    for name in ("offline_jobs.yaml", "deal_tools", "scenarios"):
        source = ROOT / "specs" / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, tmp_path / name)
    return tmp_path


def _session_events(database: Path) -> list[Any]:
    from google.adk.sessions.sqlite_session_service import SqliteSessionService

    async def main() -> Any:
        return await SqliteSessionService(str(database)).get_session(
            app_name="deal_desk", user_id="user", session_id="default")

    session = asyncio.run(main())
    assert session is not None
    return session


def test_the_deal_desk_queues_answers_at_once_and_gets_the_score_later(desk: Path) -> None:
    session = f"sqlite:///{desk / 'sessions.db'}"
    first = agentspec(desk, "run", "offline_jobs.yaml", "--script",
                      "scenarios/offline_jobs.yaml", "--session", session)
    assert first.returncode == 0, first.stderr
    assert "'status': 'QUEUED'" in first.stdout  # the delegation answered at once
    assert "[deal_assistant] Scoring D-1005 runs in the background" in first.stdout
    assert "[deal_assistant] D-1005 (Tailspin Air" in first.stdout  # the chat went on
    store = open_store(f"sqlite:///{desk / '.agentspec' / 'jobs.db'}")
    [job] = store.recent()
    assert (job.agent, job.status, json.loads(job.input)) == ("scorer", "QUEUED",
                                                              {"deal_id": "D-1005"})

    worker = agentspec(desk, "worker", "offline_jobs.yaml", "--until-idle", "--script",
                       "scenarios/offline_jobs.worker.yaml")
    assert worker.returncode == 0, worker.stderr
    assert "(1 done, 0 failed)" in worker.stdout
    done = store.get(job.id)
    assert done is not None and done.status == "DONE" and done.result["score"] == 72

    after = agentspec(desk, "run", "offline_jobs.yaml", "Any news on the score?", "--script",
                      "scenarios/offline_jobs.after.yaml", "--session", session)
    assert after.returncode == 0, after.stderr
    lines = after.stdout.splitlines()
    assert lines[0] == "you> Any news on the score?"
    assert lines[1].startswith(f"[scorer] [background job {job.id}: ")  # before the answer
    assert '"score": 72' in lines[2]
    assert lines[-1] == "[deal_assistant] D-1005 scored 72 (at risk); rebook the decision " \
                        "meeting this week."
    stored = _session_events(desk / "sessions.db")
    delivered = [e for e in stored.events if (e.custom_metadata or {}).get("agentspec_job")]
    assert len(delivered) == 1 and delivered[0].author == "scorer"
    assert stored.state["deal_score"]["band"] == "at_risk"  # the scorer's output_key
    # the assistant's next request had the score in it, before the user's question
    contents = [e for e in stored.events if e.author in ("scorer", "user")]
    assert contents[-2].author == "scorer" and contents[-1].author == "user"
    again = agentspec(desk, "run", "offline_jobs.yaml", "And now?", "--script",
                      "scenarios/offline_jobs.after.yaml", "--session", session)
    assert again.returncode == 0 and "[scorer]" not in again.stdout  # delivered once
    listed = agentspec(desk, "jobs", "--spec", "offline_jobs.yaml", "--json", "list")
    assert json.loads(listed.stdout)[0]["delivered_at"] is not None


# crashes and concurrency ---------------------------------------------------------------------

def _project(tmp_path: Path, jobs: int, lease_seconds: int = 5) -> Path:
    offline_project(tmp_path, jobs_fields=f"  lease_seconds: {lease_seconds}\n")
    replies = [{"call": "crunch"}, {"text": "crunched"}] * jobs
    (tmp_path / "worker.yaml").write_text(json.dumps({"replies": {"cruncher": replies}}))
    return tmp_path


def _enqueue(url: str, count: int, **more: Any) -> list[str]:
    store = open_store(url)
    ids = [store.enqueue(spec_job_request(agent="cruncher", input=f"job {i}", app_name="crunch",
                                          user_id="user", session_id="s", **more))[0].id
           for i in range(count)]
    store.close()
    return ids


FAILING = """\
    agentspec: 1
    name: office
    root: lead
    tools:
      fetch: {python: "office_tools:fetch"}
    agents:
      lead:
        model: gemini-2.5-flash
        instruction: Delegate reports.
        task: {agents: [reporter]}
      reporter:
        description: Writes long reports.
        model: gemini-2.5-flash
        instruction: Write the report.
        execution_mode: offline
        tools: [fetch]
        tool_errors: raise
    jobs:
      store: "sqlite:///jobs.db"
    """


def test_a_failed_job_is_reported_once_without_tracebacks(tmp_path: Path) -> None:
    """The job's row and the worker's line report the failure; ADK's loggers would print
    three tracebacks of it per attempt (node, root, runner) on the worker's output."""
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(FAILING))
    (tmp_path / "office_tools.py").write_text(
        'def fetch(q: str) -> str:\n    """Fetch."""\n'
        '    raise RuntimeError("the source is down")\n')
    (tmp_path / "worker.yaml").write_text("replies:\n  reporter:\n"
                                          "    - {call: fetch, args: {q: Q3}}\n")
    store = open_store(f"sqlite:///{tmp_path / 'jobs.db'}")
    job, _ = store.enqueue(spec_job_request(agent="reporter", input="Q3", app_name="office",
                                      user_id="user", session_id="s", max_attempts=1))
    worker = agentspec(tmp_path, "worker", "spec.yaml", "--until-idle", "--script",
                       "worker.yaml")
    output = worker.stdout + worker.stderr
    assert worker.returncode == 0, output
    assert "Traceback" not in output, output
    [failed] = [line for line in worker.stdout.splitlines() if line.lstrip().startswith("failed")]
    assert "`fetch` (office_tools.py:3)" in failed and "the source is down" in failed, output
    ended = store.get(job.id)
    assert ended is not None and ended.status == "FAILED" and "the source is down" in str(
        ended.error)
    store.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_worker_killed_mid_job_loses_nothing(backend: str, tmp_path: Path) -> None:
    url = _url(backend, tmp_path)
    project = _project(tmp_path, 2)
    [job_id] = _enqueue(url, 1)
    env = {"JOBS_URL": url, "CRUNCH_LOG": str(tmp_path / "crunch.log"), "CRUNCH_HANG": "crunch"}
    first = start_worker(project, "spec.yaml", "--script", "worker.yaml", env=env)
    store = open_store(url)
    try:
        wait_for(lambda: (tmp_path / "crunch.log").exists(), what="the first worker to start")
        running = store.get(job_id)
        assert running is not None and running.status == "RUNNING"
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        second = agentspec(project, "worker", "spec.yaml", "--until-idle", "--script",
                           "worker.yaml", env=env, timeout=120)
        assert second.returncode == 0, second.stderr
        done = store.get(job_id)
        assert done is not None and done.status == "DONE" and done.attempts == 2
        assert done.lease_owner is None and done.result == "crunched"
        assert len(store.undelivered("crunch", "user", "s")) == 1  # one result to deliver
        assert store.mark_delivered(job_id) and not store.mark_delivered(job_id)
    finally:
        first.kill()
        store.close()


def _url(backend: str, tmp_path: Path) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    if POSTGRES is None:
        pytest.skip("AGENTSPEC_TEST_POSTGRES_URL is not set (.ci/run starts a server)")
    from tests.test_job_store import _fresh_postgres

    return _fresh_postgres()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_four_workers_run_two_hundred_jobs_exactly_once(backend: str, tmp_path: Path) -> None:
    url = _url(backend, tmp_path)
    jobs = 200
    # a lease long enough that a loaded machine cannot let one expire: expiry is not what
    # this test is about, and a job run twice after one is right, not a failure
    project = _project(tmp_path, jobs, lease_seconds=120)
    ids = _enqueue(url, jobs)
    env = {"JOBS_URL": url, "CRUNCH_LOG": str(tmp_path / "crunch.log")}
    workers = [start_worker(project, "spec.yaml", "--until-idle", "--quiet", "--script",
                            "worker.yaml", env=env) for _ in range(4)]
    try:
        for worker in workers:
            _, err = worker.communicate(timeout=300)
            assert worker.returncode == 0, err
    finally:
        for worker in workers:
            worker.kill()
    store = open_store(url)
    finished = [store.get(i) for i in ids]
    store.close()
    assert all(j is not None and j.status == "DONE" and j.attempts == 1 for j in finished)
    runs = tool_runs(tmp_path / "crunch.log")
    assert len(runs) == jobs  # each job's tool ran exactly once
    assert len({pid for _, pid in runs}) > 1  # the work was shared between processes


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_sync_tool_that_blocks_past_the_lease_keeps_its_job(backend: str,
                                                              tmp_path: Path) -> None:
    """Issue 12, item 4: ADK runs sync tools on the event loop. While one blocks, the lease
    is still renewed (from a thread), so a second live worker never takes the job. The tool
    is released only once the second worker has been polling for two leases (5 s each)
    after the first lease would have run out: no luck with clocks decides the outcome."""
    url = _url(backend, tmp_path)
    project = _project(tmp_path, 1)
    [job_id] = _enqueue(url, 1)
    log, go = tmp_path / "crunch.log", tmp_path / "go"
    env = {"JOBS_URL": url, "CRUNCH_LOG": str(log), "CRUNCH_GO": str(go)}
    args = ("spec.yaml", "--until-idle", "--script", "worker.yaml")
    first = start_worker(project, *args, env=env)
    second = None
    store = open_store(url)
    try:
        wait_for(log.exists, what="the first worker's tool to start")
        second = start_worker(project, *args, env=env)
        assert second.stdout is not None
        banner = second.stdout.readline()  # printed once its agents are built
        assert banner.startswith("worker "), banner
        polling_since = time.time()

        def still_held() -> bool:
            job = store.get(job_id)
            assert job is not None and job.attempts == 1, job  # nobody else claimed it
            assert tool_runs(log) == [("crunch", first.pid)]  # the tool ran once
            return time.time() > polling_since + 2 * 5 + 1

        wait_for(still_held, timeout=120, what="two leases to pass")
        go.touch()
        for worker in (first, second):
            _, err = worker.communicate(timeout=120)
            assert worker.returncode == 0, err
        done = store.get(job_id)
        assert done is not None and (done.status, done.attempts) == ("DONE", 1)
        assert tool_runs(log) == [("crunch", first.pid)]
    finally:
        go.touch()
        for worker in (first, second):
            if worker is not None:
                worker.kill()
        store.close()


def test_an_approval_in_a_job_on_sqlite_fails_the_job_saying_why(tmp_path: Path) -> None:
    """Only a temporal:// store waits for a person inside a job; on SQLite the paused run
    fails the job with a reason that names the approval, not "finished without an answer"."""
    project = offline_project(tmp_path, tools=("step_one", "step_two"), agent_fields=(
        "    interrupt_on: {step_two: true}\n"))
    (tmp_path / "worker.yaml").write_text(json.dumps({"replies": {"cruncher": [
        {"call": "step_one"}, {"call": "step_two"}]}}))
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    [job_id] = _enqueue(url, 1, max_attempts=1)
    env = {"JOBS_URL": url, "CRUNCH_LOG": str(tmp_path / "crunch.log")}
    worker = agentspec(project, "worker", "spec.yaml", "--until-idle", "--script", "worker.yaml",
                       env=env)
    assert worker.returncode == 0, worker.stderr
    store = open_store(url)
    failed = store.get(job_id)
    store.close()
    assert failed is not None and failed.status == "FAILED", failed
    assert "asked for a person's approval of `step_two`" in str(failed.error)
    assert "temporal://" in str(failed.error)
    assert [name for name, _ in tool_runs(tmp_path / "crunch.log")] == ["step_one"]
