"""Harness fields wired into build: `todos` and `memory`, end to end through the generated
package loaded by ADK's own loader (as `adk run` does), offline with the scripted model."""

from __future__ import annotations

import asyncio
import importlib
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentspec.compiler import build_objects, compile_spec, emit_package, write_package
from agentspec.testing.scripted import ScriptedModel, install_script
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


@dataclass
class Turn:
    """What one scripted user turn did."""

    results: list[Any]  # the function responses, in order
    state: dict[str, Any]
    artifacts: list[str]
    models: dict[str, ScriptedModel]


async def _turn(app: Any, replies: dict[str, list[dict[str, Any]]], text: str, *,
                prepare: Callable[[dict[str, ScriptedModel]], None] | None = None) -> Turn:
    """Run `text` through `app` with scripted `replies` (`prepare` sees the models first)."""
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    models = install_script(app.root_agent, replies)
    if prepare is not None:
        prepare(models)
    runner = InMemoryRunner(app=app)
    try:
        session = await runner.session_service.create_session(app_name=app.name, user_id="u")
        results = []
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="u", session_id=session.id,
                                            new_message=message):
            results += [p.function_response.response for p in (event.content.parts or [])
                        if event.content and p.function_response]
        stored = await runner.session_service.get_session(app_name=app.name, user_id="u",
                                                          session_id=session.id)
        artifacts = await runner.artifact_service.list_artifact_keys(
            app_name=app.name, user_id="u", session_id=session.id)
    finally:
        await runner.close()
    assert stored is not None
    return Turn(results, dict(stored.state), list(artifacts), models)


def _run(app: Any) -> tuple[dict[str, Any], str]:
    turn = asyncio.run(_turn(app, REPLIES, "Plan it"))
    return turn.state, turn.models["helper"].requests[0].config.system_instruction


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
    _check(*_run(app))


def test_todos_and_memory_through_the_generated_package(
        spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = compile_spec(spec, environ={})
    out = tmp_path / "out"
    assert write_package(emit_package(compiled, out), out) == []
    text = (out / "planner_app" / "agent.py").read_text()
    assert "[spec_path('notes/AGENTS.md')],\n            names=['notes/AGENTS.md'],\n" \
           "            edit_at=[None]," in text
    with package_loader(monkeypatch) as load:
        _check(*_run(load(out, "planner_app")))


def test_a_memory_edit_is_seen_on_the_next_call(spec: Path) -> None:
    app, _ = build_objects(compile_spec(spec, environ={}))
    (spec.parent / "notes" / "AGENTS.md").write_text("# Project notes\nNew rule.\n")
    _, system = _run(app)
    assert "New rule." in system


FILES_SPEC = """\
    agentspec: 1
    name: files_app
    backends:
      scratch: {type: state}
      work: {type: shell, root: ./work, timeout: 5}
      files: {type: composite, default: work, routes: {/scratch/: scratch}}
    agents:
      helper:
        model: gemini-2.5-flash
        instruction: Use the files.
        filesystem: files
    """
FILES_REPLIES = {"helper": [
    {"call": "write_file", "args": {"file_path": "/notes.md", "content": "alpha\nbeta\n"}},
    {"call": "write_file", "args": {"file_path": "/scratch/draft.md", "content": "kept in state"}},
    {"call": "edit_file", "args": {"file_path": "/notes.md", "old_string": "beta",
                                   "new_string": "gamma"}},
    {"call": "execute", "args": {"command": "cat notes.md"}},
    {"call": "read_file", "args": {"file_path": "/scratch/draft.md"}},
    {"text": "Done."}]}


@pytest.mark.parametrize("through", ["memory", "package"])
def test_filesystem_over_a_composite_of_shell_and_state(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, through: str) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(FILES_SPEC))
    compiled = compile_spec(path, environ={})
    assert compiled.ok, compiled.diagnostics
    if through == "memory":
        app, problems = build_objects(compiled)
        assert problems == []
        turn = asyncio.run(_turn(app, FILES_REPLIES, "Take notes"))
    else:
        out = tmp_path / "out"
        assert write_package(emit_package(compiled, out), out) == []
        with package_loader(monkeypatch) as load:
            turn = asyncio.run(_turn(load(out, "files_app"), FILES_REPLIES, "Take notes"))
    state, results = turn.state, turn.results
    assert (tmp_path / "work" / "notes.md").read_text() == "alpha\ngamma\n"
    assert "alpha" in str(results[3]) and "gamma" in str(results[3])  # execute saw the edit
    assert "kept in state" in str(results[4])
    assert "/draft.md" in str(state["agentspec:files:scratch"])


