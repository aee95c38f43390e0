"""A RUNNING job tells what its agent did last (`last_event`, `last_event_at`, `updated_at`)
in `jobs show` and `jobs list`, text and JSON, on SQLite and PostgreSQL (issue 23, item 6)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from google.adk.agents import LlmAgent

from agentspec.cli import cli
from agentspec.runtime.jobs.progress import describe
from agentspec.runtime.jobs.stores import open_store
from agentspec.runtime.jobs.worker import Worker
from agentspec.testing.scripted import ScriptedModel
from tests.spec_defaults import spec_job_request, spec_job_settings
from tests.test_job_store import POSTGRES, _fresh_postgres


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
        ) -> str:
    monkeypatch.delenv("AGENTSPEC_JOBS_STORE", raising=False)
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    if POSTGRES is None:
        pytest.skip("AGENTSPEC_TEST_POSTGRES_URL is not set (.ci/run starts a server)")
    return _fresh_postgres()


def _jobs(*args: str) -> str:
    done = CliRunner().invoke(cli, ["jobs", *args], prog_name="agentspec")
    assert done.exit_code == 0, done.output
    return done.output


def test_a_running_job_shows_its_last_event(url: str) -> None:
    store = open_store(url)
    job, _ = store.enqueue(spec_job_request(agent="digger", input="dig", session_id="s"))
    seen: dict[str, Any] = {}

    async def probe() -> dict[str, str]:
        """Looks at the job from outside while the agent is inside this tool call."""
        deadline = time.monotonic() + 60  # a hang guard, not a timing assertion
        while time.monotonic() < deadline:
            now = await asyncio.to_thread(store.get, job.id)
            if now is not None and now.last_event and "`probe`" in now.last_event:
                break
            await asyncio.sleep(0.02)  # polling the store another thread writes
        seen["job"] = now
        seen["show"] = _jobs("show", job.id, "--store", url)
        seen["show_json"] = json.loads(_jobs("show", job.id, "--store", url, "--json"))
        seen["list"] = _jobs("list", "--store", url)
        seen["list_json"] = json.loads(_jobs("list", "--store", url, "--json"))
        return {"found": "gold"}

    model = ScriptedModel(agent="digger", replies=[{"call": "probe", "args": {}},
                                                   {"text": "Found gold."}], requests=[])
    agent = LlmAgent(name="digger", model=model, instruction="Dig.", tools=[probe])
    settings = spec_job_settings(url, lease_seconds=600)  # no renewal but the event's own
    asyncio.run(asyncio.wait_for(Worker({"digger": agent}, settings).serve(
        asyncio.Event(), until_idle=True), 120))

    running = seen["job"]
    assert running.status == "RUNNING"
    assert running.last_event == "tool call `probe` by digger"
    assert running.last_event_at is not None and running.updated_at >= running.last_event_at
    assert "last_event: tool call `probe` by digger" in seen["show"]
    assert "last_event_at: " in seen["show"] and "updated_at: " in seen["show"]
    assert seen["show_json"]["last_event"] == "tool call `probe` by digger"
    assert seen["show_json"]["status"] == "RUNNING"
    header, row = seen["list"].splitlines()[:2]
    assert "UPDATED" in header and header.rstrip().endswith("LAST EVENT")
    assert row.startswith(job.id) and row.endswith("tool call `probe` by digger")
    assert seen["list_json"][0]["last_event"] == "tool call `probe` by digger"
    finished = store.get(job.id)
    assert finished is not None and finished.status == "DONE"
    assert finished.result == "Found gold."


def test_only_events_worth_telling_are_described() -> None:
    from google.adk.events.event import Event
    from google.genai import types

    def event(author: str, *parts: types.Part, partial: bool = False) -> Event:
        return Event(author=author, partial=partial,
                     content=types.Content(role="model", parts=list(parts)))

    call = types.Part(function_call=types.FunctionCall(name="search", args={}))
    answer = types.Part(function_response=types.FunctionResponse(name="search", response={}))
    assert describe(event("a", call)) == "tool call `search` by a"
    assert describe(event("a", answer)) == "tool result `search` for a"
    assert describe(event("a", types.Part(text="Hi"))) == "model reply by a"
    assert describe(event("a", types.Part(text="H"), partial=True)) is None
    assert describe(event("a", types.Part(text="hm", thought=True))) is None
    assert describe(Event(author="a")) is None


def test_a_claim_clears_the_last_attempts_event(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'jobs.db'}")
    job, _ = store.enqueue(spec_job_request(agent="a", input="x", session_id="s"))
    store.claim("w1", 30)
    assert store.heartbeat(job.id, "w1", 30, last_event="model reply by a")
    assert store.get(job.id).last_event == "model reply by a"  # type: ignore[union-attr]
    store.fail(job.id, "w1", "boom", retry_in=0)
    store.claim("w2", 30)
    again = store.get(job.id)
    assert again is not None and (again.last_event, again.last_event_at) == (None, None)
