"""`agentspec test`: every shipped spec's scenario passes; failures are reported like pytest
and exit 1; stubs, initial state and each kind of expectation work."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentspec.cli import cli
from tests.buildkit import ROOT


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, ["test", *args], prog_name="agentspec")


@pytest.mark.parametrize("spec", sorted(p.stem for p in (ROOT / "specs").glob("*.yaml")))
def test_every_shipped_spec_passes_its_scenarios(spec: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUPPORT_QUEUE_DIR", "/nonexistent-never-written")
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)  # research_desk's scenario sets it
    workspace = sorted((ROOT / "specs" / "workspace").iterdir())
    done = invoke(str(ROOT / "specs" / f"{spec}.yaml"))
    assert done.exit_code == 0, done.output
    assert " PASSED" in done.output and "FAILED" not in done.output
    assert sorted((ROOT / "specs" / "workspace").iterdir()) == workspace  # nothing written


SPEC = """\
    agentspec: 1
    name: helpdesk
    tools:
      lookup: {python: desk_tools:lookup}
      wipe: {python: desk_tools:wipe}
    agents:
      desk:
        model: gemini-2.5-flash
        instruction: Help {customer?}.
        tools: [lookup, wipe]
        output_key: answer
        sub_agents: [clerk]
      clerk:
        description: Files paperwork.
        model: gemini-2.5-flash
        instruction: File it.
    """
TOOLS = '''\
def lookup(city: str) -> dict:
    """Look a city up."""
    return {"city": city, "population": 545000}


def wipe() -> dict:
    """Wipes everything (never called in these tests: stubbed)."""
    raise RuntimeError("the real wipe ran")
'''
SCENARIOS = """\
    scenarios:
      - name: looks Lisbon up
        state: {customer: Ana}
        messages: [How big is Lisbon?]
        replies:
          desk:
            - {call: lookup, args: {city: Lisbon}}
            - {text: Lisbon has about 545000 people.}
        expect:
          tools: [{name: lookup, args: {city: Lisbon}}]
          not_tools: [wipe]
          agents: [desk]
          state: {answer: Lisbon has about 545000 people., customer: Ana}
          final: {matches: "^Lisbon has about \\\\d+ people"}
      - name: a stubbed tool never runs
        messages: [Wipe it]
        stubs: {wipe: {wiped: false}}
        replies:
          desk: [{call: wipe}, {text: Nothing was wiped.}]
        expect:
          tools: [wipe]
          final: Nothing was wiped
      - name: wrong expectations fail
        messages: [How big is Porto?]
        replies:
          desk: [{call: lookup, args: {city: Porto}}, {text: Porto is small.}]
        expect:
          tools: [{name: lookup, args: {city: Lisbon}}]
          agents: [clerk]
          state: {answer: big}
          final: {contains: huge}
          jobs: [{status: QUEUED}]
    """


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    (tmp_path / "desk_tools.py").write_text(TOOLS)
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(SPEC))
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "spec.yaml").write_text(textwrap.dedent(SCENARIOS))
    return tmp_path


def test_passes_and_failures_are_reported(desk: Path) -> None:
    done = invoke(str(desk / "spec.yaml"))
    assert done.exit_code == 1, done.output
    lines = done.output.splitlines()
    assert lines[0].endswith("::looks Lisbon up PASSED")
    assert lines[1].endswith("::a stubbed tool never runs PASSED")
    assert lines[2].endswith("::wrong expectations fail FAILED")
    failures = "\n".join(lines[3:8])
    assert "expected a call to lookup with {'city': 'Lisbon'}; saw lookup({'city': 'Porto'})" \
        in failures
    assert "agent clerk did not run" in failures
    assert "state['answer'] is 'Porto is small.', expected 'big'" in failures
    assert "does not contain 'huge'" in failures
    assert "expected a job {'status': 'QUEUED'}" in failures
    assert lines[-1].startswith("========== 2 passed, 1 failed in ")


def test_a_scenario_that_runs_out_of_replies_fails(desk: Path, tmp_path: Path) -> None:
    (tmp_path / "short.yaml").write_text("messages: [Hi]\nreplies: {desk: []}\n")
    done = invoke(str(desk / "spec.yaml"), str(tmp_path / "short.yaml"))
    assert done.exit_code == 1
    assert "the script has no more replies for agent `desk`" in done.output


@pytest.mark.parametrize(("text", "message"), [
    ("messages: [Hi]\nreplys: {}\n", "bad.yaml:2:1: AS101 Unknown key `replys` (hint: Did you "
     "mean `replies`?)"),
    ("replies: {}\n", "bad.yaml:1:1: AS102 Missing required key `messages`"),
    ("messages: [Hi]\nexpect: {tool: []}\n", "bad.yaml:2:10: AS101 Unknown key `tool` in "
     "`expect` (hint: Did you mean `tools`?)"),
    ("scenarios: []\n", "bad.yaml:1:12: AS104 `scenarios` must be at least 1 long"),
    ("messages: [Hi]\ndecisions: [maybe]\n", "bad.yaml:2:13: AS104 `maybe` is not one of"),
    # the test that could not fail: a misspelt `contains` checked nothing
    ("messages: [Hi]\nexpect: {final: {contans: Goodbye}}\n",
     "bad.yaml:2:18: AS101 Unknown key `contans` in `expect.final` (hint: Did you mean "
     "`contains`?)"),
    # the flow-mapping trap: the reply's text was `Sorry`
    ("messages: [Hi]\nreplies: {desk: [{text: Sorry, the stock is gone.}]}\n",
     "bad.yaml:2:32: AS700 `the stock is gone.` has no value"),
    ("messages: [Hi]\nreplies: {desk: [{txt: Hello}]}\n",
     "bad.yaml:2:18: AS107 A reply takes exactly one of `text`, `call`, `transfer`, `fail`; "
     "found none of them (hint: Did you mean `text`?)"),
    ("messages: [Hi]\nexpect: {final: {matches: '(oops'}}\n", "bad.yaml:2:27: AS701"),
    ("messages: [Hi]\nexpect: {final: {}}\n", "bad.yaml:2:17: AS703"),
    ("messages: [Hi]\nexpect: {errors: [{contains: boom}]}\n", "bad.yaml:2:19: AS703"),
    # names are the spec's: a misspelt negative check or stub would make a test that
    # cannot fail, or run the real tool
    ("messages: [Hi]\nexpect: {not_tools: [wpie]}\n", "bad.yaml:2:22: AS705 No agent of the "
     "spec has a tool named `wpie` (hint: Did you mean `wipe`?)"),
    ("messages: [Hi]\nstubs: {wipee: {}}\n", "bad.yaml:2:9: AS705"),
    ("messages: [Hi]\nreplies: {dsk: []}\n", "bad.yaml:2:11: AS704 The spec has no agent "
     "with a model named `dsk` (hint: Did you mean `desk`?)"),
    ("messages: [Hi]\nexpect: {agents: [clark]}\n", "bad.yaml:2:19: AS704"),
    ("messages: [Hi]\nexpect: {final: {contains: ''}}\n", "bad.yaml:2:28: AS703"),
    ("messages: [Hi]\nexpect: {jobs: [{agnet: scorer}]}\n",
     "bad.yaml:2:18: AS101 Unknown key `agnet` in `expect.jobs.0` (hint: Did you mean "
     "`agent`?)"),
])
def test_a_malformed_scenario_file_is_a_usage_error(desk: Path, tmp_path: Path, text: str,
                                                    message: str) -> None:
    (tmp_path / "bad.yaml").write_text(text)
    done = invoke(str(desk / "spec.yaml"), str(tmp_path / "bad.yaml"))
    assert done.exit_code == 2 and message in done.output, done.output
    assert "bad.yaml is not a valid scenario file" in done.output
    assert "Usage:" not in done.output  # the file is wrong, not the command line


def test_a_spec_with_errors_is_shown_where_to_fix_it(desk: Path) -> None:
    # each scenario fails with `AS203 No tool named ...`, without place or hint
    spec = desk / "spec.yaml"
    spec.write_text(spec.read_text().replace("tools: [lookup, wipe]", "tools: [lookup, wpie]"))
    done = invoke(str(spec))
    assert done.exit_code == 1, done.output
    assert done.output.splitlines()[-2:] == [
        f"agentspec: {spec} has errors:",
        f"{spec}:10:21: AS203 No tool named `wpie` (hint: Did you mean `wipe`?)"]


def test_every_scenario_file_is_checked_before_any_scenario_runs(desk: Path,
                                                                  tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("messages: [Hi]\nexpect: {final: {contans: x}}\n")
    done = invoke(str(desk / "spec.yaml"), str(desk / "scenarios" / "spec.yaml"),
                  str(tmp_path / "bad.yaml"))
    assert done.exit_code == 2 and "PASSED" not in done.output and "AS101" in done.output


def test_without_a_scenario_file_it_says_where_it_looked(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(
        "agentspec: 1\nname: x\nagents: {a: {model: gemini-2.5-flash, instruction: Hi.}}\n")
    done = invoke(str(tmp_path / "spec.yaml"))
    assert done.exit_code == 2 and "scenarios/spec.yaml" in done.output


def test_mcp_servers_are_never_started_even_behind_an_approval(tmp_path: Path) -> None:
    marker = tmp_path / "STARTED"
    server = tmp_path / "server.sh"
    server.write_text(f"#!/bin/sh\necho started >> {marker}\nexit 1\n")
    server.chmod(0o755)
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(f"""\
        agentspec: 1
        name: mcp_desk
        tools:
          srv: {{mcp: {{command: {server}}}, filter: [ping]}}
        agents:
          desk:
            model: gemini-2.5-flash
            instruction: Ping.
            tools: [srv]
            interrupt_on: {{srv: true}}
        """))
    (tmp_path / "case.yaml").write_text(textwrap.dedent("""\
        messages: [Ping it]
        replies:
          desk: [{call: ping}, {text: Pinged.}]
        decisions: [approve]
        stubs: {ping: {pong: true}}
        expect: {tools: [ping], final: Pinged}
        """))
    done = invoke(str(tmp_path / "spec.yaml"), str(tmp_path / "case.yaml"))
    assert done.exit_code == 0, done.output
    assert not marker.exists()


def test_a_scenario_whose_model_fails_names_the_agent_and_the_model(desk: Path,
                                                                     tmp_path: Path) -> None:
    (tmp_path / "down.yaml").write_text(
        "messages: [Hi]\nreplies: {desk: [{fail: 'the service is busy'}]}\n")
    done = invoke(str(desk / "spec.yaml"), str(tmp_path / "down.yaml"))
    assert done.exit_code == 1, done.output
    assert ("the run failed: agent `desk`: model `scripted` failed: ScriptedFailure: "
            "desk: the service is busy") in done.output


def test_a_scenario_whose_tool_raises_names_the_function_and_its_line(
        desk: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.buildkit import purge

    purge("desk_tools")  # this test's copy, not another test's
    monkeypatch.chdir(desk)
    (desk / "spec.yaml").write_text(textwrap.dedent(SPEC).replace(
        "output_key: answer", "output_key: answer\n    tool_errors: raise"))
    (tmp_path / "wipe.yaml").write_text(
        "messages: [Wipe]\nreplies: {desk: [{call: wipe}, {text: done}]}\n")
    done = invoke(str(desk / "spec.yaml"), str(tmp_path / "wipe.yaml"))
    assert done.exit_code == 1, done.output
    assert ("the run failed: your code `wipe` (desk_tools.py:8) of agent `desk` raised "
            "RuntimeError: the real wipe ran") in done.output


# --- no pattern hangs the run; scripts say what happened -----------------------------------


@pytest.mark.timeout(120)  # the hang guard: before the fix this ran until killed
def test_a_catastrophic_pattern_is_stopped_and_reported(
        desk: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentspec.testing import patterns

    monkeypatch.setattr(patterns, "MATCH_SECONDS", 0.5)  # never enough for this pattern
    (tmp_path / "slow.yaml").write_text(
        "messages: [Hi]\nreplies: {desk: [{text: " + "a" * 40 + "!}]}\n"
        "expect: {final: {matches: '^(a+)+$'}}\n")
    done = invoke(str(desk / "spec.yaml"), str(tmp_path / "slow.yaml"))
    assert done.exit_code == 1, done.output
    assert "/^(a+)+$/ was stopped after 0.5 s on the final answer" in done.output


def test_a_pattern_search_answers_both_ways() -> None:
    from agentspec.testing.patterns import search

    assert search(r"^Lisbon has about \d+", "Lisbon has about 545000 people.") is True
    assert search(r"Porto", "Lisbon") is False


def test_replies_the_run_never_used_fail_the_scenario(desk: Path, tmp_path: Path) -> None:
    (tmp_path / "extra.yaml").write_text(
        "messages: [Hi]\nreplies:\n  desk: [{text: Hello.}, {text: never asked for}]\n"
        "  clerk: [{text: nobody transferred}]\n")
    done = invoke(str(desk / "spec.yaml"), str(tmp_path / "extra.yaml"))
    assert done.exit_code == 1, done.output
    assert "1 scripted reply of `desk` never used (the first: {\"text\": \"never asked " \
        "for\"})" in done.output
    assert "1 scripted reply of `clerk` never used" in done.output


def test_a_scenario_file_linked_out_of_the_project_is_not_run(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (project / "desk_tools.py").write_text(TOOLS)
    (project / "spec.yaml").write_text(textwrap.dedent(SPEC))
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "spec.yaml").write_text("messages: [SECRET-TEXT]\nSECRET-KEY: 1\n")
    (project / "scenarios").symlink_to(outside)  # the folder itself is the link
    done = invoke(str(project / "spec.yaml"))
    assert done.exit_code == 2, done.output
    assert "AS242" in done.output and "SECRET" not in done.output
    validated = CliRunner().invoke(cli, ["validate", str(project / "spec.yaml")])
    assert "AS242" in validated.output and "SECRET" not in validated.output


def test_an_unknown_key_is_shown_bounded(desk: Path, tmp_path: Path) -> None:
    key = "k" * 1000  # a longer simple key is no YAML (AS004)
    (tmp_path / "big.yaml").write_text(f"messages: [Hi]\n{key}: 1\n")
    done = invoke(str(desk / "spec.yaml"), str(tmp_path / "big.yaml"))
    assert "AS101" in done.output and "k" * 61 not in done.output


@pytest.mark.parametrize(("script", "message"), [
    ("repiles: {desk: [{text: Hi}]}\n", "a script does not take `repiles` (did you mean "
     "`replies`?)"),
    ("desk: [{text: Hi}]\n", "a script does not take `desk`; its keys are `replies`"),
    # it ran nothing before, chatting on stdin instead
    ("scenarios: [{messages: [Hi], replies: {desk: [{text: Hi}]}}]\n",
     "holds several scenarios (`scenarios:`); a script is one"),
])
def test_run_refuses_a_script_key_it_does_not_know(desk: Path, tmp_path: Path, script: str,
                                                  message: str) -> None:
    (tmp_path / "script.yaml").write_text(script)
    done = CliRunner().invoke(cli, ["run", "--script", str(tmp_path / "script.yaml"),
                                    str(desk / "spec.yaml"), "Hi"])
    assert done.exit_code == 2 and message in " ".join(done.output.split()), done.output