SKILLS_SPEC = """\
    agentspec: 1
    name: skills_app
    agents:
      helper:
        model: gemini-2.5-flash
        instruction: Use your skills.
        skills: {discovery}
    """
SKILL = """\
    ---
    name: trip-report
    description: Write a short trip report. Use when asked for a report.
    ---
    # Trip report
    Read references/style.md first.
    """


@pytest.mark.parametrize(("setting", "first_tool"), [
    ("[./skills]", "list_skills"), ("{paths: [./skills], discovery: eager}", "load_skill")])
def test_skills_through_the_generated_package(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str, first_tool: str) -> None:
    folder = tmp_path / "skills" / "trip-report"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text(textwrap.dedent(SKILL))
    (folder / "references" / "style.md").write_text("Use headings.")
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(SKILLS_SPEC).format(discovery=setting))
    compiled = compile_spec(tmp_path / "spec.yaml", environ={})
    assert compiled.ok, compiled.diagnostics
    out = tmp_path / "out"
    assert write_package(emit_package(compiled, out), out) == []
    steps = ([{"call": "list_skills"}] if first_tool == "list_skills" else []) + [
        {"call": "load_skill", "args": {"skill_name": "trip-report"}},
        {"call": "load_skill_resource",
         "args": {"skill_name": "trip-report", "file_path": "references/style.md"}},
        {"text": "Report written."}]
    with package_loader(monkeypatch) as load:
        turn = asyncio.run(_turn(load(out, "skills_app"), {"helper": steps}, "Report please"))
    request, results = turn.models["helper"].requests[0], turn.results
    declared = [d.name for t in request.config.tools for d in t.function_declarations]
    assert first_tool in declared and "load_skill_resource" in declared
    eager = first_tool == "load_skill"
    assert ("<available_skills>" in request.config.system_instruction) is eager
    assert "Read references/style.md first." in str(results[-2])
    assert "Use headings." in str(results[-1])


LIMIT_SPEC = """\
    agentspec: 1
    name: limit_app
    backends: {{scratch: {{type: state}}}}
    tools:
      big: {{python: big_tools:big_search}}
    agents:
      helper:
        model: gemini-2.5-flash
        instruction: Search.
        tools: [big]
        tool_result_limit: {{tokens: 50}}
        {filesystem}
    """
BIG_TOOLS = '''\
def big_search(query: str) -> dict:
    """Returns many rows."""
    return {"rows": [f"row {i} about {query}" for i in range(200)]}
'''


@pytest.mark.parametrize("filesystem", ["filesystem: scratch", ""])
def test_tool_result_limit_saves_big_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              filesystem: str) -> None:
    (tmp_path / "big_tools.py").write_text(BIG_TOOLS)
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(LIMIT_SPEC).format(
        filesystem=filesystem))
    compiled = compile_spec(tmp_path / "spec.yaml", environ={})
    assert compiled.ok, compiled.diagnostics
    out = tmp_path / "out"
    assert write_package(emit_package(compiled, out), out) == []
    steps: list[dict[str, Any]] = [{"call": "big_search", "args": {"query": "eels"}}]
    if filesystem:
        steps.append({"call": "read_file", "args": {
            "file_path": "/large_tool_results/big_search_CALL.txt", "limit": 5}})
    steps.append({"text": "Done."})

    def name_the_saved_file(models: dict[str, ScriptedModel]) -> None:
        original = models["helper"].generate_content_async

        async def with_call_id(request: Any, stream: bool = False) -> Any:
            # the saved file is named after the call id, known only once the tool has run
            for content in request.contents:
                for part in content.parts or ():
                    response = part.function_response
                    if response and "saved_to" in (response.response or {}):
                        path = response.response["saved_to"]
                        for step in models["helper"].replies:
                            if step.get("args", {}).get("file_path", "").endswith("CALL.txt"):
                                step["args"]["file_path"] = path
            async for reply in original(request, stream):
                yield reply

        object.__setattr__(models["helper"], "generate_content_async", with_call_id)

    with package_loader(monkeypatch) as load:
        turn = asyncio.run(_turn(load(out, "limit_app"), {"helper": steps}, "go",
                                 prepare=name_the_saved_file))
    results = turn.results
    evicted = results[0]
    assert "result_too_large" in evicted and "row 0 about eels" in evicted["preview"]
    assert "row 199" not in evicted["preview"]
    if filesystem:
        assert re.fullmatch(r"/large_tool_results/[^/]+/big_search_.+\.txt",
                            evicted["saved_to"])
        assert "row 0 about eels" in str(results[1])  # read back with read_file
    else:
        assert evicted["saved_as_artifact"] in turn.artifacts


