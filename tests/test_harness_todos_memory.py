"""The todo tools and the memory callback, run offline on hand-built ADK agents."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.events import Event
from google.adk.runners import InMemoryRunner
from google.adk.tools.function_tool import FunctionTool
from google.genai import types

from agentspec.runtime.harness.memory import memory_callback, render_memory
from agentspec.runtime.harness.todos import (
    TODOS_KEY,
    read_todos,
    validate_todos,
    write_todos,
)
from agentspec.testing.scripted import ScriptedModel, install_script

PLAN = [
    {"content": "Find sources", "status": "completed"},
    {"content": "Draft the report", "status": "in_progress"},
    {"content": "Check citations", "status": "pending"},
]


def _run(agent: LlmAgent, script: list[dict[str, Any]], *messages: str
         ) -> tuple[ScriptedModel, list[Event], dict[str, Any]]:
    """Run `messages` as turns of one session; the model, all events and the final state."""
    model = install_script(agent, {agent.name: script})[agent.name]

    async def go() -> tuple[list[Event], dict[str, Any]]:
        runner = InMemoryRunner(agent=agent, app_name="harness_test")
        session = await runner.session_service.create_session(app_name="harness_test",
                                                              user_id="u")
        events: list[Event] = []
        for text in messages or ("go",):
            msg = types.Content(role="user", parts=[types.Part(text=text)])
            events += [e async for e in runner.run_async(user_id="u", session_id=session.id,
                                                         new_message=msg)]
        final = await runner.session_service.get_session(app_name="harness_test", user_id="u",
                                                         session_id=session.id)
        assert final is not None
        return events, dict(final.state)

    events, state = asyncio.run(go())
    return model, events, state


def _responses(events: list[Event], name: str) -> list[dict[str, Any]]:
    return [dict(p.function_response.response or {}) for e in events
            for p in (e.content.parts if e.content else None) or []
            if p.function_response and p.function_response.name == name]


def _system(model: ScriptedModel, i: int) -> str:
    si = model.requests[i].config.system_instruction
    assert isinstance(si, str)
    return si


# --- todos -----------------------------------------------------------------------------------

def test_write_todos_declares_an_array_of_content_status_objects() -> None:
    decl = FunctionTool(write_todos)._get_declaration()
    assert decl is not None and decl.name == "write_todos"
    assert "multi-step" in (decl.description or "") and "in_progress" in (decl.description or "")
    schema = decl.parameters_json_schema
    assert isinstance(schema, dict) and schema["required"] == ["todos"]
    todos = schema["properties"]["todos"]
    assert todos["type"] == "array"
    item = todos["items"]
    if "$ref" in item:                                   # pydantic puts the TypedDict in $defs
        item = schema["$defs"][item["$ref"].rsplit("/", 1)[-1]]
    assert item["type"] == "object"
    assert set(item["required"]) == {"content", "status"}
    assert item["properties"]["content"]["type"] == "string"
    assert item["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]
    assert "tool_context" not in schema["properties"]


def test_read_todos_declares_no_parameters() -> None:
    decl = FunctionTool(read_todos)._get_declaration()
    assert decl is not None and decl.name == "read_todos"
    params = decl.parameters_json_schema or decl.parameters
    props = (params.get("properties") if isinstance(params, dict)
             else getattr(params, "properties", None))
    assert not props


def test_scripted_write_then_read_keeps_the_list_in_state() -> None:
    agent = LlmAgent(name="planner", instruction="Plan.", tools=[write_todos, read_todos])
    model, events, state = _run(agent, [
        {"call": "write_todos", "args": {"todos": PLAN}},
        {"call": "read_todos"},
        {"text": "done"},
    ])
    assert state[TODOS_KEY] == PLAN
    assert _responses(events, "write_todos")[0]["status"] == "saved"
    assert _responses(events, "read_todos")[0]["todos"] == PLAN
    assert any(TODOS_KEY in (e.actions.state_delta or {}) for e in events)   # a recorded delta
    assert len(model.requests) == 3


def test_write_replaces_the_whole_list_and_read_of_nothing_is_empty() -> None:
    agent = LlmAgent(name="planner", instruction="Plan.", tools=[write_todos, read_todos])
    _, events, state = _run(agent, [
        {"call": "read_todos"},
        {"call": "write_todos", "args": {"todos": PLAN}},
        {"call": "write_todos", "args": {"todos": [{"content": "Only this",
                                                    "status": "pending"}]}},
        {"text": "done"},
    ])
    assert _responses(events, "read_todos")[0]["todos"] == []
    assert state[TODOS_KEY] == [{"content": "Only this", "status": "pending"}]


def test_invalid_items_are_refused_with_messages_for_the_model() -> None:
    agent = LlmAgent(name="planner", instruction="Plan.", tools=[write_todos])
    bad = [{"content": "", "status": "pending"},
           {"content": "Ship it", "status": "done"},
           "just a string",
           {"status": "pending"}]
    _, events, state = _run(agent, [
        {"call": "write_todos", "args": {"todos": bad}},
        {"text": "ok"},
    ])
    error = _responses(events, "write_todos")[0]["error"]
    assert "not saved" in error
    assert "item 1" in error and "content" in error
    assert "item 2" in error and "'done'" in error and "in_progress" in error
    assert "item 3" in error and "item 4" in error
    assert TODOS_KEY not in state


def test_two_in_progress_items_are_refused_and_the_old_list_kept() -> None:
    agent = LlmAgent(name="planner", instruction="Plan.", tools=[write_todos])
    two = [{"content": "A", "status": "in_progress"}, {"content": "B", "status": "in_progress"}]
    _, events, state = _run(agent, [
        {"call": "write_todos", "args": {"todos": PLAN}},
        {"call": "write_todos", "args": {"todos": two}},
        {"text": "ok"},
    ])
    error = _responses(events, "write_todos")[1]["error"]
    assert "only one" in error and "in_progress" in error
    assert state[TODOS_KEY] == PLAN


def test_validate_todos_edge_cases() -> None:
    assert validate_todos([]) == ([], [])
    assert validate_todos('[{"content": "x", "status": "pending"}]')[0] == [
        {"content": "x", "status": "pending"}]
    assert validate_todos("not json")[1] and validate_todos({"content": "x"})[1]
    clean, errors = validate_todos([{"content": "  pad  ", "status": "completed", "extra": 1}])
    assert clean == [{"content": "pad", "status": "completed"}] and not errors


# --- memory ----------------------------------------------------------------------------------

BRACES = 'Project {project_name}: answer with JSON like {"k": 1}. Use {{x}} as is.'


def test_memory_is_in_the_first_request_verbatim(tmp_path: Path) -> None:
    agents_md = tmp_path / "AGENTS.md"
    agents_md.write_text("# Conventions\n" + BRACES + "\n")
    agent = LlmAgent(name="coder", instruction="Base rules.",
                     before_model_callback=memory_callback([agents_md]))
    model, events, _ = _run(agent, [{"text": "ok"}])
    si = _system(model, 0)
    assert si.startswith("Base rules.")
    assert BRACES in si and "# Conventions" in si
    assert str(agents_md) in si and "<agent_memory>" in si and si.index("Base rules.") < si.index(
        "<agent_memory>")
    assert [p.text for e in events for p in (e.content.parts if e.content else None) or []
            if p.text] == ["ok"]


def test_an_edit_is_seen_on_the_next_model_call_of_the_same_run(tmp_path: Path) -> None:
    agents_md = tmp_path / "AGENTS.md"
    agents_md.write_text("Old fact {a}.")

    def remember(fact: str) -> dict[str, str]:
        """Record a fact in memory."""
        agents_md.write_text(fact)
        return {"status": "saved"}

    agent = LlmAgent(name="coder", instruction="Base.", tools=[remember],
                     before_model_callback=memory_callback([agents_md]))
    model, _, _ = _run(agent, [
        {"call": "remember", "args": {"fact": 'New fact {"b": 2}.'}},
        {"text": "ok"},
        {"text": "second turn"},
    ], "first", "second")
    assert "Old fact {a}." in _system(model, 0) and "New fact" not in _system(model, 0)
    assert 'New fact {"b": 2}.' in _system(model, 1) and "Old fact" not in _system(model, 1)
    assert 'New fact {"b": 2}.' in _system(model, 2)
    assert _system(model, 2).count("</agent_memory>") == 1       # appended once per call


def test_missing_files_do_not_break_the_run(tmp_path: Path) -> None:
    present = tmp_path / "AGENTS.md"
    present.write_text("Present.")
    missing = tmp_path / "nowhere" / "AGENTS.md"
    agent = LlmAgent(name="coder", instruction="Base.",
                     before_model_callback=memory_callback([missing, present]))
    model, events, _ = _run(agent, [{"text": "fine"}])
    si = _system(model, 0)
    assert str(missing) in si and "missing" in si
    assert "Present." in si and si.index(str(missing)) < si.index("Present.")
    assert events[-1].content is not None and events[-1].content.parts
    assert events[-1].content.parts[0].text == "fine"


def test_large_files_are_truncated_with_a_marker(tmp_path: Path) -> None:
    big = tmp_path / "AGENTS.md"
    big.write_text("é" * 100)                  # 200 bytes; a cut falls inside a character
    text = render_memory([big], max_bytes=51)
    assert "é" * 25 in text and "é" * 26 not in text and "\ufffd" not in text
    assert "[... truncated" in text and "51 bytes" in text
    assert "[... truncated" not in render_memory([big])
    assert render_memory([big], header="").startswith("<agent_memory>")
