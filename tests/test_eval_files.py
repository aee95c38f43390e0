"""Eval files are part of the language: golden failing files (tests/eval_cases/<case>/
evals.yaml, an optional spec.yaml, and expected.txt as `file:line:col CODE`), the committed
schema, and `validate` finding them beside a spec."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from agentspec.cli import cli
from agentspec.diagnostics import REGISTRY, normalize
from agentspec.evaluation.check import check_evals
from agentspec.evaluation.schema import EVAL_SCHEMA_ID, eval_json_schema, eval_schema_text
from agentspec.parse import load
from agentspec.testing.check import Checked, check_scenarios
from agentspec.testing.names import spec_context
from agentspec.validate.check import check

ROOT = Path(__file__).resolve().parent.parent
CASES = Path(__file__).parent / "eval_cases"
SCHEMA_FILE = ROOT / "schemas" / "eval.schema.json"


def _located(case: Path) -> list[str]:
    context = spec_context(check(case / "spec.yaml")) if (case / "spec.yaml").is_file() \
        else None
    checked = check_evals(case / "evals.yaml", context.required if context else None,
                          names=context.names if context else None)
    return [f"{Path(d.span.file).name}:{d.span.start.line}:{d.span.start.col} {d.code}"
            for d in normalize(checked.diagnostics) if d.span is not None]


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_golden_eval_case(case: str) -> None:
    expected = (CASES / case / "expected.txt").read_text().splitlines()
    assert _located(CASES / case) == expected


def test_every_eval_file_code_has_a_golden_case() -> None:
    """AS727 (an ADK eval set) is pinned in tests/test_eval.py, with its position."""
    found = {line.split()[1] for case in CASES.iterdir() if case.is_dir()
             for line in (case / "expected.txt").read_text().splitlines()}
    ours = {code for code in REGISTRY if "AS720" <= code <= "AS749"} - {"AS727"}
    assert ours <= found, sorted(ours - found)


def test_the_committed_schema_is_current() -> None:
    assert SCHEMA_FILE.read_text() == eval_schema_text(), \
        "run `agentspec schema --eval > schemas/eval.schema.json`"
    assert json.loads(SCHEMA_FILE.read_text())["$id"] == EVAL_SCHEMA_ID


def test_the_schema_takes_what_the_check_takes_and_refuses_a_golden_case(
        tmp_path: Path) -> None:
    schema = eval_json_schema()
    good = tmp_path / "evals.yaml"
    good.write_text("judge: {model: gemini-2.5-flash}\ncriteria:\n"
                    "  tool_trajectory_avg_score: {threshold: 1.0, match: in_order}\n"
                    "  final_response_match_v2: 0.5\ncases:\n  - name: one\n    turns:\n"
                    "      - {user: hi, tools: [lookup], reference: hello}\n")
    assert check_evals(good).diagnostics == []
    jsonschema.validate(load(good).value, schema)
    bad = load(CASES / "unknown_keys" / "evals.yaml").value
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_validate_checks_the_eval_file_beside_a_spec() -> None:
    case = CASES / "unknown_names"
    result = CliRunner().invoke(cli, ["validate", str(case / "spec.yaml")])
    assert result.exit_code == 0  # the spec is fine; evals/spec.yaml is not beside it
    assert "eval file" not in result.output


def test_validate_finds_evals_by_the_spec_file_name(tmp_path: Path) -> None:
    case = CASES / "unknown_names"
    (tmp_path / "evals").mkdir()
    (tmp_path / "desk.yaml").write_text((case / "spec.yaml").read_text())
    (tmp_path / "mytools.py").write_text((case / "mytools.py").read_text())
    (tmp_path / "evals" / "desk.yaml").write_text((case / "evals.yaml").read_text())
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "desk.yaml")])
    assert result.exit_code == 1
    assert "evals/desk.yaml:11:7: AS725" in result.output
    assert "1 spec, 1 eval file, 4 errors" in result.output


@pytest.mark.parametrize("text", ["", "# only a comment\n", "- a list\n", "just text\n"],
                         ids=["empty", "comment", "list", "scalar"])
@pytest.mark.parametrize(("checker", "shape"), [(check_evals, "`cases: [...]`"),
                                                (check_scenarios, "`scenarios: [...]`")],
                         ids=["eval file", "scenario file"])
def test_a_data_file_that_holds_no_mapping_is_told_the_shape_of_one(
        text: str, checker: Callable[[Path], Checked], shape: str, tmp_path: Path) -> None:
    """The reader's own hint (`start with agentspec: 1`) is for spec files."""
    path = tmp_path / "data.yaml"
    path.write_text(text)
    [problem] = checker(path).diagnostics
    assert problem.code in {"AS007", "AS008"}
    assert problem.hint is not None and shape in problem.hint
    assert "agentspec: 1" not in problem.hint
