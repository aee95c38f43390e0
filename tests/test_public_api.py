"""The public Python API (`agentspec.check`, `build`, `diff`, ...): each function on a good
spec and on bad input, which comes back as diagnostics or a `SpecError`, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import agentspec
from agentspec import api

SPECS = Path(__file__).resolve().parent.parent / "specs"

SPEC = """\
agentspec: 1
name: helper
root: helper
agents:
  helper:
    kind: llm
    model: gemini-2.5-flash
    description: Answers questions.
    instruction: Answer briefly.
"""


def _spec(tmp_path: Path, text: str = SPEC, name: str = "agent.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_every_public_name_resolves_and_importing_agentspec_stays_cheap() -> None:
    for name in agentspec.__all__:
        assert getattr(agentspec, name) is not None, name
    assert set(api.__all__) <= set(agentspec.__all__)
    code = ("import sys, agentspec; agentspec.__version__; "
            "print(sorted(m for m in ('google.adk', 'pydantic', 'agentspec.api') "
            "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"
    assert agentspec.__version__[0].isdigit()


def test_check_reports_problems_with_positions_and_never_raises(tmp_path: Path) -> None:
    good = agentspec.check(_spec(tmp_path))
    assert good.ok and good.diagnostics == []
    bad = agentspec.check(_spec(tmp_path, SPEC.replace("    description:", "    bogus: 1\n"
                                                       "    description:"), "bad.yaml"))
    [problem] = bad.diagnostics
    assert (problem.code, problem.span.start.line, problem.span.start.col) == ("AS101", 8, 5)
    missing = agentspec.check(tmp_path / "nowhere.yaml")
    assert not missing.ok and missing.diagnostics[0].code.startswith("AS0")


def test_check_text_sees_what_check_sees_on_disk(tmp_path: Path) -> None:
    text = SPEC.replace("model: gemini-2.5-flash", "model: nowhere").replace(
        "kind: llm", "kind: llm\n    extra: 1")
    on_disk = agentspec.check(_spec(tmp_path, text))
    in_memory = agentspec.check_text(text, tmp_path / "agent.yaml")
    assert [(d.code, d.span) for d in in_memory.diagnostics] == \
        [(d.code, d.span) for d in on_disk.diagnostics] != []
    # the buffer wins over the file on disk, and a file that does not exist is fine
    assert agentspec.check_text(SPEC, tmp_path / "agent.yaml").ok
    assert agentspec.check_text(SPEC, tmp_path / "unsaved.yaml").ok
    broken = agentspec.check_text("agents: [\n", "spec.yaml")
    assert [d.code for d in broken.diagnostics] == ["AS004"]
    assert broken.diagnostics[0].span.file == "spec.yaml"


def test_check_text_refuses_bytes_with_a_type_error_saying_so() -> None:
    with pytest.raises(TypeError, match="text must be str"):
        agentspec.check_text(SPEC.encode(), "spec.yaml")  # type: ignore[arg-type]


def test_build_returns_the_app_or_a_spec_error_carrying_the_diagnostics(
        tmp_path: Path) -> None:
    app = agentspec.build(_spec(tmp_path))
    assert app.name == "helper" and app.root_agent.name == "helper"
    with pytest.raises(agentspec.SpecError) as raised:
        agentspec.build(_spec(tmp_path, SPEC.replace("root: helper", "root: nobody"), "b.yaml"))
    assert [d.code for d in raised.value.diagnostics] == ["AS201"]
    assert "b.yaml:3:7" in str(raised.value)


def test_build_package_writes_the_package_and_keeps_files_it_did_not_write(
        tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    written = agentspec.build_package(spec, tmp_path / "out")
    assert tmp_path / "out" / "helper" / "agent.py" in written
    assert all(path.is_file() for path in written)
    assert agentspec.build_package(str(spec), str(tmp_path / "out")) == written  # rebuilt
    mine = tmp_path / "mine" / "helper" / "agent.py"
    mine.parent.mkdir(parents=True)
    mine.write_text("# my own\n", encoding="utf-8")
    with pytest.raises(agentspec.SpecError) as raised:
        agentspec.build_package(spec, tmp_path / "mine")
    assert raised.value.diagnostics[0].code == "AS405"
    assert mine.read_text(encoding="utf-8") == "# my own\n"


def test_diff_lists_changes_and_refuses_a_side_with_errors(tmp_path: Path) -> None:
    old = _spec(tmp_path, name="old.yaml")
    new = _spec(tmp_path, SPEC.replace("Answer briefly.", "Answer at length."), "new.yaml")
    changes = agentspec.diff(old, new)
    assert [c.code for c in changes] and all(c.code.startswith("AS5") for c in changes)
    assert agentspec.diff(old, old) == []
    added = agentspec.diff(tmp_path / "absent.yaml", new)
    assert added
    with pytest.raises(agentspec.SpecError):
        agentspec.diff(old, _spec(tmp_path, "agents: 1\n", "broken.yaml"))


def test_diff_refuses_two_missing_files_and_one_that_cannot_be_read(tmp_path: Path) -> None:
    """Two mistyped paths were `[]` ("nothing changed", a gate passing); a path no file can
    have (a NUL byte) was a spec added."""
    new = _spec(tmp_path, name="new.yaml")
    with pytest.raises(agentspec.SpecError, match="neither") as raised:
        agentspec.diff(tmp_path / "old.yml", tmp_path / "new.yml")
    assert [d.code for d in raised.value.diagnostics] == ["AS001", "AS001"]
    with pytest.raises(agentspec.SpecError) as unreadable:
        agentspec.diff(str(tmp_path / "old\x00.yaml"), new)
    assert [d.code for d in unreadable.value.diagnostics] == ["AS002"]


def test_graph_draws_mermaid_and_dot(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    assert agentspec.graph(spec).startswith("flowchart")
    assert agentspec.graph(spec, "dot").startswith("digraph")
    with pytest.raises(ValueError, match="mermaid"):
        agentspec.graph(spec, "svg")  # type: ignore[arg-type]


def test_run_scenarios_runs_a_shipped_specs_scenarios() -> None:
    heard: list[str] = []
    run = agentspec.run_scenarios(SPECS / "pipeline.yaml",
                                  on_result=lambda r: heard.append(r.name))
    assert run.ok and run.passed == len(run.results) == len(heard) > 0


def test_run_scenarios_refuses_a_scenario_file_with_errors(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    scenarios = tmp_path / "bad.yaml"
    scenarios.write_text("scenarios:\n  - name: x\n    turns: 1\n", encoding="utf-8")
    with pytest.raises(agentspec.SpecError) as raised:
        agentspec.run_scenarios(spec, [scenarios])
    assert raised.value.diagnostics
    with pytest.raises(agentspec.SpecError, match="no scenario files"):
        agentspec.run_scenarios(spec)


def test_run_scenarios_takes_one_scenario_file_as_a_path() -> None:
    """A str is a sequence too: `run_scenarios(spec, "file.yaml")` ran the files `f`, `i`,
    `l`, ... ("No such file `f`")."""
    given = SPECS / "scenarios" / "pipeline.yaml"
    for one in (str(given), given):
        run = agentspec.run_scenarios(SPECS / "pipeline.yaml", one)
        assert run.ok and len(run.results) > 0


@pytest.mark.parametrize("text", [None, "agents: [\n", "agentspec: 1\nname: x\nroot: nobody\n"])
def test_run_scenarios_refuses_a_missing_or_broken_spec(tmp_path: Path,
                                                         text: str | None) -> None:
    """With the spec's diagnostics, not a failure of each scenario nor "no scenario files"."""
    spec = tmp_path / "agent.yaml"
    if text is not None:
        spec.write_text(text, encoding="utf-8")
    scenarios = tmp_path / "scenarios" / "agent.yaml"
    scenarios.parent.mkdir()
    scenarios.write_text("messages: [hi]\nreplies:\n  helper: [{text: hi}]\n", encoding="utf-8")
    for given in ([], [scenarios]):
        with pytest.raises(agentspec.SpecError, match="the spec has errors") as raised:
            agentspec.run_scenarios(spec, given)
        assert raised.value.diagnostics and all(d.is_error for d in raised.value.diagnostics)


@pytest.mark.parametrize("text", [None, "agents: [\n"])
def test_build_graph_and_package_refuse_a_missing_or_malformed_spec(
        tmp_path: Path, text: str | None) -> None:
    spec = tmp_path / "agent.yaml"
    if text is not None:
        spec.write_text(text, encoding="utf-8")
    expected = "AS001" if text is None else "AS004"
    for call in (lambda: agentspec.build(spec), lambda: agentspec.graph(spec),
                 lambda: agentspec.build_package(spec, tmp_path / "out")):
        with pytest.raises(agentspec.SpecError) as raised:
            call()
        assert [d.code for d in raised.value.diagnostics] == [expected]
    assert not (tmp_path / "out").exists()
