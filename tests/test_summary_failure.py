"""A summarizer that fails is not silent (issue 23, item 1): the run goes on with the whole
conversation, as ADK does, and the failure is an event that `agentspec run` shows as a
warning and `agentspec test` counts as an error of `summarizer` unless `expect.errors`
declares it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from agentspec.cli import cli
from tests.test_summarization import SPEC, TURNS

SCRIPT = {"messages": [TURNS[0], "What is my locker code?"],
          "replies": {"scribe": [{"text": "Noted."}, {"text": "It is 4417."}],
                      "summarizer": [{"fail": "the summarizer model is down"}] * 3}}


def _spec(spec_dir: Any) -> None:
    spec_dir(SPEC.replace("tokens: 60", "tokens: 20").replace("events: 5", "events: 1"))


def test_run_warns_and_goes_on_unsummarized(spec_dir: Any, tmp_path: Path) -> None:
    _spec(spec_dir)
    (tmp_path / "script.yaml").write_text(json.dumps(SCRIPT))
    done = CliRunner().invoke(cli, ["run", "spec.yaml", "--script", "script.yaml"])
    assert done.exit_code == 0, done.output
    warned = [line for line in done.output.splitlines() if "summarization failed" in line]
    assert warned == ["[scribe] warning: summarization failed, so the conversation went on "
                      "unsummarized: ScriptedFailure: summarizer: the summarizer model is "
                      "down"]
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
