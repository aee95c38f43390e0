"""Usage and cost: each model call's usage metadata, as the fake Gemini API reports it, summed
per agent, per model, per turn and per run by `agentspec run`; prices from the dated table or
a model's `price:`; a `budget:` that stops the run before the next model call."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentspec.cli import cli
from agentspec.runtime.jobs import Job
from agentspec.runtime.usage import Tokens, call_cost
from tests.fakegemini import FakeGemini, serve, use_fake

SPEC = """\
    agentspec: 1
    name: help_desk
    root: front
    models:
      pro: {{id: gemini-2.5-pro}}
      cheap: {{id: gemini-2.5-flash-lite, price: {{input: 1, output: 2, cached: 0.5}}}}
    {budget}
    agents:
      front:
        model: gemini-2.5-flash
        description: Greets people.
        instruction: Hand over to the specialist.
        sub_agents: [specialist]
      specialist:
        model: {specialist_model}
        description: Answers questions.
        instruction: Answer.
    """
REPLIES = {"front": [{"transfer": "specialist"}],
           "specialist": [{"text": "Lisbon has about 545000 people."}]}
USAGE = {"promptTokenCount": 1200, "cachedContentTokenCount": 200, "candidatesTokenCount": 300,
         "thoughtsTokenCount": 50, "totalTokenCount": 1550}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGemini]:
    with serve(FakeGemini(replies={k: list(v) for k, v in REPLIES.items()},
                          usage=dict(USAGE))) as server:
        use_fake(monkeypatch, server.url)
        yield server


def _spec(tmp_path: Path, *, budget: str = "", specialist_model: str = "pro") -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(SPEC.format(budget=budget,
                                                specialist_model=specialist_model)))
    return path


def test_run_sums_the_usage_the_model_service_reports(tmp_path: Path,
                                                       fake: FakeGemini) -> None:
    done = CliRunner().invoke(cli, ["run", str(_spec(tmp_path)), "Lisbon?", "--usage"])
    assert done.exit_code == 0, done.output
    assert len(fake.requests) == 2
    # per call: 1200 prompt tokens (200 cached), 300 + 50 thinking out
    flash = (1000 * 0.30 + 200 * 0.03 + 350 * 2.50) / 1e6  # the dated table
    pro = (1000 * 1.25 + 200 * 0.125 + 350 * 10.0) / 1e6
    assert f"turn usage: 3100 tokens (2400 in, 400 cached, 700 out) in 2 calls, " \
           f"${flash + pro:.4f}" in done.output
    assert f"  agent front: 1550 tokens (1200 in, 200 cached, 350 out) in 1 call, " \
           f"${flash:.4f}" in done.output
    assert f"  model gemini-2.5-pro: 1550 tokens (1200 in, 200 cached, 350 out) in 1 " \
           f"call, ${pro:.4f}" in done.output
    assert f"usage: 3100 tokens (2400 in, 400 cached, 700 out) in 2 calls, " \
           f"${flash + pro:.4f}" in done.stderr


def test_a_spec_price_wins_over_the_table(tmp_path: Path, fake: FakeGemini) -> None:
    done = CliRunner().invoke(cli, ["run", str(_spec(tmp_path, specialist_model="cheap")),
                                    "Lisbon?"])
    assert done.exit_code == 0, done.output
    own = (1000 * 1 + 200 * 0.5 + 350 * 2) / 1e6
    assert f"  agent specialist: 1550 tokens (1200 in, 200 cached, 350 out) in 1 call, " \
           f"${own:.4f}" in done.stderr


def test_an_unknown_price_is_reported_as_unknown() -> None:
    call = Tokens(calls=1, prompt=10, output=5)
    assert call_cost(call, "gemini-3-ultra-preview", {}) is None
    assert call_cost(call, "anthropic/claude-sonnet-4-5", {}) is None
    assert call_cost(call, "models/gemini-2.5-flash-001", {}) == pytest.approx(
        (10 * 0.30 + 5 * 2.50) / 1e6)
    total = Tokens()
    total.add(Tokens(calls=1, cost=0.5))
    total.add(Tokens(calls=1, cost=None))
    assert total.cost is None and "cost unknown" in total.text()


def test_a_long_prompt_is_billed_at_the_long_context_price() -> None:
    call = Tokens(calls=1, prompt=300_000, output=1000)
    assert call_cost(call, "gemini-2.5-pro", {}) == pytest.approx(
        (300_000 * 2.50 + 1000 * 15.0) / 1e6)


def test_a_token_budget_stops_the_run_before_the_next_model_call(
        tmp_path: Path, fake: FakeGemini) -> None:
    spec = _spec(tmp_path, budget="budget: {run: {tokens: 1500}}")
    done = CliRunner().invoke(cli, ["run", str(spec), "Lisbon?"])
    assert done.exit_code == 1, done.output
    assert len(fake.requests) == 1  # front's call; the specialist's was never sent
    assert "agentspec: the run stopped: the run's budget of 1500 tokens is spent (1550 " \
           "tokens in 1 model calls); agent `specialist`'s next model call was not made " \
           "(`budget.run.tokens`)" in done.stderr
    assert "usage: 1550 tokens" in done.stderr


def test_a_cost_budget_stops_the_run(tmp_path: Path, fake: FakeGemini) -> None:
    spec = _spec(tmp_path, budget="budget: {run: {cost: 0.001}}")
    done = CliRunner().invoke(cli, ["run", str(spec), "Lisbon?"])
    assert done.exit_code == 1, done.output
    assert len(fake.requests) == 1
    assert "the run's budget of $0.001 is spent ($0.0012 in 1 model calls); agent " \
           "`specialist`'s next model call was not made (`budget.run.cost`)" in done.stderr


def test_the_budget_counts_each_run_alone(tmp_path: Path) -> None:
    """A run is one message and what it causes: the next message starts from nothing
    (scripted models report 2 tokens for the first call here, so a budget summed over the
    conversation would stop the second)."""
    spec = _spec(tmp_path, budget="budget: {run: {tokens: 2}}")
    script = tmp_path / "script.yaml"
    script.write_text("messages: [a, b]\nreplies: {front: [{text: one}, {text: two}]}\n")
    done = CliRunner().invoke(cli, ["run", str(spec), "--script", str(script), "--usage"])
    assert done.exit_code == 0, done.output
    assert "[front] two" in done.output
    assert "turn usage: 2 tokens (1 in, 1 out) in 1 call" in done.output


# background jobs --------------------------------------------------------------------------

JOB_SPEC = """\
agentspec: 1
name: scoring
{budget}
tools:
  lookup: {{python: "score_tools:lookup"}}
