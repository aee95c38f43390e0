"""Harness fields wired into build: `todos` and `memory`, end to end through the generated
package loaded by ADK's own loader (as `adk run` does), offline with the scripted model."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentspec.build import build_objects, compile_spec, emit_package, write_package
from agentspec.runtime.scripted import install_script
from tests.buildkit import package_loader

SPEC = """\
    agentspec: 1
    name: planner_app
    agents:
      helper:
        model: gemini-2.5-flash
        instruction: Plan your work with todos.
        todos: true
        memory: [./notes/AGENTS.md]
    """
MEMORY = '# Project notes\nAnswer as {"format": "json"} for {project_name}.\n'
REPLIES = {"helper": [
    {"call": "write_todos", "args": {"todos": [
        {"content": "Read the brief", "status": "in_progress"},
        {"content": "Write the answer", "status": "pending"}]}},
    {"text": "Planned."}]}


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "AGENTS.md").write_text(MEMORY)
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(SPEC))
    return path


async def _run(app: Any) -> tuple[dict[str, Any], str]:
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    models = install_script(app.root_agent, REPLIES)
    runner = InMemoryRunner(app=app)
    session = await runner.session_service.create_session(app_name=app.name, user_id="u")
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=types.Content(
            role="user", parts=[types.Part(text="Plan it")])):
        pass
    stored = await runner.session_service.get_session(app_name=app.name, user_id="u",
                                                      session_id=session.id)
    await runner.close()
    assert stored is not None
    return dict(stored.state), models["helper"].requests[0].config.system_instruction


def _check(state: dict[str, Any], system: str) -> None:
    assert state["agentspec:todos"] == [
        {"content": "Read the brief", "status": "in_progress"},
        {"content": "Write the answer", "status": "pending"}]
    assert MEMORY.strip() in system  # verbatim: braces untouched
    assert system.index("Plan your work with todos.") < system.index("# Project notes")


def test_todos_and_memory_in_memory(spec: Path) -> None:
    compiled = compile_spec(spec, environ={})
    assert compiled.ok, compiled.diagnostics
    app, problems = build_objects(compiled)
    assert problems == []
    _check(*asyncio.run(_run(app)))


def test_todos_and_memory_through_the_generated_package(
        spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = compile_spec(spec, environ={})
    out = tmp_path / "out"
    assert write_package(emit_package(compiled, out), out) == []
    text = (out / "planner_app" / "agent.py").read_text()
    assert "memory_callback([spec_path('notes/AGENTS.md')])" in text
    with package_loader(monkeypatch) as load:
        _check(*asyncio.run(_run(load(out, "planner_app"))))


def test_a_memory_edit_is_seen_on_the_next_call(spec: Path) -> None:
    app, _ = build_objects(compile_spec(spec, environ={}))
    (spec.parent / "notes" / "AGENTS.md").write_text("# Project notes\nNew rule.\n")
    _, system = asyncio.run(_run(app))
    assert "New rule." in system


def test_the_rest_of_the_harness_is_still_refused(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent("""\
        agentspec: 1
        name: app
        backends: {scratch: {type: state}}
        agents:
          helper: {instruction: Hi., model: gemini-2.5-flash, filesystem: scratch}
        """))
    compiled = compile_spec(path, environ={})
    assert [d.code for d in compiled.diagnostics] == ["AS401"]
