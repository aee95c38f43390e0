"""Scenario files are part of the language: golden failing files (tests/scenario_cases/<case>/
scenario.yaml, an optional spec.yaml, and expected.txt as `file:line:col CODE`), the committed
schema, `validate` finding them beside a spec, and state the session's creator supplies."""

from __future__ import annotations

import dataclasses
import json
import textwrap
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner, Result

from agentspec.cli import cli
from agentspec.diagnostics import REGISTRY, normalize
from agentspec.parse import load
from agentspec.runtime.jobs import Job
from agentspec.testing.check import check_scenarios
from agentspec.testing.discover import default_scenarios
from agentspec.testing.models import JOB_FIELDS
from agentspec.testing.names import spec_context
from agentspec.testing.schema import SCENARIO_SCHEMA_ID, scenario_json_schema, scenario_schema_text
from agentspec.validate.check import check

ROOT = Path(__file__).resolve().parent.parent
CASES = Path(__file__).parent / "scenario_cases"
SCHEMA_FILE = ROOT / "schemas" / "scenario.schema.json"
MODELINE = "# yaml-language-server: $schema="
#: every scenario file `agentspec test` runs for a shipped spec or template
TEMPLATES = ROOT / "agentspec" / "init" / "templates"
SHIPPED = sorted([*(ROOT / "specs" / "scenarios").glob("*.yaml"),
                  *(ROOT / "agentspec" / "init" / "templates").glob("*/scenarios/*.yaml"),
                  *(ROOT / "examples").glob("*/scenarios/*.yaml")])
#: scripts for `run --script` / `worker --script`, not scenarios (no `messages` of their own)
SCRIPTS = {"offline_jobs.after.yaml", "offline_jobs.worker.yaml"}


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name="agentspec")


def _located(case: Path) -> list[str]:
    context = None
    if (case / "spec.yaml").is_file():
        result = check(case / "spec.yaml")
        assert result.spec is not None
        context = spec_context(result)
    checked = check_scenarios(case / "scenario.yaml", context.required if context else None,
                              names=context.names if context else None)
    return [f"{Path(d.span.file).name}:{d.span.start.line}:{d.span.start.col} {d.code}"
            for d in normalize(checked.diagnostics) if d.span is not None]


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_golden_scenario_case(case: str) -> None:
    expected = (CASES / case / "expected.txt").read_text().splitlines()
    assert _located(CASES / case) == expected


def test_every_scenario_code_has_a_golden_case() -> None:
    found = {line.split()[-1] for case in CASES.iterdir() if case.is_dir()
             for line in (case / "expected.txt").read_text().splitlines()}
    assert {code for code in REGISTRY if code.startswith("AS70")} <= found  # 72x: eval files


def test_committed_scenario_schema_is_current() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == scenario_schema_text(), (
        "schemas/scenario.schema.json is stale: run `agentspec schema --scenario > "
        "schemas/scenario.schema.json`")
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$id"] == SCENARIO_SCHEMA_ID and schema == scenario_json_schema()


def test_the_cli_prints_the_scenario_schema() -> None:
    done = invoke("schema", "--scenario")
    assert done.exit_code == 0 and done.output == scenario_schema_text()


@pytest.mark.parametrize("path", [p for p in SHIPPED if p.name not in SCRIPTS],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_shipped_scenario_files_check_clean_and_fit_the_schema(path: Path) -> None:
    assert check_scenarios(path).diagnostics == []
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text()))
    assert [e.message for e in validator.iter_errors(load(path).value)] == []
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith(MODELINE), f"{path} must start with `{MODELINE}...`"
    target = first[len(MODELINE):].strip()
    if TEMPLATES in path.parents:  # `init` writes the schema beside the spec it makes
        assert target == "../scenario.schema.json"
    else:
        assert (path.parent / target).resolve() == SCHEMA_FILE


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_the_schema_refuses_what_the_checker_refuses_by_structure(case: str) -> None:
    """Each golden file with a structural error (unknown key, type, comma split) is refused
    by the schema too, so an editor shows it before `validate` does."""
    codes = {line.split()[-1] for line in (CASES / case / "expected.txt").read_text().split(
        "\n") if line}
    if not codes & {"AS101", "AS102", "AS103", "AS104", "AS107", "AS700", "AS703"}:
        return
    validator = jsonschema.Draft202012Validator(scenario_json_schema())
    assert list(validator.iter_errors(load(CASES / case / "scenario.yaml").value))


def test_expected_jobs_name_fields_of_the_job_record() -> None:
    assert set(JOB_FIELDS) <= {f.name for f in dataclasses.fields(Job)}