agents:
  lead:
    model: gemini-2.5-flash
    instruction: Help.
    sub_agents: [scorer]
  scorer:
    description: Scores a topic.
    mode: single_turn
    execution_mode: offline
    model: gemini-2.5-flash
    instruction: Look it up, then score it.
    tools: [lookup]
jobs:
  store: "sqlite:///jobs.db"
  max_attempts: 1
"""


def _job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, budget: str) -> tuple[str, Job]:
    from agentspec.runtime.jobs.stores import open_store
    from tests.buildkit import purge

    monkeypatch.delenv("AGENTSPEC_JOBS_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    purge("score_tools")
    (tmp_path / "score_tools.py").write_text(
        "def lookup(topic: str) -> dict:\n    \"\"\"Look a topic up.\"\"\"\n"
        "    return {'topic': topic}\n")
    (tmp_path / "j.yaml").write_text(JOB_SPEC.format(budget=budget))
    (tmp_path / "run.yaml").write_text(
        "replies:\n  lead:\n    - {call: scorer, args: {request: score eels}}\n"
        "    - {text: queued}\n")
    (tmp_path / "w.yaml").write_text(
        "replies:\n  scorer:\n    - {call: lookup, args: {topic: eels}}\n"
        "    - {text: '90'}\n")
    ran = CliRunner().invoke(cli, ["run", "--script", "run.yaml", "j.yaml", "hi"])
    assert ran.exit_code == 0, ran.output
    worked = CliRunner().invoke(cli, ["worker", "--until-idle", "--script", "w.yaml",
                                      "j.yaml"])
    [job] = open_store(f"sqlite:///{tmp_path / 'jobs.db'}").recent()
    return worked.output, job


def test_the_worker_reports_each_jobs_usage(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    output, job = _job(tmp_path, monkeypatch, "")
    assert job.status == "DONE", output
    done = [line for line in output.splitlines() if line.strip().startswith("done")]
    assert len(done) == 1 and " tokens (" in done[0] and "in 2 calls" in done[0], output
    # the job record keeps them: `jobs show` and `jobs list --json`
    assert job.usage["total"]["calls"] == 2 and set(job.usage["agents"]) == {"scorer"}
    shown = CliRunner().invoke(cli, ["jobs", "--spec", "j.yaml", "show", job.id])
    assert "usage: " in shown.output and "in 2 calls" in shown.output, shown.output
    listed = CliRunner().invoke(cli, ["jobs", "--spec", "j.yaml", "--json", "list"])
    assert json.loads(listed.output)[0]["usage"] == job.usage


def test_a_job_budget_stops_the_job_before_its_next_model_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    output, job = _job(tmp_path, monkeypatch, "budget: {job: {tokens: 1}}")
    assert job.status == "FAILED", output
    assert str(job.error).startswith("the job's budget of 1 tokens is spent"), job.error
    assert job.result is None
    assert job.usage["total"]["calls"] == 1  # the call before the stop, kept on the record


# scenarios --------------------------------------------------------------------------------

SCENARIO = """\
messages: [Lisbon?]
replies:
  front: [{transfer: specialist}]
  specialist: [{text: About 545000 people.}]
