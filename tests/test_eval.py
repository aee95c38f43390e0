"""`agentspec eval` end to end: cases run on a spec's Gemini model, served by the fake Gemini
API on loopback, which answers by rules (the agents' and the judge's); scored by ADK's own
evaluators; `--base` against a git revision; the ADK export read back."""

from __future__ import annotations

import json
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentspec.cli import cli
from tests.fakegemini import FakeGemini, Rule, serve, use_fake

SPEC = """\
agentspec: 1
name: weather_desk
tools:
  get_weather: {python: "weather_tools:get_weather"}
agents:
  weather:
    model: gemini-2.5-flash
    instruction: Tell the weather. Call get_weather for the city.
    tools: [get_weather]
"""
TOOLS = '''\
def get_weather(city: str) -> dict:
    """The weather in a city."""
    return {"city": city, "sky": "sunny", "celsius": 21}
'''
EVALS = """\
criteria:
  tool_trajectory_avg_score: 1.0
cases:
  - name: paris
    turns:
      - user: What is the weather in Paris?
        tools: [{name: get_weather, args: {city: Paris}}]
        reference: It is sunny in Paris, 21 degrees.
  - name: rome
    turns:
      - user: What is the weather in Rome?
        tools: [{name: get_weather, args: {city: Rome}}]
"""
#: the agent calls the tool for Paris, answers Rome without it (so `rome` fails)
AGENT_RULES = [
    Rule(r"weather in Paris", {"call": "get_weather", "args": {"city": "Paris"}}),
    Rule(r'"city": "Paris"', {"text": "It is sunny in Paris, 21 degrees."}),
    Rule(r"weather in Rome", {"text": "No idea about Rome."}),
]


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name="agentspec")


@pytest.fixture(scope="module")
def server() -> Iterator[FakeGemini]:
    with serve() as fake:
        yield fake


@pytest.fixture
def fake(server: FakeGemini, monkeypatch: pytest.MonkeyPatch) -> FakeGemini:
    """google-genai pointed at the fake: any key, the Gemini API (not Vertex)."""
    use_fake(monkeypatch, server.url)
    server.rules = list(AGENT_RULES)
    server.requests.clear()
    server.violations.clear()
    server.script_problems.clear()
    return server


def project(root: Path, evals: str = EVALS, spec: str = SPEC) -> Path:
    (root / "evals").mkdir(parents=True, exist_ok=True)
    (root / "agent.yaml").write_text(spec)
    (root / "weather_tools.py").write_text(TOOLS)
    (root / "evals" / "agent.yaml").write_text(textwrap.dedent(evals))
    return root / "agent.yaml"


def _by_case(output: str) -> dict[str, dict[str, object]]:
    report = json.loads(output)
    return {case["name"]: {c["criterion"]: c for c in case["criteria"]}
            for case in report["cases"]}


