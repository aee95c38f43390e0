"""A2A between two real processes on loopback: spec B served by `agentspec serve --a2a`, spec A
calling it as a sub-agent (transfer), as an `{agent: x}` tool and through `task`, every model
call answered by the fake Gemini API; and what A sees when B is down, not A2A, failing or
silent."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.buildkit import free_port, loopback_http, served
from tests.fakegemini import FakeGemini, serve, use_fake

pytest.importorskip("a2a", reason="the a2a extra (a2a-sdk) is not installed")

pytestmark = pytest.mark.slow  # a served agent in its own process

B_SPEC = """\
agentspec: 1
name: helper_service
description: Answers arithmetic questions.
agents:
  helper:
    description: Answers arithmetic questions in one sentence.
    model: gemini-2.5-flash
    instruction: Answer the arithmetic question.
"""

A_SPEC = """\
agentspec: 1
name: caller_app
agents:
  boss:
    description: Delegates arithmetic.
    model: gemini-2.5-flash
    instruction: Delegate arithmetic.
    sub_agents: [remote_chat]
    tools: [{{agent: remote_tool}}]
    task: {{agents: [remote_task]}}
  remote_chat: {{kind: remote, url: "{url}", timeout: 20}}
  remote_tool: {{kind: remote, url: "{url}", timeout: 20, description: Adds numbers.}}
  remote_task: {{kind: remote, url: "{url}", timeout: 20, description: Adds numbers.}}
"""

ROUTED = """\
agentspec: 1
name: routed_app
agents:
  desk:
    kind: router
    route: {{state: pick}}
    default: far
    fallback: [near]
    sub_agents: [far, near]
  far: {{kind: remote, url: "{url}", timeout: 5, description: The remote desk.}}
  near:
    description: The local desk.
    model: gemini-2.5-flash
    instruction: Answer.
"""


def _env(fake: FakeGemini) -> dict[str, str]:
    return {**os.environ, "GOOGLE_GEMINI_BASE_URL": fake.url, "GOOGLE_API_KEY": "fake-key"}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeGemini]:
    with serve(FakeGemini()) as server:
        yield server


@contextlib.contextmanager
def _served(spec: Path, fake: FakeGemini, package: str | None = None) -> Iterator[str]:
    """`agentspec serve SPEC --a2a` (or, with `package`, `uvicorn PACKAGE.agent:a2a_app` of
    the package built from SPEC) in its own process; its URL once its card answers."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    command = [str(Path(sys.executable).parent / "agentspec"), "serve", str(spec), "--a2a",
               "--port", str(port)] if package is None else [
        sys.executable, "-m", "uvicorn", f"{package}.agent:a2a_app", "--port", str(port)]
    with served("agentspec serve", command, ready=url + ".well-known/agent-card.json",
                log=spec.with_suffix(".log"), env={**_env(fake), "AGENTSPEC_A2A_URL": url},
                cwd=spec.parent):
        yield url


