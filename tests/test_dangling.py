"""Dangling function calls: a session left with a call and no response (a crash, an
interrupted run) gets a "cancelled" response before the next model call, instead of ADK
dropping the call with a log line. Checked on the first model request of the next turn, in
memory and through the generated package."""

from __future__ import annotations

import asyncio
import logging
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentspec.compiler import build_objects, compile_spec, emit_package, write_package
from agentspec.runtime.dangling import CANCELLED, PatchDanglingCalls, dangling_calls
from agentspec.testing.scripted import install_script
from tests.buildkit import package_loader

SPEC = """\
    agentspec: 1
    name: patch_app
    agents:
      helper:
        model: gemini-2.5-flash
        instruction: Answer briefly.
    """


def _app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, through: str) -> Any:
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(SPEC))
    compiled = compile_spec(path, environ={})
    assert compiled.ok, compiled.diagnostics
    if through == "memory":
        app, problems = build_objects(compiled)
        assert problems == []
        return app
    out = tmp_path / "out"
    assert write_package(emit_package(compiled, out), out) == []
    with package_loader(monkeypatch) as load:
        return load(out, "patch_app")


def _event(author: str, role: str, *parts: Any, long_running: set[str] | None = None) -> Any:
    from google.adk.events import Event
    from google.genai import types

    return Event(invocation_id="earlier", author=author, long_running_tool_ids=long_running,
                 content=types.Content(role=role, parts=list(parts)))


def _call(call_id: str, name: str) -> Any:
    from google.genai import types

    return types.Part(function_call=types.FunctionCall(id=call_id, name=name, args={"q": "x"}))


async def _resume(app: Any, seeded: list[Any], text: str) -> tuple[list[Any], list[Any]]:
    """Seed a session with `seeded`, send `text`; (first model request's contents, the
    session's events afterwards)."""
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    models = install_script(app.root_agent, {"helper": [{"text": "It was cancelled."}]})
    runner = InMemoryRunner(app=app)
    try:
        session = await runner.session_service.create_session(app_name=app.name, user_id="u")
        for event in seeded:
            await runner.session_service.append_event(session, event)
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(user_id="u", session_id=session.id,
                                        new_message=message):
            pass
        stored = await runner.session_service.get_session(app_name=app.name, user_id="u",
                                                          session_id=session.id)
    finally:
        await runner.close()
    assert stored is not None
    return list(models["helper"].requests[0].contents), list(stored.events)


def _plain(contents: list[Any]) -> list[dict[str, Any]]:
    return [content.model_dump(mode="json", exclude_none=True) for content in contents]


@pytest.mark.parametrize("through", ["memory", "package"])
def test_a_dangling_call_is_answered_before_the_next_model_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        through: str, snapshot: Any) -> None:
    from google.genai import types

    app = _app(tmp_path, monkeypatch, through)
    assert any(isinstance(p, PatchDanglingCalls) for p in app.plugins)
    seeded = [_event("user", "user", types.Part(text="Look up x and y.")),
              _event("helper", "model", types.Part(text="Looking."), _call("call-1", "lookup"),
                     _call("call-2", "search"))]
    with caplog.at_level(logging.WARNING):
        contents, events = asyncio.run(_resume(app, seeded, "Are you done?"))
    assert "Dropping function calls" not in caplog.text
    assert _plain(contents) == snapshot
    responses = [p.function_response for p in contents[2].parts]
    assert [(r.id, r.name) for r in responses] == [("call-1", "lookup"), ("call-2", "search")]
    assert responses[0].response == {"error": CANCELLED.format(name="lookup", id="call-1")}
    assert contents[3].parts[0].text == "Are you done?"  # the response sits by its call
    assert dangling_calls(events) == []  # stored: later requests show the same history


def test_answered_waiting_and_id_less_calls_are_left_alone() -> None:
    from google.genai import types

    answered = types.Part(function_response=types.FunctionResponse(
        id="done", name="lookup", response={"ok": True}))
    events = [
        _event("helper", "model", _call("done", "lookup"), _call("", "no_id"),
               _call("waiting", "adk_request_confirmation"), _call("lost", "search"),
               long_running={"waiting"}),
        _event("helper", "user", answered)]
    assert [call.id for _, call in dangling_calls(events)] == ["lost"]


def test_a_second_resume_adds_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from google.genai import types

    app = _app(tmp_path, monkeypatch, "memory")
    seeded = [_event("user", "user", types.Part(text="Look up x.")),
              _event("helper", "model", _call("call-1", "lookup"))]
    _, events = asyncio.run(_resume(app, seeded, "Are you done?"))
    patched = [e for e in events if e.get_function_responses()]
    assert len(patched) == 1 and patched[0].author == "helper"
    contents, again = asyncio.run(_resume(app, events, "And now?"))
    assert len([e for e in again if e.get_function_responses()]) == 1
    assert sum(1 for c in contents for p in c.parts or () if p.function_response) == 1


def test_a_message_with_function_responses_resumes_instead(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A message answering something (an approval, a client-side tool) resumes a paused run:
    the calls still open are that run's, not dangling."""
    from google.adk.events import Event
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    app = _app(tmp_path, monkeypatch, "memory")
    (plugin,) = [p for p in app.plugins if isinstance(p, PatchDanglingCalls)]
    service = InMemorySessionService()  # type: ignore[no-untyped-call]

    async def deliver(message: Any) -> list[Event]:
        session = await service.create_session(app_name="a", user_id="u")
        await service.append_event(session, _event("helper", "model", _call("c-1", "task")))
        context = type("Context", (), {"session": session, "session_service": service,
                                       "invocation_id": "now"})()
        await plugin.on_user_message_callback(invocation_context=context, user_message=message)
        return list(session.events)

    answer = types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
        id="confirmation-1", name="adk_request_confirmation", response={"confirmed": True}))])
    assert len(asyncio.run(deliver(answer))) == 1  # nothing patched
    text = types.Content(role="user", parts=[types.Part(text="Never mind.")])
    assert len(asyncio.run(deliver(text))) == 2  # the plain message cancels it