TASK_SPEC = """\
    agentspec: 1
    name: task_app
    agents:
      lead:
        model: gemini-2.5-flash
        instruction: Delegate research.
        todos: true
        task: {agents: [researcher], general_purpose: true}
      researcher:
        description: Finds facts.
        model: gemini-2.5-flash
        instruction: Research the task.
    """
TASK_REPLIES = {
    "lead": [{"call": "task", "args": {"description": "Facts about eels",
                                       "subagent_type": "researcher"}},
             {"call": "task", "args": {"description": "Summarise eels",
                                       "subagent_type": "general-purpose"}},
             {"call": "task", "args": {"description": "x", "subagent_type": "nobody"}},
             {"text": "All done."}],
    "researcher": [{"text": "Eels are fish."}],
    "general_purpose": [{"text": "Eels: long fish."}]}


@pytest.mark.parametrize("through", ["memory", "package"])
def test_task_runs_sub_agents_on_their_own_branch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, through: str) -> None:
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(TASK_SPEC))
    compiled = compile_spec(tmp_path / "spec.yaml", environ={})
    assert compiled.ok, compiled.diagnostics

    if through == "memory":
        app, problems = build_objects(compiled)
        assert problems == []
        turn = asyncio.run(_turn(app, TASK_REPLIES, "Research eels please"))
    else:
        out = tmp_path / "out"
        assert write_package(emit_package(compiled, out), out) == []
        with package_loader(monkeypatch) as load:
            turn = asyncio.run(_turn(load(out, "task_app"), TASK_REPLIES,
                                     "Research eels please"))
    results, models = turn.results, turn.models
    answers = [r for r in results if "result" in r or "error" in r]
    assert answers[0] == {"result": "Eels are fish."}
    assert answers[1] == {"result": "Eels: long fish."}
    assert "nobody" in answers[2]["error"]
    seen = str([c.model_dump() for c in models["researcher"].requests[0].contents])
    assert "Facts about eels" in seen and "Research eels please" not in seen
    declared = [d.name for t in models["general_purpose"].requests[0].config.tools or ()
                for d in t.function_declarations]
    # the caller's whole tool set (its own todo list), but no `task`: it would start itself
    caller = [d.name for t in models["lead"].requests[0].config.tools or ()
              for d in t.function_declarations]
    assert "task" not in declared and set(declared) == set(caller) - {"task"}
    assert {"write_todos", "read_todos"} <= set(declared)


DEEP_SPEC = """\
    agentspec: 1
    name: deep_app
    agents:
      assistant:
        kind: deep
        model: gemini-2.5-flash
        instruction: Work carefully.
    """


def test_a_deep_agent_gets_the_deepagents_defaults(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(DEEP_SPEC))
    compiled = compile_spec(tmp_path / "spec.yaml", environ={})
    assert compiled.ok, compiled.diagnostics
    out = tmp_path / "out"
    assert write_package(emit_package(compiled, out), out) == []
    replies = {"assistant": [
        {"call": "write_todos", "args": {"todos": [{"content": "Note", "status": "pending"}]}},
        {"call": "write_file", "args": {"file_path": "/notes.md", "content": "kept"}},
        {"call": "task", "args": {"description": "Check notes",
                                  "subagent_type": "general-purpose"}},
        {"text": "Done."}],
        "general_purpose": [{"call": "read_file", "args": {"file_path": "/notes.md"}},
                            {"text": "The notes say kept."}]}

    with package_loader(monkeypatch) as load:
        turn = asyncio.run(_turn(load(out, "deep_app"), replies, "go"))
    state = turn.state
    declared = [d.name for t in turn.models["assistant"].requests[0].config.tools
                for d in t.function_declarations]
    assert {"write_todos", "read_todos", "ls", "read_file", "write_file", "edit_file", "glob",
            "grep", "task"} <= set(declared)
    assert "execute" not in declared  # the default backend keeps files in state
    assert state["agentspec:todos"] == [{"content": "Note", "status": "pending"}]
    assert "/notes.md" in state["agentspec:files"]  # the sub-agent read it from shared state