expect: {final: About 545000 people.}
"""


def test_a_scenario_over_the_wire_sums_the_usage_the_service_reported(
        tmp_path: Path, fake: FakeGemini) -> None:
    from agentspec.runtime.usage import Ledger
    from agentspec.testing.runner import load_scenarios, run_scenario
    from tests.test_wire import over_the_wire

    spec = _spec(tmp_path)
    (tmp_path / "scenario.yaml").write_text(SCENARIO)
    [scenario] = load_scenarios(tmp_path / "scenario.yaml")
    usage = Ledger()
    assert run_scenario(spec, None, scenario, 0, script=over_the_wire(fake), usage=usage) == []
    assert len(fake.requests) == 2
    assert usage.total.as_json() == {
        "calls": 2, "prompt_tokens": 2400, "cached_tokens": 400, "output_tokens": 700,
        "thinking_tokens": 100, "total_tokens": 3100,
        "cost_usd": round((1000 * 0.30 + 200 * 0.03 + 350 * 2.50 +
                           1000 * 1.25 + 200 * 0.125 + 350 * 10.0) / 1e6, 6)}
    assert set(usage.agents) == {"front", "specialist"}


def test_test_format_json_reports_each_scenarios_usage(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    (tmp_path / "scenario.yaml").write_text(SCENARIO)
    done = CliRunner().invoke(cli, ["test", str(spec), str(tmp_path / "scenario.yaml"),
                                    "--format", "json"])
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)
    assert (report["passed"], report["failed"]) == (1, 0)
    [scenario] = report["scenarios"]
    assert scenario["passed"] and scenario["failures"] == []
    assert scenario["usage"]["total"]["calls"] == 2
    assert set(scenario["usage"]["agents"]) == {"front", "specialist"}
    assert report["usage"]["total"] == scenario["usage"]["total"]


def test_run_streams_the_answer_and_prints_it_once(tmp_path: Path, fake: FakeGemini) -> None:
    """The fake sends a streamed text in two chunks; `run` prints them as one line, once,
    and counts the call once."""
    done = CliRunner().invoke(cli, ["run", str(_spec(tmp_path)), "Lisbon?", "--usage"])
    assert done.exit_code == 0, done.output
    assert all(request.stream for request in fake.requests)
    assert done.output.count("Lisbon has about 545000 people.") == 1
    assert "[specialist] Lisbon has about 545000 people.\n" in done.output
    assert "turn usage: 3100 tokens" in done.output


def test_echo_prints_streamed_chunks_as_they_arrive(capsys: pytest.CaptureFixture[str]) -> None:
    from google.adk.events.event import Event
    from google.genai import types

    from agentspec.cli.run_output import Echo

    def said(text: str, *, partial: bool) -> Event:
        return Event(author="writer", partial=partial, invocation_id="i",
                     content=types.Content(role="model", parts=[types.Part(text=text)]))

    echo = Echo()
    echo(said("Hel", partial=True))
    assert capsys.readouterr().out == "[writer] Hel"  # before the answer is complete
    echo(said("lo", partial=True))
    assert capsys.readouterr().out == "lo"
    echo(said("Hello", partial=False))  # the whole answer: already shown
    assert capsys.readouterr().out == "\n"
    echo(said("Again", partial=False))  # not streamed: shown whole
    assert capsys.readouterr().out == "[writer] Again\n"


def test_scenarios_of_a_spec_with_a_cost_budget_run(tmp_path: Path) -> None:
    """Scripted replies cost nothing (no service is called), so a cost budget does not stop
    a scenario at its second model call for want of a price."""
    spec = _spec(tmp_path, budget="budget: {run: {cost: 0.01}}")
    (tmp_path / "scenario.yaml").write_text(SCENARIO)
    done = CliRunner().invoke(cli, ["test", str(spec), str(tmp_path / "scenario.yaml"),
                                    "--format", "json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["usage"]["total"]["cost_usd"] == 0.0


def test_the_elapsed_line_is_for_a_terminal_and_keeps_off_prompts() -> None:
    import io

    from agentspec.cli.progress import Elapsed

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    piped = io.StringIO()
    with Elapsed(piped).running():
        pass
    assert piped.getvalue() == ""  # not a terminal: nothing, ever
    terminal = Terminal()
    elapsed = Elapsed(terminal)
    elapsed.shown = True  # as after a tick
    with elapsed.paused():
        assert terminal.getvalue() == "\r\033[K" and elapsed.held  # cleared, and held
    assert not elapsed.held


def test_verbose_prints_the_exact_request_each_model_receives(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    script = tmp_path / "script.yaml"
    script.write_text("messages: [Lisbon?]\nreplies: {front: [{transfer: specialist}], "
                      "specialist: [{text: Sunny.}]}\n")
    done = CliRunner().invoke(cli, ["run", str(spec), "--script", str(script), "--verbose"])
    assert done.exit_code == 0, done.output
    shown = done.stderr
    assert "[front] request to scripted:\n  instruction:\n    Hand over to the specialist." \
        in shown
    assert "  user: [{\"text\": \"Lisbon?\"}]" in shown
    assert '  tool: {"description": ' in shown and '"name": "transfer_to_agent"' in shown
    assert "[specialist] request to scripted:" in shown
    assert "request to" not in done.stdout  # the conversation stays apart
