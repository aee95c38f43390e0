"""`agentspec run`: scripted, offline conversations through the command line."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from agentspec.cli import cli
from tests.buildkit import purge

SPEC = """\
    agentspec: 1
    name: help_desk
    root: front
    tools:
      lookup: {python: desk_tools:lookup}
    agents:
      front:
        model: gemini-2.5-flash
        description: Greets people and looks cities up.
        instruction: Look the city up, then hand over to the specialist.
        tools: [lookup]
        sub_agents: [specialist]
      specialist:
        model: gemini-2.5-flash
        description: Answers questions about a city.
        instruction: Answer from what front found.
    """
TOOLS = '''\
    def lookup(city: str) -> dict:
        """Look a city up."""
        return {"city": city, "population": 545000}
    '''
SCRIPT = """\
    replies:
      front:
        - call: lookup
          args: {city: Lisbon}
        - transfer: specialist
      specialist:
        - text: Lisbon has about 545000 people.
    """
KEYS = ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI")


@pytest.fixture
def desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The help desk spec, its tool module and a script in tmp_path (the working directory)."""
    monkeypatch.chdir(tmp_path)
    for name, text in (("spec.yaml", SPEC), ("desk_tools.py", TOOLS), ("script.yaml", SCRIPT)):
        (tmp_path / name).write_text(textwrap.dedent(text))
    saved = list(sys.path)
    purge("desk_tools")
    yield tmp_path
    purge("desk_tools")
    sys.path[:] = saved


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name="agentspec")


def test_a_script_drives_a_tool_call_and_a_transfer(desk: Path) -> None:
    done = invoke("run", "spec.yaml", "How big is Lisbon?", "--script", "script.yaml")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert lines[0] == "you> How big is Lisbon?"
    expected = ["[front] calls lookup({'city': 'Lisbon'})",
                "[front] lookup returned {'city': 'Lisbon', 'population': 545000}",
                "[front] -> transfers to specialist",
                "[specialist] Lisbon has about 545000 people."]
    assert [line for line in lines if line in expected] == expected
    assert lines[-1] == "[specialist] Lisbon has about 545000 people."


def test_the_script_can_hold_the_messages(desk: Path) -> None:
    (desk / "script.yaml").write_text(textwrap.dedent(SCRIPT) + "messages: [Lisbon please]\n")
    done = invoke("run", "spec.yaml", "--script", "script.yaml")
    assert done.exit_code == 0, done.output
    assert "you> Lisbon please" in done.stdout
    assert "[specialist] Lisbon has about 545000 people." in done.stdout


def _stored_events(path: Path) -> list[Any]:
    from google.adk.sessions.sqlite_session_service import SqliteSessionService

    async def main() -> list[Any]:
        session = await SqliteSessionService(str(path)).get_session(
            app_name="help_desk", user_id="user", session_id="default")
        assert session is not None
        return list(session.events)

    return asyncio.run(main())


def _user_texts(events: list[Any]) -> list[str]:
    return [p.text for e in events if e.author == "user" and e.content
            for p in e.content.parts or [] if p.text]


def test_an_sqlite_session_keeps_the_conversation_across_runs(desk: Path) -> None:
    database = desk / "state" / "s.db"
    url = f"sqlite:///{database}"
    first = invoke("run", "spec.yaml", "How big is Lisbon?", "--script", "script.yaml",
                   "--session", url)
    assert first.exit_code == 0, first.output
    after_first = _stored_events(database)
    assert _user_texts(after_first) == ["How big is Lisbon?"]

    # the conversation continues with the agent that spoke last: the specialist
    (desk / "again.yaml").write_text(textwrap.dedent("""\
        replies:
          specialist:
            - text: Still about 545000.
        """))
    second = invoke("run", "spec.yaml", "And now?", "--script", "again.yaml", "--session", url)
    assert second.exit_code == 0, second.output
    assert "[specialist] Still about 545000." in second.stdout
    after_second = _stored_events(database)
    assert _user_texts(after_second) == ["How big is Lisbon?", "And now?"]
    assert len(after_second) == len(after_first) + 2  # the message and the answer
    assert [e.id for e in after_second[:len(after_first)]] == [e.id for e in after_first]
    # another session id is another conversation, which starts at the root agent
    (desk / "fresh.yaml").write_text("replies:\n  front:\n    - text: Hello again.\n")
    third = invoke("run", "spec.yaml", "Hi", "--script", "fresh.yaml", "--session", url,
                   "--session-id", "other")
    assert third.exit_code == 0, third.output
    assert "[front] Hello again." in third.stdout
    assert _user_texts(_stored_events(database)) == ["How big is Lisbon?", "And now?"]


