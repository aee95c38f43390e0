"""The spec's `state:` on every surface, and a `{key}` the session lacks as a plain error.

The agents answer through a `before_model` callback that returns the system instruction the
model would see, so each surface shows what the spec's initial state made of it: in memory,
the generated package through ADK's AgentLoader, `agentspec run`, `agentspec test`,
`adk api_server` (sessions made by ADK, without the state) and a worker running a job.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from agentspec.cli import cli
from agentspec.compiler import build_objects, compile_spec, emit_package, write_package
from tests.buildkit import package_loader, purge
from tests.spec_defaults import spec_job_request

ECHO = '''\
from google.adk.models import LlmResponse
from google.genai import types


def instruction(callback_context, llm_request):
    """Answers with the system instruction, instead of a model."""
    text = llm_request.config.system_instruction
    text = text if isinstance(text, str) else "".join(p.text or "" for p in text.parts)
    own = text.split("\\n\\n")[0]  # ADK appends the agent's identity after a blank line
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=own)]))
'''

SPEC = """\
agentspec: 1
name: explainer
state:
  topic: tides
  user:language: English
  facts: {depth: 2, tags: [moon]}
  secret: "${env.EXPLAINER_SECRET:-none}"
agents:
  main:
    model: gemini-2.5-flash
    instruction: "Explain {topic} in {user:language}; facts {facts}; key {secret}."
    callbacks: {before_model: [echo:instruction]}
"""
SEEDED = "Explain tides in English; facts {'depth': 2, 'tags': ['moon']}; key none."

#: validates (`notes` is written), yet `first` runs before `second` writes it
LATE = """\
agentspec: 1
name: late
agents:
  flow:
    kind: sequential
    sub_agents: [first, second]
  first:
    model: gemini-2.5-flash
    instruction: "Summarise {notes}."
    callbacks: {before_model: [echo:instruction]}
  second:
    model: gemini-2.5-flash
    instruction: Take notes.
    output_key: notes
    callbacks: {before_model: [echo:instruction]}
"""
LATE_ERROR = "agent `first`'s instruction uses `{notes}`, but the session state has no `notes`"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory with the echo callback; the working directory; no model key needed."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GOOGLE_API_KEY", "not-used")  # the callback answers, never a model
    monkeypatch.delenv("EXPLAINER_SECRET", raising=False)
    (tmp_path / "echo.py").write_text(ECHO)
    purge("echo")
    yield tmp_path
    purge("echo")


def write(project: Path, text: str, name: str = "spec.yaml") -> Path:
    path = project / name
    path.write_text(textwrap.dedent(text))
    return path


def app_of(path: Path) -> Any:
    compiled = compile_spec(path, environ={})
    assert compiled.ok, compiled.diagnostics
    app, problems = build_objects(compiled)
    assert problems == []
    return app


def converse(app: Any, *, state: dict[str, Any] | None = None, session_service: Any = None,
             session_id: str | None = None) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """One turn; the (author, text) answers and the session's state afterwards."""
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    async def main() -> tuple[list[tuple[str, str]], dict[str, Any]]:
        runner = Runner(app=app, session_service=session_service or InMemorySessionService())
        try:
            found = None if session_id is None else await runner.session_service.get_session(
                app_name=app.name, user_id="u", session_id=session_id)
            session = found or await runner.session_service.create_session(
                app_name=app.name, user_id="u", state=state, session_id=session_id)
            said = []
            message = types.Content(role="user", parts=[types.Part(text="Hi")])
            async for event in runner.run_async(user_id="u", session_id=session.id,
                                                new_message=message):
                said += [(event.author, p.text) for p in (event.content.parts if event.content
                                                          else None) or [] if p.text]
            stored = await runner.session_service.get_session(
                app_name=app.name, user_id="u", session_id=session.id)
        finally:
            await runner.close()
        assert stored is not None
        return said, dict(stored.state)

    return asyncio.run(main())


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name="agentspec")


# --- in memory ------------------------------------------------------------------------------


def test_a_session_starts_with_the_initial_state(project: Path) -> None:
    app = app_of(write(project, SPEC))
    said, state = converse(app)
    assert said == [("main", SEEDED)]
    assert {k: state[k] for k in ("topic", "user:language", "facts", "secret")} == {
        "topic": "tides", "user:language": "English",
        "facts": {"depth": 2, "tags": ["moon"]}, "secret": "none"}
    said, _ = converse(app)  # every new session, not only the first
    assert said == [("main", SEEDED)]


