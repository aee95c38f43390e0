"""Summarization with history: checked before each model call, the dropped events kept as
Markdown in the root agent's backend, readable again with `read_file`."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentspec.compiler import build_objects, compile_spec, emit_package, write_package
from agentspec.testing.scripted import install_script
from tests.buildkit import package_loader

SPEC = """\
agentspec: 1
name: lockers
models:
  main: {id: gemini-2.5-flash}
backends:
  files: {type: filesystem, root: ./workspace}
agents:
  scribe:
    model: main
    instruction: You keep the user's notes.
    filesystem: files
summarization:
  trigger: {tokens: 60}
  keep: {events: 5}
  history: /conversation_history
"""

TURNS = [
    "Please remember this for later: my locker code is 4417, it is at the north gym, and "
    "the spare key is with Dana at the front desk.",
    "Thanks.",
    "Now, before I head out, I need the exact locker code and where the spare key is; "
    "please check your notes carefully rather than guessing, as I get one try at the lock.",
]
HISTORY = "/conversation_history/u/s1.md"
REPLIES: dict[str, list[Any]] = {
    "scribe": [
        {"text": "Noted."},
        {"text": "You're welcome."},
        {"call": "ls", "args": {"path": "/"}},
        {"call": "read_file", "args": {"file_path": HISTORY}},
        {"text": "Your locker code is 4417; Dana at the front desk has the spare key."},
    ],
    # a rolling summary: at 60 tokens every later check is over the threshold again, and
    # each summary replaces the one before it (the previous summary seeds the next)
    "summarizer": [{"text": "The user asked me to remember a locker code."},
                   {"text": "A locker code was noted; the user said thanks."},
                   {"text": "A locker code was noted, and the user asked for it back."}],
}


_WHEN = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")


def _seen(request: Any) -> list[str]:
    """A request's contents as `role: text` lines (what the model saw)."""
    lines = []
    for content in request.contents:
        for part in content.parts or []:
            if part.text:
                lines.append(f"{content.role}: {part.text}")
            if part.function_call:
                lines.append(f"{content.role}: call {part.function_call.name}"
                             f"({json.dumps(part.function_call.args, sort_keys=True)})")
            if part.function_response:
                lines.append(f"{content.role}: {part.function_response.name} answered "
                             f"{json.dumps(part.function_response.response, sort_keys=True)}")
    return lines


def _converse(app: Any) -> tuple[dict[str, Any], list[str]]:
    async def main() -> tuple[dict[str, Any], list[str]]:
        from google.adk.runners import InMemoryRunner
        from google.genai import types

        models = install_script(app.root_agent, REPLIES, app.events_compaction_config)
        runner = InMemoryRunner(app=app)
        said = []
        try:
            await runner.session_service.create_session(app_name=app.name, user_id="u",
                                                        session_id="s1")
            for turn in TURNS:
                message = types.Content(role="user", parts=[types.Part(text=turn)])
                async for event in runner.run_async(user_id="u", session_id="s1",
                                                    new_message=message):
                    said += [p.text for p in (event.content.parts if event.content else [])
                             or [] if p.text and not event.partial]
        finally:
            await runner.close()
        return models, said

    return asyncio.run(main())


def _check_conversation(app: Any, workspace: Path, snapshot: Any) -> None:
    models, said = _converse(app)
    assert said[-1] == "Your locker code is 4417; Dana at the front desk has the spare key."
    for model in models.values():
        assert not model.replies, f"{model.agent} left replies unused"
        assert not model.problems
    history = (workspace / HISTORY.lstrip("/")).read_text()
    # the first turn, dropped from the model's view, is in the history file
    assert TURNS[0] in history and "Noted." in history
    # one section per summary, each with only the events it dropped (never a seed summary)
    assert history.count("## Summarized on") == len(models["summarizer"].requests) == 3
    first = history.split("## Summarized on")[1]
    assert TURNS[0] in first and TURNS[1] not in first
    assert "The user asked me to remember" not in history
    scribe = [_seen(request) for request in models["scribe"].requests]
    # before the fourth call (the third turn's second), the first turn was summarized away
    assert any(TURNS[0] in line for line in scribe[2])
    assert not any(TURNS[0] in line for line in scribe[3])
    assert any(HISTORY in line for line in scribe[3])
    # and the agent read it back
    assert any("read_file answered" in line and "4417" in line for line in scribe[4])
    seen = {"history": history, "scribe": scribe,
            "summarizer": [_seen(r) for r in models["summarizer"].requests]}
    assert json.loads(_WHEN.sub("<when>", json.dumps(seen))) == snapshot


def test_first_turn_summarized_away_and_read_back(spec_dir: Any, tmp_path: Path,
                                                  snapshot: Any) -> None:
    compiled = compile_spec(spec_dir(SPEC), environ={})
    assert compiled.ok, compiled.diagnostics
    app, problems = build_objects(compiled)
    assert not problems
    _check_conversation(app, tmp_path / "workspace", snapshot)


