"""How `agentspec eval` plays a case, offline (scripted replies): the turns go through the
helper scenarios use (`agentspec.testing.turns`), so a run in which an agent failed is a
failed run, not a run to score; an approval nobody can give stops the run saying so; a
tool's error result the agent goes on from is part of what is scored; and the run's
`type: store` files stay out of the project's database."""

from __future__ import annotations

import json
import logging
import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from agentspec.cli import cli
from tests.buildkit import project_files
from tests.test_failures import ROUTER

AGENT_TOOL = """\
    agentspec: 1
    name: desk
    root: lead
    tools:
      lookup: {python: "desk_tools:lookup"}
      wipe: {python: "desk_tools:wipe"}
    agents:
      lead:
        model: gemini-2.5-flash
        instruction: Ask the helper.
        tools: [{agent: helper}, lookup, wipe]
        interrupt_on: {wipe: true}
      helper: {description: Helps., model: gemini-2.5-flash, instruction: Help.}
    """
TOOLS = '''\
    def lookup(key: str) -> dict:
        """Looks a key up."""
        raise KeyError(key)


    def wipe() -> str:
        """Wipes."""
        return "wiped"
    '''


def _project(root: Path, replies: dict[str, list[Any]], tools: list[Any],
             spec: str = AGENT_TOOL) -> Path:
    """The spec, its tools, and an eval file of one case: one turn expecting `tools`, the
    models answering `replies`."""
    (root / "evals").mkdir(exist_ok=True)
    (root / "agent.yaml").write_text(textwrap.dedent(spec))
    (root / "desk_tools.py").write_text(textwrap.dedent(TOOLS))
    (root / "evals" / "agent.yaml").write_text(json.dumps({
        "criteria": {"tool_trajectory_avg_score": 1.0},
        "cases": [{"name": "one", "turns": [{"user": "Hi", "tools": tools}],
                   "replies": replies}]}))
    return root / "agent.yaml"


def _eval(spec: Path, *args: str) -> tuple[Result, dict[str, Any]]:
    result = CliRunner().invoke(cli, ["eval", str(spec), "--format", "json", *args],
                                prog_name="agentspec")
    assert "Traceback" not in result.output, result.output
    (case,) = json.loads(result.output)["cases"]
    (score,) = case["criteria"]
    return result, score


HELPER = [{"name": "helper", "args": {"request": "help"}}]
LEAD = [{"call": "helper", "args": {"request": "help"}}, {"text": "Done."}]


def test_an_agent_that_failed_inside_an_agent_tool_fails_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lead goes on after its helper raised and calls the tool the case expects: the
    run was scored 1.0 and passed before; an agent that failed fails the run, as in a
    scenario."""
    monkeypatch.chdir(tmp_path)
    spec = _project(tmp_path, {"lead": LEAD, "helper": [{"fail": "the helper is down"}]}, HELPER)
    result, score = _eval(spec)
    assert result.exit_code == 1, result.output
    assert (score["scores"], score["passed"]) == ([None], False)
    assert score["errors"] == ["the run failed: agent `helper` failed: ScriptedFailure: "
                               "helper: the helper is down"]


def test_a_script_that_runs_out_inside_an_agent_tool_fails_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = _project(tmp_path, {"lead": LEAD, "helper": []}, HELPER)
    result, score = _eval(spec, "--runs", "2")
    assert result.exit_code == 1, result.output
    assert score["scores"] == [None, None]
    assert score["errors"] == ["the run failed: agent `helper` failed: ScriptError: the "
                               "script has no more replies for agent `helper`"] * 2


def test_a_failed_run_logs_no_traceback_of_its_own(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The failure is on the case's report; ADK's traceback of the node that failed is not
    logged as well (it was, for every failed agent)."""
    from agentspec.evaluation.app import app_factory
    from agentspec.evaluation.cases import Case, ExpectedTurn
    from agentspec.evaluation.runner import run_case

    replies = {"lead": LEAD, "helper": [{"fail": "the helper is down"}]}
    spec = _project(tmp_path, replies, HELPER)
    case = Case("one", [ExpectedTurn("Hi", [("helper", {"request": "help"})])],
                {"tool_trajectory_avg_score": 1.0}, replies=replies)
    with caplog.at_level(logging.ERROR):
        result = run_case(case, app_factory(spec, None))
    assert result.scores["tool_trajectory_avg_score"].scores == [None]
    assert [r.getMessage() for r in caplog.records if r.exc_info] == []


def test_an_approval_an_evaluation_cannot_give_fails_the_run_saying_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = _project(tmp_path, {"lead": [{"call": "wipe"}, {"text": "Wiped."}]}, ["wipe"])
    result, score = _eval(spec)
    assert result.exit_code == 1, result.output
    assert score["errors"] == ["the run failed: `wipe` of `lead` waits for a person's "
                               "approval, which an evaluation cannot give"]


def test_a_tool_error_the_agent_goes_on_from_is_scored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`tool_errors: return` (the default) makes a raising tool's error a result the model
    answers: that is the agent's behaviour, which the criteria score; no run failure."""
    monkeypatch.chdir(tmp_path)
    spec = _project(tmp_path, {"lead": [
        {"call": "lookup", "args": {"key": "k"}},
        {"when": "KeyError", "text": "There is no such key."}]},
        [{"name": "lookup", "args": {"key": "k"}}])
    result, score = _eval(spec)
    assert result.exit_code == 0, result.output
    assert (score["scores"], score["errors"]) == ([1.0], [])


STORE = """\
    agentspec: 1
    name: keeper
    sessions: sqlite:///.agentspec/sessions.db
    backends:
      notes: {type: store}
    agents:
      keeper:
        model: gemini-2.5-flash
        instruction: Keep notes.
        filesystem: notes
    """


def test_a_runs_store_files_stay_out_of_the_projects_database(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each run writes `/once.md` into a database of its own: the project's gets nothing
    (it got the file before), and the second run finds no file of the first (before, its
    `read_file` found the first run's, so the runs were not independent)."""
    monkeypatch.chdir(tmp_path)
    spec = _project(tmp_path, {"keeper": [
        {"call": "read_file", "args": {"file_path": "/once.md"}},
        {"when": "not found", "call": "write_file",
         "args": {"file_path": "/once.md", "content": "x"}},
        {"text": "Saved."}]},
        [{"name": "read_file", "args": {"file_path": "/once.md"}},
         {"name": "write_file", "args": {"file_path": "/once.md", "content": "x"}}], STORE)
    result, score = _eval(spec, "--runs", "2")
    assert result.exit_code == 0, result.output
    assert (score["scores"], score["errors"]) == ([1.0, 1.0], [])
    assert project_files(tmp_path) == []


def test_a_routers_failed_choice_fails_the_run_though_a_fallback_answered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a scenario: the fallback's answer is no run of the spec as written."""
    monkeypatch.chdir(tmp_path)
    spec = _project(tmp_path, {"billing": [{"fail": "billing is down"}],
                               "general": [{"text": "General answers."}]}, [], ROUTER)
    result, score = _eval(spec)
    assert result.exit_code == 1, result.output
    assert score["errors"] == ["the run failed: agent `billing` failed: ScriptedFailure: "
                               "billing: billing is down"]