# --- validate finds the scenario file beside a spec ------------------------------------------

SPEC = """\
agentspec: 1
name: brief_desk
state:
  topic: {required: true, description: What to write about}
agents:
  writer:
    model: gemini-2.5-flash
    instruction: Write a brief on {topic}.
"""


def _project(tmp_path: Path, scenario: str, name: str = "desk") -> Path:
    (tmp_path / "desk.yaml").write_text(SPEC)
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / f"{name}.yaml").write_text(textwrap.dedent(scenario))
    return tmp_path / "desk.yaml"


def test_validate_checks_the_scenario_file_beside_the_spec(tmp_path: Path) -> None:
    spec = _project(tmp_path, """\
        messages: [Go]
        replies:
          writer:
            - {text: Sorry, the stock is gone.}
        expect: {final: {contans: Sorry}}
        """)
    done = invoke("validate", str(spec))
    assert done.exit_code == 1
    where = str(tmp_path / "scenarios" / "desk.yaml")
    assert f"{where}:1:1: AS702" in done.output  # `topic` is not given
    assert f"{where}:4:21: AS700" in done.output
    assert f"{where}:5:18: AS101 Unknown key `contans`" in done.output
    assert "1 spec, 1 scenario file, 3 errors" in done.output


def test_validate_checks_scenario_files_given_with_the_option(tmp_path: Path) -> None:
    spec = _project(tmp_path, "messages: [Go]\nstate: {topic: eels}\n")
    (tmp_path / "other.yaml").write_text("messages: [Go]\nexpect: {final: {}}\n")
    done = invoke("validate", str(spec), "--scenarios", str(tmp_path / "other.yaml"))
    assert done.exit_code == 1 and "other.yaml:2:17: AS703" in done.output
    assert "other.yaml:1:1: AS702" in done.output  # checked against the spec's state too
    assert invoke("validate", str(spec)).exit_code == 0
    missing = invoke("validate", str(spec), "--scenarios", str(tmp_path / "none.yaml"))
    assert missing.exit_code == 2


def test_the_default_scenario_file_is_named_after_the_spec_file(tmp_path: Path) -> None:
    """`scenarios/<spec file stem>.yaml` (what init writes and the shipped specs use); a file
    named after the spec's `name:`, as the docs once said, is still found without one."""
    spec = _project(tmp_path, "messages: [Go]\n", name="brief_desk")
    assert default_scenarios(spec) == tmp_path / "scenarios" / "brief_desk.yaml"
    (tmp_path / "scenarios" / "desk.yaml").write_text("messages: [Go]\n")
    assert default_scenarios(spec) == tmp_path / "scenarios" / "desk.yaml"
    (tmp_path / "scenarios" / "desk.yaml").unlink()
    (tmp_path / "scenarios" / "brief_desk.yaml").unlink()
    assert default_scenarios(spec) is None
    assert default_scenarios(ROOT / "specs" / "deep_agent.yaml") == \
        ROOT / "specs" / "scenarios" / "deep_agent.yaml"  # its `name:` is dev_assistant


# --- state the session's creator supplies ----------------------------------------------------


def test_validate_accepts_a_placeholder_of_required_state(tmp_path: Path) -> None:
    from agentspec.compiler import compile_spec

    (tmp_path / "desk.yaml").write_text(SPEC)
    assert invoke("validate", str(tmp_path / "desk.yaml")).exit_code == 0
    app = compile_spec(tmp_path / "desk.yaml").app
    assert app is not None  # a declaration, not the initial value `{required: true, ...}`
    assert app.state == {} and app.inputs == {"topic": "What to write about"}
    (tmp_path / "desk.yaml").write_text(SPEC.replace("  topic: {required: true, description: "
                                                     "What to write about}\n", ""))
    done = invoke("validate", str(tmp_path / "desk.yaml"))
    assert done.exit_code == 1 and "AS223" in done.output


def test_test_runs_a_scenario_that_gives_the_required_state(tmp_path: Path) -> None:
    # the reply only fits a request whose instruction holds the scenario's topic
    spec = _project(tmp_path, """\
        messages: [Go]
        state: {topic: eels}
        replies:
          writer:
            - {when: Write a brief on eels., text: Eels migrate far.}
        expect: {final: {contains: migrate}}
        """)
    done = invoke("test", str(spec))
    assert done.exit_code == 0 and "1 passed" in done.output, done.output