def test_a_session_store_that_cannot_be_used_is_an_error_not_a_traceback(desk: Path) -> None:
    """Any URL ADK's session services take is accepted (issue 14); one that cannot be used
    exits 1 saying why."""
    done = invoke("run", "spec.yaml", "Hi", "--script", "script.yaml",
                  "--session", "postgresql://nobody@127.0.0.1:1/x?connect_timeout=2")
    assert done.exit_code == 1, done.output
    assert "cannot use the session store postgresql://nobody@127.0.0.1:1/x" in done.output
    assert "Traceback" not in done.output


def test_without_credentials_or_script_run_exits_2(desk: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    done = invoke("run", "spec.yaml", "Hi")
    assert done.exit_code == 2
    assert "no model credentials" in done.stderr
    assert "GOOGLE_API_KEY" in done.stderr and "--script" in done.stderr
    assert "Traceback" not in done.output


def test_replies_for_an_unknown_agent_are_a_usage_error(desk: Path) -> None:
    (desk / "typo.yaml").write_text(textwrap.dedent("""\
        replies:
          frnot:
            - text: hello
        """))
    done = invoke("run", "spec.yaml", "Hi", "--script", "typo.yaml")
    assert done.exit_code == 2
    assert "frnot" in done.output
    assert "Traceback" not in done.output


def test_a_script_that_runs_out_of_replies_says_so(desk: Path) -> None:
    (desk / "short.yaml").write_text(textwrap.dedent("""\
        replies:
          front:
            - call: lookup
              args: {city: Lisbon}
        """))
    done = invoke("run", "spec.yaml", "Hi", "--script", "short.yaml")
    assert done.exit_code == 1
    assert "no more replies" in done.stderr and "front" in done.stderr
    assert "[front] calls lookup({'city': 'Lisbon'})" in done.stdout


def test_without_a_message_run_chats_on_the_terminal(desk: Path) -> None:
    done = CliRunner().invoke(cli, ["run", "spec.yaml", "--script", "script.yaml"],
                              input="How big is Lisbon?\n/quit\nnever read\n",
                              prog_name="agentspec")
    assert done.exit_code == 0, done.output
    assert "[front] calls lookup({'city': 'Lisbon'})" in done.stdout
    assert done.stdout.endswith("you> ")  # asked again, then /quit ended the chat


def test_answers_a_resumed_turn_added_are_shown_first_in_the_next_run(desk: Path) -> None:
    """A worker that resumes the conversation after a background job appends the parent's
    answer to the session; the next `run` of that session shows it before anything else,
    once (the answers of the person's own turns are not shown again)."""
    from google.adk.events.event import Event
    from google.adk.sessions.sqlite_session_service import SqliteSessionService
    from google.genai import types

    from agentspec.runtime.jobs.resume import RESUME_PREFIX

    database = desk / "s.db"
    url = f"sqlite:///{database}"
    first = invoke("run", "spec.yaml", "How big is Lisbon?", "--script", "script.yaml",
                   "--session", url)
    assert first.exit_code == 0, first.output

    async def resumed_answer() -> None:
        service = SqliteSessionService(str(database))
        session = await service.get_session(app_name="help_desk", user_id="user",
                                            session_id="default")
        assert session is not None
        await service.append_event(session, Event(
            invocation_id=f"{RESUME_PREFIX}job-1", author="specialist",
            content=types.Content(role="model", parts=[types.Part(
                text="The census job is done: 545923 people.")])))

    asyncio.run(resumed_answer())
    (desk / "again.yaml").write_text("replies:\n  specialist:\n    - text: You are welcome.\n")
    second = invoke("run", "spec.yaml", "Thanks", "--script", "again.yaml", "--session", url)
    assert second.exit_code == 0, second.output
    assert second.stdout.splitlines() == [
        "[specialist] The census job is done: 545923 people.",
        "you> Thanks",
        "[specialist] You are welcome."]


def test_a_missing_state_key_is_said_once_naming_the_agent_whose_instruction_uses_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec.yaml").write_text(textwrap.dedent("""\
        agentspec: 1
        name: statey
        root: front
        agents:
          front:
            model: gemini-2.5-flash
            instruction: Route to the specialist.
            sub_agents: [specialist, writer]
          specialist:
            model: gemini-2.5-flash
            instruction: "Answer using {summary}."
          writer:
            model: gemini-2.5-flash
            instruction: Write a summary.
            output_key: summary
        """))
    (tmp_path / "script.yaml").write_text(
        "replies:\n  front:\n    - transfer: specialist\n  specialist:\n    - text: ok\n")
    result = invoke("run", "spec.yaml", "hi", "--script", "script.yaml")
    assert result.exit_code == 1, result.output
    said = result.stdout + result.stderr
    assert said.count("has no `summary`") == 1
    assert "agent `specialist`'s instruction uses `{summary}`" in said
    assert "[front] failed" not in said