def test_what_the_session_already_has_wins_key_by_key(project: Path) -> None:
    app = app_of(write(project, SPEC))
    said, state = converse(app, state={"topic": "winds", "facts": None})
    assert said == [("main", "Explain winds in English; facts ; key none.")]
    assert state["topic"] == "winds" and state["facts"] is None


def test_the_state_is_applied_once_and_kept_across_turns(project: Path, tmp_path: Path) -> None:
    """A key an agent changed is not reset on the next turn; a session stored on disk keeps
    its state, and a key the spec gains later reaches it on its next run."""
    from google.adk.sessions.sqlite_session_service import SqliteSessionService

    app = app_of(write(project, SPEC))
    sessions = SqliteSessionService(str(tmp_path / "sessions.db"))
    converse(app, session_service=sessions, session_id="s1")
    plugin = next(p for p in app.plugins if p.name == "agentspec_initial_state")
    plugin.state["topic"] = "changed in the spec"
    plugin.state["added"] = 1
    _, state = converse(app, session_service=sessions, session_id="s1")
    assert state["topic"] == "tides" and state["added"] == 1


def test_sessions_never_share_a_value() -> None:
    from agentspec.runtime.state import InitialState

    plugin = InitialState({"tags": ["moon"]})
    first, second = plugin.missing({}), plugin.missing({})
    first["tags"].append("sun")
    assert second["tags"] == ["moon"] and plugin.state["tags"] == ["moon"]