@pytest.fixture(scope="module")
def b_url(fake: FakeGemini, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    spec = tmp_path_factory.mktemp("b") / "b.yaml"
    spec.write_text(B_SPEC)
    with _served(spec, fake) as url:
        yield url


@pytest.fixture
def wire(fake: FakeGemini, monkeypatch: pytest.MonkeyPatch) -> FakeGemini:
    use_fake(monkeypatch, fake.url)
    fake.requests.clear()
    fake.violations.clear()
    fake.script_problems.clear()
    return fake


def _app(tmp_path: Path, text: str) -> Any:
    from agentspec.compiler import build_objects, compile_spec

    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    compiled = compile_spec(spec)
    assert compiled.ok, compiled.diagnostics
    app, problems = build_objects(compiled)
    assert not problems
    return app


def _talk(app: Any, message: str, state: dict[str, Any] | None = None) -> list[str]:
    """One turn; the texts of every event, by author."""
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    from agentspec.testing.conversation import turn

    async def go() -> list[str]:
        runner = Runner(app=app, session_service=InMemorySessionService())
        await runner.session_service.create_session(app_name=app.name, user_id="user",
                                                    session_id="s", state=state or {})
        texts: list[str] = []

        def seen(event: Any) -> None:
            for part in (event.content.parts if event.content else None) or ():
                if part.text:
                    texts.append(f"{event.author}: {part.text}")
                if part.function_response:
                    texts.append(f"{event.author} got: "
                                 f"{json.dumps(part.function_response.response, default=str)}")

        try:
            await turn(runner, "s", message, decide=lambda pending: None, on_event=seen)
        finally:
            await runner.close()
        return texts

    return asyncio.run(go())


def _helper_asked(fake: FakeGemini) -> int:
    return sum(1 for r in fake.requests if r.agent == "helper")


def test_a_served_agent_has_a_card_made_from_the_spec(b_url: str) -> None:
    card = httpx.get(b_url + ".well-known/agent-card.json", timeout=10).json()
    assert card["name"] == "helper"
    assert card["description"] == "Answers arithmetic questions in one sentence."
    assert card["defaultInputModes"] == ["text/plain"]
    assert [s["description"] for s in card["skills"]] == [card["description"]]


def test_a_remote_sub_agent_answers_after_a_transfer(b_url: str, wire: FakeGemini,
                                                      tmp_path: Path) -> None:
    wire.load({"boss": [{"transfer": "remote_chat"}], "helper": [{"text": "It is four."}]})
    texts = _talk(_app(tmp_path, A_SPEC.format(url=b_url)), "What is 2 + 2?")
    assert "remote_chat: It is four." in texts
    assert _helper_asked(wire) == 1 and not wire.script_problems + wire.violations


def test_a_built_package_serves_the_same_through_uvicorn(wire: FakeGemini,
                                                         tmp_path: Path) -> None:
    """`uvicorn helper_service.agent:a2a_app`, without agentspec's CLI."""
    spec = tmp_path / "b" / "b.yaml"
    spec.parent.mkdir()
    spec.write_text(B_SPEC)
    subprocess.run([str(Path(sys.executable).parent / "agentspec"), "build", str(spec)],
                   check=True, capture_output=True)
    with _served(spec, wire, package="helper_service") as url:
        card = httpx.get(url + ".well-known/agent-card.json", timeout=10).json()
        assert card["name"] == "helper" and url.rstrip("/") in json.dumps(card)
        wire.load({"boss": [{"transfer": "remote_chat"}], "helper": [{"text": "It is four."}]})
        texts = _talk(_app(tmp_path, A_SPEC.format(url=url)), "What is 2 + 2?")
    assert "remote_chat: It is four." in texts


def test_a_remote_agent_as_a_tool(b_url: str, wire: FakeGemini, tmp_path: Path) -> None:
    wire.load({"boss": [{"call": "remote_tool", "args": {"request": "2 + 3"}},
                        {"when": "It is five.", "text": "Done: five."}],
               "helper": [{"text": "It is five."}]})
    texts = _talk(_app(tmp_path, A_SPEC.format(url=b_url)), "What is 2 + 3?")
    assert texts[-1] == "boss: Done: five.", texts  # the remote's answer came back to it
    assert _helper_asked(wire) == 1 and not wire.script_problems + wire.violations


def test_a_remote_agent_through_task(b_url: str, wire: FakeGemini, tmp_path: Path) -> None:
    wire.load({"boss": [{"call": "task", "args": {"description": "Add 2 and 4",
                                                   "subagent_type": "remote_task"}},
                        {"when": "It is six.", "text": "Done: six."}],
               "helper": [{"text": "It is six."}]})
    texts = _talk(_app(tmp_path, A_SPEC.format(url=b_url)), "What is 2 + 4?")
    assert any("It is six." in t for t in texts if t.startswith("boss got:")), texts
    assert texts[-1] == "boss: Done: six."
    assert _helper_asked(wire) == 1 and not wire.script_problems + wire.violations


def test_a_remote_that_fails_is_an_error_naming_it(b_url: str, wire: FakeGemini,
                                                   tmp_path: Path) -> None:
    from agentspec.runtime.remote import RemoteAgentError

    wire.load({"boss": [{"transfer": "remote_chat"}], "helper": [{"fail": "overloaded"}]})
    with pytest.raises(RemoteAgentError) as failed:
        _talk(_app(tmp_path, A_SPEC.format(url=b_url)), "What is 2 + 2?")
    assert failed.value.agent == "remote_chat" and b_url in failed.value.where


def _down_url() -> str:
    return f"http://127.0.0.1:{free_port()}/"  # nothing listens there


def test_a_remote_that_is_down_is_an_error_naming_it_and_its_url(wire: FakeGemini,
                                                                 tmp_path: Path) -> None:
    from agentspec.runtime.remote import RemoteAgentError

    url = _down_url()
    wire.load({"boss": [{"transfer": "remote_chat"}]})
    with pytest.raises(RemoteAgentError) as failed:
        _talk(_app(tmp_path, A_SPEC.format(url=url)), "What is 2 + 2?")
    assert str(failed.value).startswith(f"remote agent `remote_chat` at {url}")


def test_a_router_falls_back_when_its_remote_is_down(wire: FakeGemini, tmp_path: Path) -> None:
    wire.load({"near": [{"text": "Answered here."}]})
    texts = _talk(_app(tmp_path, ROUTED.format(url=_down_url())), "Hello")
    assert texts[-1] == "near: Answered here."


@pytest.mark.parametrize(("answer", "expected"), [
    (b'{"hello": "world"}', "valid URL"), (None, "no answer within 1 s")],
    ids=["not a card", "never answers"])
def test_a_card_that_is_no_a2a_card_or_never_comes_is_an_error(
        answer: bytes | None, expected: str, wire: FakeGemini, tmp_path: Path) -> None:
    from agentspec.runtime.remote import RemoteAgentError

    wire.load({"boss": [{"transfer": "remote_chat"}]})
    spec = A_SPEC.replace("timeout: 20", "timeout: 1")
    with loopback_http(answer) as url, pytest.raises(RemoteAgentError) as failed:
        _talk(_app(tmp_path, spec.format(url=url)), "Hello")
    assert failed.value.agent == "remote_chat" and url in failed.value.where
    assert expected in failed.value.cause


FILES_SPEC = """\
agentspec: 1
name: files_service
agents:
  filer:
    description: Deletes files when asked.
    model: gemini-2.5-flash
    instruction: Delete what you are asked to.
    tools: [{python: "files_tools:delete_file"}]
    interrupt_on: {delete_file: true}
"""

FILES_TOOLS = """\
import os


def delete_file(path: str) -> dict:
    \"\"\"Deletes a file.\"\"\"
    with open(os.environ["DELETED_LOG"], "a") as log:
        log.write(path + "\\n")
    return {"deleted": path}
"""


def _send(url: str, message: dict[str, Any]) -> dict[str, Any]:
    """A2A `SendMessage` (JSON-RPC, protocol 1.0); the task it answers with."""
    answer = httpx.post(url, timeout=60, headers={"A2A-Version": "1.0"}, json={
        "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}})
    task: dict[str, Any] = answer.json()["result"]["task"]
    return task


@pytest.mark.parametrize("confirmed", [True, False], ids=["approved", "rejected"])
def test_an_approval_is_an_input_required_task_the_caller_answers(
        confirmed: bool, fake: FakeGemini, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`interrupt_on` maps to A2A's input-required state; the caller's confirmation (the
    function response ADK asked for) resumes the task, and the tool runs only if approved."""
    spec = tmp_path / "files.yaml"
    spec.write_text(FILES_SPEC)
    (tmp_path / "files_tools.py").write_text(FILES_TOOLS)
    deleted = tmp_path / "deleted.txt"
    monkeypatch.setenv("DELETED_LOG", str(deleted))  # the served process inherits it
    fake.load({"filer": [{"call": "delete_file", "args": {"path": "a.txt"}},
                         {"when": "deleted" if confirmed else "reject",
                          "text": "Done with a.txt."}]})
    with _served(spec, fake) as url:
        task = _send(url, {"messageId": "m1", "role": "ROLE_USER",
                           "parts": [{"text": "Delete a.txt"}]})
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
        asked = task["status"]["message"]["parts"][0]["data"]
        assert asked["name"] == "adk_request_confirmation"
        assert asked["args"]["originalFunctionCall"]["args"] == {"path": "a.txt"}
        assert not deleted.exists()  # nothing runs before the caller decides
        done = _send(url, {
            "messageId": "m2", "role": "ROLE_USER", "taskId": task["id"],
            "contextId": task["contextId"],
            "parts": [{"data": {"id": asked["id"], "name": "adk_request_confirmation",
                                "response": {"confirmed": confirmed}},
                       "metadata": {"adk_type": "function_response"}}]})
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
    assert "Done with a.txt." in json.dumps(done["artifacts"])
    assert (deleted.read_text() if deleted.exists() else "") == ("a.txt\n" if confirmed else "")
    assert not fake.script_problems + fake.violations


def test_a_served_conversation_is_kept_in_the_specs_session_store(fake: FakeGemini,
                                                                  tmp_path: Path) -> None:
    import sqlite3

    spec = tmp_path / "b.yaml"
    spec.write_text(B_SPEC + "sessions: sqlite:///conversations.db\n")
    fake.load({"helper": [{"text": "It is four."}, {"when": "again", "text": "Still four."}]})
    with _served(spec, fake) as url:
        first = _send(url, {"messageId": "m1", "role": "ROLE_USER",
                            "parts": [{"text": "What is 2 + 2?"}]})
        again = _send(url, {"messageId": "m2", "role": "ROLE_USER", "parts": [{"text": "again"}],
                            "contextId": first["contextId"]})
    assert again["status"]["state"] == "TASK_STATE_COMPLETED", again
    with sqlite3.connect(tmp_path / "conversations.db") as db:
        sessions = db.execute("select id from sessions where app_name = 'helper_service'"
                              ).fetchall()
        events = db.execute("select count(*) from events").fetchone()[0]
    assert len(sessions) == 1 and events >= 4  # one conversation: two messages, two answers
    assert not fake.script_problems + fake.violations