def test_generated_package_keeps_history_too(spec_dir: Any, tmp_path: Path, snapshot: Any,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = compile_spec(spec_dir(SPEC), environ={})
    files = emit_package(compiled, tmp_path / "out")
    assert not write_package(files, tmp_path / "out")
    with package_loader(monkeypatch) as load:
        app = load(tmp_path / "out", "lockers")
        _check_conversation(app, tmp_path / "workspace", snapshot)


# the check's estimate ------------------------------------------------------------------------


def _event(author: str, text: str = "", *, at: float, usage: int | None = None,
           result: Any = None, summary: tuple[float, float, str] | None = None) -> Any:
    from google.adk.events.event import Event
    from google.adk.events.event_actions import EventActions, EventCompaction
    from google.genai import types

    parts = [types.Part(text=text)] if text else []
    if result is not None:
        parts.append(types.Part(function_response=types.FunctionResponse(
            name="fetch", response=result)))
    actions = EventActions()
    if summary is not None:
        actions = EventActions(compaction=EventCompaction(
            start_timestamp=summary[0], end_timestamp=summary[1],
            compacted_content=types.Content(role="model", parts=[types.Part(text=summary[2])])))
    return Event(author=author, invocation_id="i", timestamp=at, actions=actions,
                 content=types.Content(role="user", parts=parts) if parts else None,
                 usage_metadata=types.GenerateContentResponseUsageMetadata(
                     prompt_token_count=usage) if usage is not None else None)


def test_the_estimate_adds_what_came_after_the_last_reported_count() -> None:
    from agentspec.runtime.summarization import prompt_tokens

    events = [_event("user", "u" * 400, at=1), _event("scribe", "a" * 40, at=2, usage=100),
              _event("user", "b" * 400, at=3)]
    assert prompt_tokens(events, "scribe", None, 10**9) == 100 + (40 + 400) // 4
    # a big tool result counts before the next call, not one call late
    events.append(_event("user", result={"body": "x" * 8000}, at=4))
    assert prompt_tokens(events, "scribe", None, 10**9) == 100 + (
        40 + 400 + len("fetch") + len('{"body": "' + "x" * 8000 + '"}')) // 4
    # another agent's count is not this agent's prompt: every character counts
    result = len("fetch") + len('{"body": "' + "x" * 8000 + '"}')
    assert prompt_tokens(events, "other", None, 10**9) == (400 + 40 + 400 + result) // 4


def test_after_a_summary_the_count_restarts_from_the_summary() -> None:
    from agentspec.runtime.summarization import prompt_tokens

    events = [_event("user", "u" * 4000, at=1), _event("scribe", "a" * 400, at=2, usage=5000),
              _event("user", "k" * 40, at=3),
              _event("user", at=4, summary=(1.0, 2.0, "s" * 80))]
    # the count of 5000 described the prompt the summary replaced
    assert prompt_tokens(events, "scribe", None, 10**9) == (80 + 40) // 4


def test_counting_stops_at_the_threshold() -> None:
    from agentspec.runtime.summarization import prompt_tokens

    events = [_event("user", "w" * 400, at=float(i)) for i in range(1000)]
    assert prompt_tokens(events, "scribe", None, 250) == 300  # three events: at least 250


def test_the_check_is_agentspecs_only_for_its_own_settings() -> None:
    from agentspec.runtime import adk
    from agentspec.runtime.app import compaction
    from agentspec.runtime.summarization import SummaryCheck, SummaryConfig

    config = compaction(token_threshold=100, event_retention_size=2)
    assert isinstance(config, SummaryConfig)
    assert isinstance(adk.compaction_request_processor(), SummaryCheck)
    from google.adk.flows.llm_flows.single_flow import SingleFlow

    assert isinstance(SingleFlow().get_request_processor("compaction"), SummaryCheck)


# history files: names and confinement --------------------------------------------------------


@pytest.mark.parametrize("user, session", [
    ("u", "../../etc/passwd"), ("..", ".."), ("u/../../x", "s"), ("u", "a" * 5000),
    ("u", "s\x00t"), ("ü", "sé"), ("u", "/abs"), ("u", "")])
def test_history_file_names_stay_in_the_history_directory(user: str, session: str) -> None:
    from google.adk.sessions.session import Session

    from agentspec.runtime.summarization import history_file

    path = history_file("/history", Session(id=session, app_name="a", user_id=user))
    parts = path.split("/")
    assert parts[:2] == ["", "history"] and len(parts) == 4 and path.endswith(".md")
    assert all(part not in ("", ".", "..") and len(part) <= 123 for part in parts[2:])
    other = history_file("/history", Session(id=session + "x", app_name="a", user_id=user))
    assert other != path  # distinct ids, distinct files


def test_an_id_shaped_like_another_ids_encoding_gets_its_own_history_file() -> None:
    """Attack (issue 21, item 5): `alice@example.com` used to be kept as the cleaned name
    `alice_example_com-<digest>`, which is itself a plain name, so a user with that id wrote
    into and read another user's history."""
    from google.adk.sessions.session import Session

    from agentspec.runtime.summarization import history_file

    def path(user: str) -> str:
        return history_file("/h", Session(id="s", app_name="a", user_id=user))

    assert path("alice@example.com") != path("alice_example_com-ff8d9819fc0e12bf")
    assert path("Alice").lower() != path("alice").lower()  # case-insensitive file systems


_IDS = st.text(st.characters(codec="utf-8"), max_size=70) | st.sampled_from(
    ["", "~", "~~", "~41", "A", "a", "alice@example.com", "x" * 200, "X" * 200, ".", ".."])


@given(first=st.tuples(_IDS, _IDS), second=st.tuples(_IDS, _IDS))
def test_history_files_are_an_injective_function_of_user_and_session(
        first: tuple[str, str], second: tuple[str, str]) -> None:
    from google.adk.sessions.session import Session

    from agentspec.runtime.summarization import history_file

    def path(ids: tuple[str, str]) -> str:
        return history_file("/h", Session(id=ids[1], app_name="a", user_id=ids[0]))

    one, two = path(first), path(second)
    assert (one.casefold() == two.casefold()) == (first == second)
    assert one.count("/") == 3 and one.startswith("/h/")


def test_history_is_not_written_through_a_link_out_of_the_root(tmp_path: Path) -> None:
    from agentspec.runtime.backends import BackendError
    from agentspec.runtime.summarization import directory_backend

    root, outside = tmp_path / "work", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "history").symlink_to(outside)
    find = directory_backend("files", {"files": {"type": "filesystem", "root": str(root)}})
    backend, inner = find("/history/u/s.md")
    with pytest.raises(BackendError, match="outside"):
        backend.append(inner, "text")
    assert not list(outside.iterdir())
    (root / "ok").mkdir()
    (root / "ok" / "s.md").write_text("old\n")
    (root / "ok" / "twin.md").hardlink_to(root / "ok" / "s.md")
    with pytest.raises(BackendError, match="hard links"):
        backend.append("/ok/s.md", "more")
    backend.append("/ok/new/s.md", "first\n")
    backend.append("/ok/new/s.md", "second\n")
    assert (root / "ok/new/s.md").read_text() == "first\nsecond\n"