def test_env_values_are_read_when_the_app_loads_never_written(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXPLAINER_SECRET", "s3cret")
    path = write(project, SPEC)
    said, _ = converse(app_of(path))
    assert said == [("main", SEEDED.replace("none", "s3cret"))]
    compiled = compile_spec(path, environ={"EXPLAINER_SECRET": "s3cret"})
    files = emit_package(compiled, project / "out")
    source = files[next(p for p in files if p.name == "agent.py")]
    assert "s3cret" not in source and "expand('${env.EXPLAINER_SECRET:-none}')" in source


# --- the generated package, through ADK's loader --------------------------------------------


@pytest.fixture
def loader(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    with package_loader(monkeypatch) as load:
        yield load


def generated(path: Path, out: Path, load: Any) -> Any:
    compiled = compile_spec(path, environ={})
    assert compiled.plan is not None
    assert write_package(emit_package(compiled, out), out) == []
    return load(out, compiled.plan.app_name)


def test_the_generated_package_seeds_the_state_too(project: Path, loader: Any) -> None:
    app = generated(write(project, SPEC), project / "out", loader)
    said, state = converse(app)
    assert said == [("main", SEEDED)] and state["topic"] == "tides"


# --- adk api_server / adk web: sessions made by ADK ------------------------------------------


def api_server(out: Path) -> Any:
    from fastapi.testclient import TestClient
    from google.adk.cli.fast_api import get_fast_api_app

    return TestClient(get_fast_api_app(agents_dir=str(out), web=False,
                                       use_local_storage=False))


def run_sse(client: Any, app: str, session: str) -> list[dict[str, Any]]:
    response = client.post("/run_sse", json={
        "app_name": app, "user_id": "u", "session_id": session,
        "new_message": {"role": "user", "parts": [{"text": "Hi"}]}})
    assert response.status_code == 200, response.text
    return [json.loads(line.removeprefix("data: ")) for line in response.text.splitlines()
            if line.startswith("data: ")]


@pytest.mark.filterwarnings("ignore:.*EXPERIMENTAL.*:UserWarning")
def test_adk_api_server_sessions_start_with_the_state(project: Path, loader: Any) -> None:
    generated(write(project, SPEC), project / "out", loader)  # built and importable
    with api_server(project / "out") as client:
        made = client.post("/apps/explainer/users/u/sessions", json={})
        assert made.status_code == 200, made.text
        session = made.json()["id"]
        assert "topic" not in made.json()["state"]  # ADK made it without the spec's state
        events = run_sse(client, "explainer", session)
        texts = [p["text"] for e in events for p in (e.get("content") or {}).get("parts", [])
                 if p.get("text")]
        assert texts == [SEEDED]
        stored = client.get(f"/apps/explainer/users/u/sessions/{session}").json()
        assert stored["state"]["topic"] == "tides"


@pytest.mark.filterwarnings("ignore:.*EXPERIMENTAL.*:UserWarning")
def test_adk_api_server_shows_a_missing_key_as_the_plain_error(
        project: Path, loader: Any) -> None:
    generated(write(project, LATE), project / "out", loader)
    with api_server(project / "out") as client:
        session = client.post("/apps/late/users/u/sessions", json={}).json()["id"]
        errors = [e["error"] for e in run_sse(client, "late", session) if "error" in e]
        assert len(errors) == 1 and LATE_ERROR in errors[0], errors
        assert errors[0].startswith("PlaceholderError: ")


# --- agentspec run and agentspec test ---------------------------------------------------------


def test_agentspec_run_starts_with_the_state(project: Path) -> None:
    write(project, SPEC)
    result = invoke("run", "spec.yaml", "Hi")
    assert result.exit_code == 0, result.output
    assert f"[main] {SEEDED}" in result.output


def test_agentspec_run_reports_a_missing_key_as_the_user_error(project: Path) -> None:
    write(project, LATE)
    result = invoke("run", "spec.yaml", "Hi")
    assert result.exit_code == 1, result.output
    assert f"agentspec: the run failed: {LATE_ERROR}" in result.output
    assert "`{notes?}`" in result.output and "`state:`" in result.output
    assert "output_key: notes" in result.output
    assert "Traceback" not in result.output and "internal error" not in result.output


@pytest.mark.slow
def test_agentspec_run_with_an_llm_root_shows_no_traceback(project: Path) -> None:
    """ADK logs the failure of a root LLM agent with its traceback before raising it; the
    command reports it once, plainly (in a process of its own: pytest captures logging)."""
    write(project, """\
        agentspec: 1
        name: late
        agents:
          first:
            model: gemini-2.5-flash
            instruction: "Summarise {notes}."
            sub_agents: [second]
            callbacks: {before_model: [echo:instruction]}
          second:
            description: Takes notes.
            model: gemini-2.5-flash
            instruction: Take notes.
            output_key: notes
        """)
    done = subprocess.run([sys.executable, "-m", "agentspec", "run", "spec.yaml", "Hi"],
                          cwd=project, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "GOOGLE_API_KEY": "not-used"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"agentspec: the run failed: {LATE_ERROR}" in done.stderr
    assert "Traceback" not in done.stdout + done.stderr


def test_agentspec_test_scenario_state_overrides_the_spec_per_key(project: Path) -> None:
    write(project, SPEC)
    (project / "scenarios").mkdir()
    (project / "scenarios" / "spec.yaml").write_text(textwrap.dedent("""\
        scenarios:
          - name: the spec's state
            messages: [Hi]
            replies: {}
            expect: {final: {contains: "Explain tides in English"}}
          - name: the scenario's state wins where it has a key
            state: {topic: winds}
            messages: [Hi]
            replies: {}
            expect:
              final: {contains: "Explain winds in English"}
              state: {topic: winds, "user:language": English}
        """))
    result = invoke("test", "spec.yaml")
    assert result.exit_code == 0, result.output
    assert "2 passed" in result.output


def test_agentspec_test_fails_a_scenario_on_a_missing_key(project: Path) -> None:
    write(project, LATE)
    (project / "scenarios").mkdir()
    (project / "scenarios" / "spec.yaml").write_text("messages: [Hi]\nreplies: {}\n")
    result = invoke("test", "spec.yaml")
    assert result.exit_code == 1, result.output
    assert "FAILED" in result.output and LATE_ERROR in result.output


# --- a worker running a background job ---------------------------------------------------------

OFFLINE = SPEC + """\
    task: {agents: [scribe]}
  scribe:
    description: Writes it down later.
    model: gemini-2.5-flash
    instruction: "Write about {topic} in {user:language}."
    execution_mode: offline
    callbacks: {before_model: [echo:instruction]}
"""


def test_a_worker_runs_a_job_with_the_initial_state(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentspec.runtime.jobs.stores import open_store

    url = f"sqlite:///{project / 'jobs.db'}"
    monkeypatch.setenv("AGENTSPEC_JOBS_STORE", url)
    write(project, OFFLINE)
    store = open_store(url)
    job, _ = store.enqueue(spec_job_request(agent="scribe", input="Write it.", app_name="explainer",
                                      user_id="u", session_id="s"))
    store.close()
    result = invoke("worker", "spec.yaml", "--until-idle")
    assert result.exit_code == 0, result.output
    finished = open_store(url).get(job.id)
    assert finished is not None and finished.status == "DONE", finished
    assert finished.result == "Write about tides in English."