def test_a_passing_and_a_failing_case_over_runs(fake: FakeGemini, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = project(tmp_path)
    result = invoke("eval", str(spec), "--runs", "2", "--format", "json")
    assert result.exit_code == 1, result.output
    cases = _by_case(result.output)
    paris = cases["paris"]["tool_trajectory_avg_score"]
    rome = cases["rome"]["tool_trajectory_avg_score"]
    assert (paris["scores"], paris["passed"]) == ([1.0, 1.0], True)
    assert (rome["scores"], rome["passed"], rome["spread"]) == ([0.0, 0.0], False, 0.0)
    assert fake.violations == [] and fake.script_problems == []
    agents = [r for r in fake.requests if r.agent == "weather"]
    assert len(agents) == 6  # two runs: Paris asks twice (call, answer), Rome once

    table = invoke("eval", str(spec))
    assert table.exit_code == 1
    assert "paris  tool_trajectory_avg_score  1.00       1.00  0.00    pass" in table.output
    assert "1 passed, 1 failed (1 run each)" in table.output

    fake.rules.insert(0, Rule(r"weather in Rome", {"call": "get_weather",
                                                   "args": {"city": "Rome"}}))
    fake.rules.insert(0, Rule(r'"city": "Rome"', {"text": "Sunny in Rome."}))
    passing = invoke("eval", str(spec), "--format", "markdown")
    assert passing.exit_code == 0, passing.output
    assert "| rome | `tool_trajectory_avg_score` | 1.00 | 1.00 | 0.00 | ✅ pass |" in \
        passing.output


JUDGED = """\
judge: {model: gemini-2.5-flash}
criteria:
  final_response_match_v2: 0.5
  rubric_based_final_response_quality_v1: 1.0
cases:
  - name: paris
    turns:
      - user: What is the weather in Paris?
        reference: It is sunny in Paris, 21 degrees.
    rubrics: [The answer gives the temperature]
  - name: paris_again
    turns:
      - user: What is the weather in Paris, again?
        reference: It is sunny in Paris, 21 degrees.
    rubrics: [The answer gives the temperature]
"""
JUDGE_RULES = [
    # ADK's judge prompts: final_response_match_v2 asks for a JSON verdict, the rubric
    # criterion for Property / Rationale / Verdict lines
    Rule(r"is_the_agent_response_valid", {"text": '{"reasoning": "same facts", '
                                                  '"is_the_agent_response_valid": "valid"}'}),
    Rule(r"(?s)Property.*Verdict", {"text": "ID: rubric_1\nProperty: The answer gives the "
                                            "temperature\nRationale: it says 21 degrees\n"
                                            "Verdict: yes\n"}),
]


def test_judged_criteria_are_scored_by_the_judge_model_the_file_chooses(
        fake: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = project(tmp_path, JUDGED)
    fake.rules = [*JUDGE_RULES, *AGENT_RULES,
                  Rule(r"again", {"call": "get_weather", "args": {"city": "Paris"}})]
    result = invoke("eval", str(spec), "--format", "json")
    assert result.exit_code == 0, result.output
    cases = _by_case(result.output)
    for case in ("paris", "paris_again"):
        assert cases[case]["final_response_match_v2"]["mean"] == 1.0
        assert cases[case]["rubric_based_final_response_quality_v1"]["mean"] == 1.0
    judged = [r for r in fake.requests if r.agent is None]
    assert judged and {r.model for r in judged} == {"gemini-2.5-flash"}


def test_a_judge_model_failing_is_reported_on_the_case(
        fake: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The judge fails for one case (a 403 answered to its prompt; not a 503, which ADK's
    evaluators retry for four and a half minutes): that case's judged criterion fails with
    the reason; the other case and criterion are scored; no crash."""
    monkeypatch.chdir(tmp_path)
    spec = project(tmp_path, JUDGED.replace(
        "  rubric_based_final_response_quality_v1: 1.0\n", ""))
    fake.rules = [Rule(r"(?s)^(?=.*is_the_agent_response_valid)(?=.*again)",
                       {"fail": "the judge refuses this key", "status": 403}),
                  *JUDGE_RULES, *AGENT_RULES,
                  Rule(r"again", {"call": "get_weather", "args": {"city": "Paris"}})]
    result = invoke("eval", str(spec), "--format", "json")
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    cases = _by_case(result.output)
    assert cases["paris"]["final_response_match_v2"]["passed"] is True
    failed = cases["paris_again"]["final_response_match_v2"]
    assert failed["passed"] is False and failed["scores"] == [None]
    assert any("could not score" in e and "refuses this key" in e for e in failed["errors"]), failed


def test_a_malformed_eval_file_is_a_diagnostic_with_a_position(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = project(tmp_path, """\
        criteria:
          tool_trajectory_avg_scor: 1.0
        cases:
          - name: paris
            turns:
              - user: hi
                tools: [get_wether]
        """)
    result = invoke("eval", str(spec))
    assert result.exit_code == 2
    assert "evals/agent.yaml:2:3: AS101 Unknown key `tool_trajectory_avg_scor`" in \
        result.output
    assert "evals/agent.yaml:7:17: AS724" in result.output
    assert "Did you mean `get_weather`" in result.output
    checked = invoke("validate", str(spec))
    assert checked.exit_code == 1
    assert "evals/agent.yaml:2:3: AS101" in checked.output


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                   check=True, capture_output=True)


def test_base_shows_the_change_a_spec_change_makes_to_the_trajectory(
        fake: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At the base revision the agent has get_weather and calls it; the working tree's spec
    takes the tool away (the fake's rule calls it only when it is declared to the agent that
    has it), so the trajectory regresses; the markdown is ready for a pull request."""
    monkeypatch.chdir(tmp_path)
    spec = project(tmp_path)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "base")
    spec.write_text(SPEC.replace("weather:\n", "forecaster:\n")
                    .replace("    tools: [get_weather]\n", ""))
    fake.rules = [Rule(r"weather in Paris", {"call": "get_weather", "args": {"city": "Paris"}},
                       agent="weather"),
                  Rule(r"weather in Paris", {"text": "It is sunny in Paris, 21 degrees."},
                       agent="forecaster"), *AGENT_RULES]
    result = invoke("eval", "agent.yaml", "--base", "HEAD", "--format", "markdown")
    assert result.exit_code == 1, result.output
    assert "### Evaluation against `HEAD`: 1 regressed, 0 fixed" in result.output
    assert "| paris | `tool_trajectory_avg_score` | 1.00 | 1.00 | 0.00 | -1.00 | " \
           "🔻 regressed |" in result.output
    assert "| rome | `tool_trajectory_avg_score` | 1.00 | 0.00 | 0.00 | +0.00 | ❌ fail |" \
        in result.output
    shown = invoke("eval", "agent.yaml", "--base", "HEAD", "--format", "json")
    paris = next(c for c in json.loads(shown.output)["cases"] if c["case"] == "paris")
    assert (paris["verdict"], paris["change"]) == ("REGRESSED", -1.0)


def test_the_adk_export_reads_back_as_the_same_cases(
        fake: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = project(tmp_path)
    written = invoke("eval", str(spec), "--export-adk", "out")
    assert written.exit_code == 0, written.output
    folder = tmp_path / "out" / "evals_agent"
    eval_set = json.loads((folder / "evals_agent.evalset.json").read_text())
    paris = eval_set["eval_cases"][0]
    assert paris["session_input"]["app_name"] == "weather_desk"
    assert paris["conversation"][0]["intermediate_data"]["tool_uses"][0]["args"] == \
        {"city": "Paris"}
    config = json.loads((folder / "test_config.json").read_text())
    assert config["criteria"]["tool_trajectory_avg_score"]["threshold"] == 1.0
    direct = _by_case(invoke("eval", str(spec), "--format", "json").output)
    again = invoke("eval", str(spec), str(folder / "evals_agent.evalset.json"), "--format",
                   "json")
    assert again.exit_code == 1, again.output
    assert _by_case(again.output) == {
        name: {c: {**s, "criterion": c} for c, s in scores.items()}
        for name, scores in direct.items()}


def test_a_malformed_adk_eval_set_is_reported(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = project(tmp_path)
    (tmp_path / "bad.evalset.json").write_text('{"eval_set_id": "x",\n "eval_cases": [\n'
                                               '  {"conversation": []}]}')
    result = invoke("eval", str(spec), "bad.evalset.json")
    assert result.exit_code == 2
    assert "bad.evalset.json:3:3: AS727 `eval_cases.0` (`evalId`): Field required" in \
        result.output


@pytest.mark.slow
def test_adk_eval_runs_the_exported_set_on_the_generated_package(
        fake: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`adk eval` (ADK's own CLI, in a process of its own) runs what `--export-adk` wrote on
    the package `agentspec build` generated, against the fake: `paris` passes, `rome` (the
    agent never calls the tool) fails, as `agentspec eval` scores them."""
    import os
    import sys

    monkeypatch.chdir(tmp_path)
    spec = project(tmp_path)
    assert invoke("build", str(spec)).exit_code == 0
    assert invoke("eval", str(spec), "--export-adk", "out").exit_code == 0
    folder = tmp_path / "out" / "evals_agent"
    adk = Path(sys.executable).parent / "adk"
    done = subprocess.run(
        [str(adk), "eval", str(tmp_path / "weather_desk"),
         str(folder / "evals_agent.evalset.json"), "--config_file_path",
         str(folder / "test_config.json"), "--print_detailed_results"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(tmp_path)})
    output = done.stdout + done.stderr
    assert "Eval Run Summary" in output, output
    assert "Tests passed: 1" in output and "Tests failed: 1" in output, output
    assert fake.violations == [] and fake.script_problems == []
    assert any(r.agent == "weather" for r in fake.requests)


def test_the_export_takes_the_spec_scenarios_and_refuses_a_link(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = project(tmp_path)
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "agent.yaml").write_text(
        "messages: [Weather in Paris?]\nreplies:\n  weather:\n"
        "    - {call: get_weather, args: {city: Paris}}\n    - {text: Sunny.}\n"
        "expect: {tools: [get_weather]}\n")
    written = invoke("eval", str(spec), "--export-adk", "out")
    assert written.exit_code == 0, written.output
    assert "wrote out/scenarios_agent/" in written.output
    eval_set = json.loads((tmp_path / "out" / "scenarios_agent" /
                           "scenarios_agent.evalset.json").read_text())
    (turn,) = eval_set["eval_cases"][0]["conversation"]
    assert turn["user_content"]["parts"][0]["text"] == "Weather in Paris?"
    assert turn["intermediate_data"]["tool_uses"][0]["name"] == "get_weather"
    config = json.loads((tmp_path / "out" / "scenarios_agent" / "test_config.json")
                        .read_text())["criteria"]["tool_trajectory_avg_score"]
    assert (config["matchType"], config["ignoreArgs"]) == (2, True)  # ANY_ORDER, by name

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "evals_agent").symlink_to(elsewhere)
    refused = invoke("eval", str(spec), "--export-adk", "linked")
    assert refused.exit_code == 1 and "cannot write linked" in refused.output, refused.output
    assert list(elsewhere.iterdir()) == []


def test_scores_over_runs_give_mean_spread_and_the_delta_verdicts() -> None:
    from agentspec.evaluation.report import deltas
    from agentspec.evaluation.runner import CaseResult, Score

    mixed = Score("tool_trajectory_avg_score", 0.5, [1.0, 0.0, 1.0, 0.0])
    assert (mixed.mean, mixed.spread, mixed.passed) == (0.5, 0.5, True)
    unscored = Score("final_response_match_v2", 0.5, [1.0, None], ["the judge failed"])
    assert (unscored.mean, unscored.passed) == (1.0, False)  # an unscored run fails it
    base = [CaseResult("a", "x", {"t": Score("t", 1.0, [1.0])}),
            CaseResult("b", "x", {"t": Score("t", 1.0, [0.0])})]
    new = [CaseResult("a", "x", {"t": Score("t", 1.0, [0.0])}),
           CaseResult("b", "x", {"t": Score("t", 1.0, [1.0])}),
           CaseResult("c", "x", {"t": Score("t", 1.0, [1.0])})]
    assert [(d.case, d.verdict, d.change) for d in deltas(base, new)] == [
        ("a", "REGRESSED", -1.0), ("b", "fixed", 1.0), ("c", "new", None)]