def test_test_refuses_a_scenario_without_the_required_state(tmp_path: Path) -> None:
    spec = _project(tmp_path, "messages: [Go]\nreplies: {writer: [{text: Hi}]}\n")
    done = invoke("test", str(spec))
    assert done.exit_code == 2 and "AS702" in done.output and "`topic`" in done.output
    assert "PASSED" not in done.output and "FAILED" not in done.output


def test_run_takes_required_state_from_the_option_or_names_it(tmp_path: Path) -> None:
    (tmp_path / "desk.yaml").write_text(SPEC)
    (tmp_path / "script.yaml").write_text(
        "messages: [Go]\nreplies: {writer: [{when: brief on eels, text: Eels migrate.}]}\n")
    spec, script = str(tmp_path / "desk.yaml"), str(tmp_path / "script.yaml")
    done = invoke("run", spec, "--script", script, "--state", "topic=eels")
    assert done.exit_code == 0 and "Eels migrate." in done.output, done.output
    missing = invoke("run", spec, "--script", script)  # no terminal here: no prompt
    assert missing.exit_code == 2
    assert "--state topic=VALUE" in missing.output and "What to write about" in missing.output
    bad = invoke("run", spec, "--script", script, "--state", "not a key")
    assert bad.exit_code == 2 and "KEY=VALUE" in bad.output


def test_run_asks_for_required_state_at_a_terminal() -> None:
    from agentspec.cli.inputs import supplied

    asked: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return "eels"

    assert supplied({"topic": "What to write about", "tone": None}, {"tone": "dry"}, ask) == \
        {"tone": "dry", "topic": "eels"}
    assert asked == ["topic (What to write about): "]


def test_a_session_without_required_state_stops_with_the_plain_error(tmp_path: Path) -> None:
    """The generated app's sessions are created by others (adk web, api_server): a session
    without the key stops the run at the instruction, naming agent and key."""
    (tmp_path / "desk.yaml").write_text(SPEC)
    from agentspec.cli.common import built
    from agentspec.runtime.state import required_inputs
    from tests.buildkit import scripted_turn

    app = built(tmp_path / "desk.yaml", None).app
    assert dict(required_inputs(app)) == {"topic": "What to write about"}
    with pytest.raises(Exception, match="session state has no `topic`"):
        scripted_turn(app, {"writer": [{"text": "Hi"}]}, state={})


def test_graph_names_the_state_a_session_needs(tmp_path: Path) -> None:
    (tmp_path / "desk.yaml").write_text(SPEC)
    done = invoke("graph", str(tmp_path / "desk.yaml"))
    assert done.exit_code == 0 and "session needs state: topic" in done.output


def test_import_adk_declares_state_no_agent_writes(tmp_path: Path) -> None:
    from agentspec.adkimport import import_adk

    out = tmp_path / "out.yaml"
    result = import_adk(ROOT / "tests" / "adk_cases" / "caller_supplied_state", output=out)
    assert result.ok, result.diagnostics
    state = load(out).value["state"]
    assert set(state) == {"topic", "user:audience"}  # not `summary` (its output_key), nor
    assert all(entry["required"] is True for entry in state.values())  # `{notes?}`, `temp:`


# --- scripts of `run --script` / `worker --script` are as strict ---------------------------


def test_the_script_reply_keys_are_the_models_keys() -> None:
    from agentspec.testing.models import CallReply, FailReply, TextReply, TransferReply
    from agentspec.testing.scripted import REPLY_KEYS

    models = {"text": TextReply, "call": CallReply, "transfer": TransferReply, "fail": FailReply}
    assert {kind: set(model.model_fields) for kind, model in models.items()} == REPLY_KEYS


@pytest.mark.parametrize(("reply", "message"), [
    ("{text: Sorry, the stock is gone.}", "`the stock is gone.` has no value: YAML ended the "
     "text `Sorry` at a comma"),
    ("{txet: Hello}", "exactly one of `text`, `call`, `transfer` and `fail`"),
    ("{call: lookup, argz: {id: 1}}", "a `call` reply does not take `argz` (did you mean "
     "`args`?)"),
    ("{text: a, call: b}", "exactly one of"),
])
def test_run_refuses_a_script_reply_it_would_misread(tmp_path: Path, reply: str,
                                                     message: str) -> None:
    (tmp_path / "desk.yaml").write_text(SPEC)
    (tmp_path / "script.yaml").write_text(f"messages: [Go]\nreplies: {{writer: [{reply}]}}\n")
    done = invoke("run", str(tmp_path / "desk.yaml"), "--script", str(tmp_path / "script.yaml"),
                  "--state", "topic=eels")
    assert done.exit_code == 2 and "reply 1 of `writer`: " in done.output, done.output
    assert message in done.output, done.output
