"""A summarizer that fails is not silent (issue 23, item 1): the run goes on with the whole
conversation, as ADK does, and the failure is an event that `agentspec run` shows as a
warning and `agentspec test` counts as an error of `summarizer` unless `expect.errors`
declares it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentspec.cli import cli
from tests.test_summarization import SPEC, TURNS

SCRIPT = {"messages": [TURNS[0], "What is my locker code?"],
          "replies": {"scribe": [{"text": "Noted."}, {"text": "It is 4417."}],
                      "summarizer": [{"fail": "the summarizer model is down"}] * 3}}


WARNING = ("[scribe] warning: summarization failed, so the conversation went on unsummarized: "
           "ScriptedFailure: summarizer: the summarizer model is down")


def _spec(spec_dir: Any) -> None:
    spec_dir(SPEC.replace("tokens: 60", "tokens: 20").replace("events: 5", "events: 1"))


def test_run_warns_and_goes_on_unsummarized(spec_dir: Any, tmp_path: Path) -> None:
    _spec(spec_dir)
    (tmp_path / "script.yaml").write_text(json.dumps(SCRIPT))
    done = CliRunner().invoke(cli, ["run", "spec.yaml", "--script", "script.yaml"])
    assert done.exit_code == 0, done.output
    warned = [line for line in done.output.splitlines() if "summarization failed" in line]
    # each of the three failures once: ADK's check after the first turn, the check before
    # the second turn's model call, ADK's check after the second turn
    assert warned == [WARNING] * 3
    assert "[scribe] It is 4417." in done.output  # the turn itself was not failed


def test_a_scenario_fails_unless_it_declares_the_failure(spec_dir: Any, tmp_path: Path
                                                         ) -> None:
    _spec(spec_dir)
    scenario: dict[str, Any] = {**SCRIPT, "expect": {"final": "4417"}}
    (tmp_path / "scenario.yaml").write_text(json.dumps(scenario))
    done = CliRunner().invoke(cli, ["test", "spec.yaml", "scenario.yaml"])
    assert done.exit_code == 1, done.output
    assert ("unexpected error: agent `summarizer` failed: summarization failed: "
            "ScriptedFailure: summarizer: the summarizer model is down") in done.output
    scenario["expect"]["errors"] = [{"agent": "summarizer", "contains": "model is down"}]
    (tmp_path / "scenario.yaml").write_text(json.dumps(scenario))
    done = CliRunner().invoke(cli, ["test", "spec.yaml", "scenario.yaml"])
    assert done.exit_code == 0, done.output


# an `invocations` trigger: only ADK's own check after each turn summarizes, and ADK only logs
# a summarizer's failure there; the summarizer agentspec hands ADK records it in the session

def _every_turn(spec_dir: Any) -> None:
    spec_dir(SPEC.replace("tokens: 60", "invocations: 1").replace("events: 5", "invocations: 0"))


def test_run_warns_when_a_summary_after_the_turn_fails(spec_dir: Any, tmp_path: Path,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    _every_turn(spec_dir)
    script = {**SCRIPT, "replies": {**SCRIPT["replies"], "summarizer": [
        {"fail": "the summarizer model is down"}, {"text": "A locker code was noted."}]}}
    (tmp_path / "script.yaml").write_text(json.dumps(script))
    done = CliRunner().invoke(cli, ["run", "spec.yaml", "--script", "script.yaml"])
    assert done.exit_code == 0, done.output
    lines = [line for line in done.output.splitlines() if line.startswith(("you>", "[scribe]"))]
    assert lines == ["you> " + TURNS[0], "[scribe] Noted.", WARNING,  # the first turn's
                     "you> What is my locker code?", "[scribe] It is 4417."]  # the second's
    # summary was made
    # ... and said once: not again by ADK's log, which a plain `agentspec run` prints to
    # stderr with a traceback (under pytest the log goes to caplog instead)
    assert not [r for r in caplog.records if r.name.startswith("google_adk")
                and "compaction failed" in r.getMessage()], caplog.text


def test_a_summary_after_the_last_turn_that_fails_fails_the_scenario(
        spec_dir: Any, tmp_path: Path) -> None:
    _every_turn(spec_dir)
    scenario: dict[str, Any] = {
        "messages": [TURNS[0]], "expect": {"final": "Noted."},
        "replies": {"scribe": [{"text": "Noted."}],
                    "summarizer": [{"fail": "the summarizer model is down"}]}}
    (tmp_path / "scenario.yaml").write_text(json.dumps(scenario))
    done = CliRunner().invoke(cli, ["test", "spec.yaml", "scenario.yaml"])
    assert done.exit_code == 1, done.output
    assert ("unexpected error: agent `summarizer` failed: summarization failed: "
            "ScriptedFailure: summarizer: the summarizer model is down") in done.output
    scenario["expect"]["errors"] = [{"agent": "summarizer", "contains": "model is down"}]
    (tmp_path / "scenario.yaml").write_text(json.dumps(scenario))
    done = CliRunner().invoke(cli, ["test", "spec.yaml", "scenario.yaml"])
    assert done.exit_code == 0, done.output


def test_a_failure_after_the_turn_is_an_event_of_the_session(spec_dir: Any) -> None:
    import asyncio

    from google.adk.runners import InMemoryRunner
    from google.genai import types

    from agentspec.compiler import build_objects, compile_spec
    from agentspec.runtime.failures import failures_in
    from agentspec.testing.scripted import install_script

    _every_turn(spec_dir)
    app, problems = build_objects(compile_spec(Path("spec.yaml")))
    assert not problems

    async def main() -> list[Any]:
        install_script(app.root_agent, {"scribe": [{"text": "Noted."}], "summarizer": [
            {"fail": "the summarizer model is down"}]}, app.events_compaction_config)
        runner = InMemoryRunner(app=app)
        try:
            await runner.session_service.create_session(app_name=app.name, user_id="u",
                                                        session_id="s")
            said = types.Content(role="user", parts=[types.Part(text=TURNS[0])])
            yielded = [event.id async for event in runner.run_async(
                user_id="u", session_id="s", new_message=said)]
            session = await runner.session_service.get_session(app_name=app.name,
                                                               user_id="u", session_id="s")
            assert session is not None
            return [e for e in session.events if e.id not in yielded and e.author != "user"]
        finally:
            await runner.close()

    after = asyncio.run(main())
    assert [str(f) for e in after for f in failures_in(e)] == [
        "agent `summarizer` failed: summarization failed: ScriptedFailure: summarizer: the "
        "summarizer model is down"]
    assert after[0].content is None  # no model sees it


def test_a_failure_is_recorded_only_in_its_own_conversation(caplog: Any) -> None:
    """The run a failure after the turn is recorded in is the one whose events were being
    summarized: a run published earlier in the task (by a package without the plugin, whose
    own runs publish nothing) is another conversation, and the failure is only logged."""
    import asyncio
    from types import SimpleNamespace

    import pytest
    from google.adk.apps.base_events_summarizer import BaseEventsSummarizer
    from google.adk.events.event import Event

    from agentspec.runtime import summarization

    class Failing(BaseEventsSummarizer):
        async def maybe_summarize_events(self, *, events: list[Event]) -> Event | None:
            raise ValueError("the summarizer model is down")

    appended: list[Event] = []

    class Service:
        async def append_event(self, *, session: Any, event: Event) -> Event:
            appended.append(event)
            return event

    run = SimpleNamespace(session=SimpleNamespace(events=[Event(author="user", id="mine")]),
                          session_service=Service(), agent=None, invocation_id="i",
                          branch=None)
    token = summarization._RUN.set(run)  # type: ignore[arg-type]
    try:
        for event_id in ("theirs", "mine"):
            with pytest.raises(ValueError):
                asyncio.run(summarization.ReportingSummarizer(Failing()).maybe_summarize_events(
                    events=[Event(author="user", id=event_id)]))
    finally:
        summarization._RUN.reset(token)
    assert "summarization failed after the turn" in caplog.text  # "theirs": logged only
    assert [e.custom_metadata for e in appended] == [{summarization.FAILED_KEY: {
        "agent": "summarizer", "error": "ValueError: the summarizer model is down",
        "note": "the conversation went on unsummarized"}}]
