"""The scale-out recipe (docs/guides/scale-out.md) as processes on loopback: two
`adk api_server` front ends on the built package, two `agentspec worker`s, conversations in
PostgreSQL, jobs on a Temporal dev server, the model behind the fake Gemini server.
Conversations start on both front ends; each queues a job (`on_done: resume`); a worker is
killed while jobs run and started again. Every job ends DONE as one workflow, its tool runs
once (or twice, when it was the call in flight in the killed worker), and every
conversation, with its resumed turn, reads the same from either front end.

CONVERSATIONS is 20 (10 per front end) by default, not the issue's 100: with two front
ends, two workers, PostgreSQL and Temporal on a 2-core machine shared by the whole suite, 20
keep the test near a minute. AGENTSPEC_SCALE_OUT_CONVERSATIONS=100 runs the issue's number
(passed in 7 min 38 s wall on 2 cores under a load average of 11-15: too long for CI)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from agentspec.cli import cli
from agentspec.runtime.jobs.stores import open_store
from tests.buildkit import free_port, served
from tests.fakegemini.server import FakeGemini, serve
from tests.temporalserver import task_queue_url, temporal_address
from tests.test_jobs import POSTGRES, start_worker, wait_for

pytest.importorskip("temporalio", reason="the `temporal` extra is not installed")
pytestmark = pytest.mark.slow

CONVERSATIONS = int(os.environ.get("AGENTSPEC_SCALE_OUT_CONVERSATIONS", "20"))

SPEC = """\
    agentspec: 1
    name: fleet
    root: lead
    agents:
      lead:
        model: gemini-2.5-flash
        instruction: Queue the crunching, and report when it is done.
        tools: [{agent: cruncher}]
      cruncher:
        description: Crunches numbers.
        model: gemini-2.5-flash
        instruction: Crunch.
        execution_mode: offline
        tools: [{python: fleet_tools:crunch}]
    jobs:
      store: "${env.JOBS_URL}"
      on_done: resume
    sessions: "${env.SESSIONS_URL}"
    """
TOOLS = '''\
import os, time
from pathlib import Path


def crunch() -> dict:
    """Crunches (slowly enough that a worker is killed while some run)."""
    with Path(os.environ["CRUNCH_LOG"]).open("a") as log:
        log.write(f"{os.getpid()}\\n")
    time.sleep(0.5)
    return {"crunched": True}
'''


def _script(count: int) -> dict[str, list[Any]]:
    """Answered by what each conversation holds, so any order of requests works."""
    lead = [{"when": "[background job", "text": "The crunching is done."},
            {"when": "QUEUED", "text": "Queued."},
            {"call": "cruncher", "args": {"request": "crunch"}}]
    cruncher = [{"when": '"crunched": true', "text": "crunched"}, {"call": "crunch"}]
    return {"lead": lead * count * 2, "cruncher": cruncher * count * 2}


@contextlib.contextmanager
def _front_end(package_dir: Path, sessions: str, env: dict[str, str],
               log: Path) -> Iterator[str]:
    port = free_port()
    command = [str(Path(sys.executable).parent / "adk"), "api_server", "--host", "127.0.0.1",
               "--port", str(port), "--session_service_uri", sessions, str(package_dir)]
    url = f"http://127.0.0.1:{port}"
    environ = {k: v for k, v in os.environ.items() if k not in (
        "AGENTSPEC_JOBS_STORE", "GEMINI_API_KEY")}  # the spec's store, the fake's model
    with served("adk api_server", command, ready=f"{url}/list-apps", log=log,
                env={**environ, **env}):
        yield url


def _converse(url: str, session: str) -> list[str]:
    with httpx.Client(base_url=url, timeout=300) as client:
        made = client.post(f"/apps/fleet/users/u/sessions/{session}", json={})
        assert made.status_code == 200, made.text
        ran = client.post("/run", json={"app_name": "fleet", "user_id": "u",
                                        "session_id": session, "new_message": {
                                            "role": "user", "parts": [{"text": "Crunch"}]}})
        assert ran.status_code == 200, ran.text
        return [p.get("text") or str(p.get("functionResponse") or p.get("functionCall"))
                for e in ran.json() for p in (e.get("content") or {}).get("parts", [])]


def _read(url: str, session: str) -> list[tuple[str, str]]:
    got = httpx.get(f"{url}/apps/fleet/users/u/sessions/{session}", timeout=60)
    assert got.status_code == 200, got.text
    said = []
    for event in got.json()["events"]:
        for part in (event.get("content") or {}).get("parts", []):
            said.append((event["author"], part.get("text") or
                         ("call" if part.get("functionCall") else "answer")))
    return said


def test_two_front_ends_two_workers_postgres_and_temporal(tmp_path: Path) -> None:
    if POSTGRES is None:
        pytest.skip("AGENTSPEC_TEST_POSTGRES_URL is not set (.ci/run starts a server)")
    from tests.test_job_store import _fresh_postgres

    (tmp_path / "spec.yaml").write_text(textwrap.dedent(SPEC))
    (tmp_path / "fleet_tools.py").write_text(TOOLS)
    sessions = _fresh_postgres()
    adk_sessions = sessions.replace("postgresql://", "postgresql+psycopg://", 1)
    log = tmp_path / "crunch.log"
    with temporal_address(tmp_path) as address, \
            serve(FakeGemini(replies=_script(CONVERSATIONS))) as fake:
        jobs = task_queue_url(address)
        env = {"JOBS_URL": jobs, "SESSIONS_URL": sessions, "CRUNCH_LOG": str(log),
               "GOOGLE_GEMINI_BASE_URL": fake.url, "GOOGLE_API_KEY": "fake-key",
               "ADK_DISABLE_LOAD_DOTENV": "1", "HOME": str(tmp_path),
               "PYTHONPATH": str(tmp_path)}
        built = CliRunner(env=env).invoke(cli, ["build", str(tmp_path / "spec.yaml"), "-o",
                                                str(tmp_path / "out")])
        assert built.exit_code == 0, built.output
        workers = [start_worker(tmp_path, "spec.yaml", "--quiet", env=env) for _ in range(2)]
        try:
            with _front_end(tmp_path / "out", adk_sessions, env, tmp_path / "a.log") as one, \
                    _front_end(tmp_path / "out", adk_sessions, env, tmp_path / "b.log") as two:
                fronts = [one, two]
                # ADK's database sessions create their tables on first use, and two front
                # ends doing that at once on an empty database race (UniqueViolation): the
                # guide says to start one first, as here
                for front in fronts:
                    assert httpx.post(f"{front}/apps/fleet/users/u/sessions/warm-{front[-5:]}",
                                      json={}, timeout=60).status_code == 200
                ids = [f"c{n}" for n in range(CONVERSATIONS)]
                with ThreadPoolExecutor(8) as pool:
                    said = list(pool.map(lambda n: _converse(fronts[n % 2], ids[n]),
                                         range(CONVERSATIONS)))
                assert all("Queued." in texts for texts in said), said
                # a worker dies while jobs run, and another one starts in its place
                store = open_store(jobs)
                try:
                    wait_for(lambda: log.exists() and len(log.read_text().split()) >= 2,
                             timeout=120, what="jobs to run")
                except AssertionError:
                    raise AssertionError(([(j.status, j.attempts, j.error) for j in
                                           store.recent()], said)) from None
                workers[0].send_signal(signal.SIGKILL)
                workers[0].wait(timeout=30)
                workers[0] = start_worker(tmp_path, "spec.yaml", "--quiet", env=env)
                done = wait_for(lambda: len(found := [j for j in store.recent(
                    limit=CONVERSATIONS * 2) if j.resumed_at is not None]) >= CONVERSATIONS
                    and found, timeout=600, what="every job done and resumed")
                every = store.recent(limit=CONVERSATIONS * 2)
                assert len(every) == CONVERSATIONS  # one job per conversation, no more
                assert {j.session_id for j in done} == set(ids)
                assert all(j.status == "DONE" and j.result == "crunched" for j in every)
                runs = log.read_text().split()
                # each tool call ran once; only a call in flight in the killed worker twice
                assert CONVERSATIONS <= len(runs) <= CONVERSATIONS + 1, len(runs)
                for session in ids:
                    seen = [_read(front, session) for front in fronts]
                    assert seen[0] == seen[1]
                    assert seen[0][-1] == ("lead", "The crunching is done."), seen[0]
                    assert sum(1 for who, what in seen[0] if what.startswith(
                        "[background job")) == 1
                store.close()
        finally:
            for worker in workers:
                worker.send_signal(signal.SIGTERM)
            for n, worker in enumerate(workers):
                with contextlib.suppress(subprocess.TimeoutExpired):
                    _, err = worker.communicate(timeout=60)
                    (tmp_path / f"worker{n}.err").write_text(err)
                worker.kill()
        assert not fake.violations and not fake.script_problems, fake.script_problems