def test_a_task_agents_model_is_checked_at_build(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "spec.yaml").write_text(textwrap.dedent("""\
        agentspec: 1
        name: task_app
        agents:
          lead:
            model: gemini-2.5-flash
            instruction: Delegate research.
            task: {agents: [researcher]}
          researcher:
            description: Finds facts.
            model: no-such-model-anywhere
            instruction: Research the task.
        """))
    refused = compile_spec(tmp_path / "spec.yaml", environ={})  # validate sees it first
    assert [(d.code, d.span.start.line if d.span else 0) for d in refused.diagnostics
            if d.is_error] == [("AS250", 10)]  # at the model line
    # an id whose resolving depends on the installation (validate passes it): build's walk
    # reaches the agents `task` starts
    monkeypatch.setattr(importlib.import_module("agentspec.validate.semantic.references"),
                        "never_resolves", lambda model_id: False)
    compiled = compile_spec(tmp_path / "spec.yaml", environ={})
    assert compiled.ok, compiled.diagnostics
    _, problems = build_objects(compiled)
    assert [(d.code, d.span.start.line if d.span else 0) for d in problems] == [("AS404", 8)]


def test_a_task_sub_agent_keeps_its_own_todo_list(tmp_path: Path) -> None:
    """As in deepagents, a sub-agent neither sees nor replaces its caller's plan."""
    (tmp_path / "spec.yaml").write_text(textwrap.dedent("""\
        agentspec: 1
        name: plans
        root: lead
        agents:
          lead:
            kind: deep
            model: gemini-2.5-flash
            instruction: Lead.
            task: {agents: [helper]}
          helper:
            kind: deep
            description: Helps.
            model: gemini-2.5-flash
            instruction: Help.
        """))
    app, problems = build_objects(compile_spec(tmp_path / "spec.yaml", environ={}))
    assert problems == []
    lead_plan = [{"content": "Delegate", "status": "in_progress"}]
    helper_plan = [{"content": "Help out", "status": "pending"}]
    turn = asyncio.run(_turn(app, {
        "lead": [{"call": "write_todos", "args": {"todos": lead_plan}},
                 {"call": "task", "args": {"description": "Help", "subagent_type": "helper"}},
                 {"call": "read_todos"}, {"text": "Done."}],
        "helper": [{"call": "read_todos"}, {"call": "write_todos", "args": {"todos": helper_plan}},
                   {"text": "Helped."}]}, "go"))
    assert turn.state["agentspec:todos"] == lead_plan
    own = [v for k, v in turn.state.items() if k.startswith("agentspec:todos:helper@")]
    assert own == [helper_plan]
    reads = [r for r in turn.results if isinstance(r, dict) and "summary" in r and "todos" in r
             and "status" not in r]
    assert reads[0]["todos"] == []          # the helper started with an empty plan
    assert reads[1]["todos"] == lead_plan   # the lead's plan is untouched


def test_memory_the_file_tools_reach_is_editable_and_the_edit_is_seen(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "AGENTS.md").write_text("# Notes\nUse tabs.\n")
    (tmp_path / "elsewhere.md").write_text("Outside every backend.\n")
    (tmp_path / "spec.yaml").write_text(textwrap.dedent("""\
        agentspec: 1
        name: memo
        backends:
          project: {type: filesystem, root: ./project}
          scratch: {type: state}
          both: {type: composite, default: scratch, routes: {/project/: project}}
        agents:
          helper:
            model: gemini-2.5-flash
            instruction: Remember what you learn.
            filesystem: both
            memory: [./project/AGENTS.md, ./elsewhere.md]
        """))
    app, problems = build_objects(compile_spec(tmp_path / "spec.yaml", environ={}))
    assert problems == []
    turn = asyncio.run(_turn(app, {"helper": [
        {"call": "edit_file", "args": {"file_path": "/project/AGENTS.md", "old_string": "tabs",
                                       "new_string": "spaces"}},
        {"text": "Noted."}]}, "Use spaces from now on"))
    first, second = (r.config.system_instruction for r in turn.models["helper"].requests)
    assert '<memory_file path="project/AGENTS.md" edit_at="/project/AGENTS.md">' in first
    assert '<memory_file path="elsewhere.md" read_only="true">' in first
    assert str(tmp_path) not in first  # the model sees names, not paths on this machine
    assert "Use tabs." in first and "Use spaces." in second
    assert (tmp_path / "project" / "AGENTS.md").read_text() == "# Notes\nUse spaces.\n"
