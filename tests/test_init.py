"""`agentspec init`: every template passes validate, build and test as written, in a fresh
directory; nothing is overwritten."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentspec.cli import cli
from agentspec.cli.init import TEMPLATES
from tests.buildkit import purge


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name="agentspec")


@pytest.mark.parametrize("template", TEMPLATES)
def test_a_template_passes_validate_build_and_test(template: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / f"my-{template}"
    made = invoke("init", str(project), "--template", template)
    assert made.exit_code == 0, made.output
    name = f"my_{template}"
    assert sorted(p.relative_to(project).as_posix() for p in project.rglob("*")
                  if p.is_file()) == sorted(["README.md", f"{name}.yaml", f"{name}_tools.py",
                                             f"scenarios/{name}.yaml"])
    spec = str(project / f"{name}.yaml")
    monkeypatch.chdir(project)
    saved = list(sys.path)
    try:
        validated = invoke("validate", spec)
        assert validated.exit_code == 0, validated.output
        built = invoke("build", spec)
        assert built.exit_code == 0, built.output
        assert (project / name / "agent.py").is_file()
        tested = invoke("test", spec)
        assert tested.exit_code == 0, tested.output
        assert "FAILED" not in tested.output
    finally:
        purge(f"{name}_tools")
        sys.path[:] = saved
    assert f"## {name} (agentspec)" in (project / "README.md").read_text()


def test_init_never_overwrites_and_appends_to_a_readme(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# My project\n")
    first = invoke("init", str(tmp_path), "--name", "helper")
    assert first.exit_code == 0, first.output
    readme = (tmp_path / "README.md").read_text()
    assert readme.startswith("# My project\n") and "## helper (agentspec)" in readme
    (tmp_path / "helper.yaml").write_text("# mine\n")
    again = invoke("init", str(tmp_path), "--name", "helper")
    assert again.exit_code == 1 and "not overwriting" in again.output
    assert (tmp_path / "helper.yaml").read_text() == "# mine\n"
    assert invoke("init", str(tmp_path), "--name", "not-an-identifier").exit_code == 2