def test_history_through_a_composite_route(tmp_path: Path) -> None:
    from agentspec.runtime.summarization import directory_backend

    definitions = {
        "mixed": {"type": "composite", "default": "scratch",
                  "routes": {"/archive/": "disk"}},
        "scratch": {"type": "state"},
        "disk": {"type": "filesystem", "root": str(tmp_path / "disk")}}
    backend, inner = directory_backend("mixed", definitions)("/archive/history/u/s.md")
    assert inner == "/history/u/s.md"
    backend.append(inner, "kept\n")
    assert (tmp_path / "disk/history/u/s.md").read_text() == "kept\n"
    with pytest.raises(RuntimeError, match="not a directory"):
        directory_backend("mixed", definitions)("/elsewhere/u/s.md")


def test_run_script_addresses_the_summarizer(spec_dir: Any, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from agentspec.cli import cli

    spec_dir(SPEC.replace("tokens: 60", "tokens: 20").replace("events: 5", "events: 1"))
    (tmp_path / "script.yaml").write_text(json.dumps({
        "messages": [TURNS[0], "What is my locker code?"],
        "replies": {"scribe": [{"text": "Noted."}, {"text": "It is 4417."}],
                    "summarizer": [{"text": "A locker code was shared."}]}}))
    done = CliRunner().invoke(cli, ["run", "spec.yaml", "--script", "script.yaml"])
    assert done.exit_code != 0  # a second summary wants a reply the script lacks: it says so
    assert "no more replies for agent `summarizer`" in done.output
    (tmp_path / "script.yaml").write_text(json.dumps({
        "messages": [TURNS[0], "What is my locker code?"],
        "replies": {"scribe": [{"text": "Noted."}, {"text": "It is 4417."}],
                    "summarizer": [{"text": "A locker code was shared."},
                                   {"text": "A locker code was noted."},
                                   {"text": "The user asked for it."}]}}))
    done = CliRunner().invoke(cli, ["run", "spec.yaml", "--script", "script.yaml"])
    assert done.exit_code == 0, done.output
    assert "[scribe] It is 4417." in done.output
    histories = list((tmp_path / "workspace/conversation_history").glob("*/*.md"))
    assert len(histories) == 1 and TURNS[0] in histories[0].read_text()
