"""`agentspec init`: every template passes validate, build and test as written, in a fresh
directory; nothing is overwritten."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentspec.cli import cli
from agentspec.cli.init import TEMPLATES
from agentspec.language.schema import schema_text
from agentspec.testing.schema import scenario_schema_text
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
                                             f"scenarios/{name}.yaml", ".gitignore",
                                             "agentspec.schema.json", "scenario.schema.json"])
    # the modeline names the schema written beside the spec, so an editor finds it
    assert (project / f"{name}.yaml").read_text().startswith(
        "# yaml-language-server: $schema=agentspec.schema.json\n")
    assert (project / "agentspec.schema.json").read_text() == schema_text()
    assert (project / "scenarios" / f"{name}.yaml").read_text().startswith(
        "# yaml-language-server: $schema=../scenario.schema.json\n")
    assert (project / "scenario.schema.json").read_text() == scenario_schema_text()
    assert (project / ".gitignore").read_text() == ".adk/\n.agentspec/\n"
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


# --- names and what is already there (issue 12, items 10, 12 and 15) ------------------------


@pytest.mark.parametrize(("directory", "name"), [
    ("café", "cafe"), ("Ünïcödé Desk", "unicode_desk"), ("日本", "agent"),
    ("2024-plan", "agent_2024_plan"), ("class", "agent_class"), ("user", "agent_user"),
    ("email", "agent_email"), ("Google", "agent_google"), ("_x_", "x")])
def test_a_directory_name_becomes_a_spec_name_that_validates(
        directory: str, name: str, tmp_path: Path) -> None:
    project = tmp_path / directory
    made = invoke("init", str(project))
    assert made.exit_code == 0, made.output
    validated = invoke("validate", str(project / f"{name}.yaml"))
    assert validated.exit_code == 0, validated.output


def test_a_name_the_spec_refuses_is_refused_before_writing(tmp_path: Path) -> None:
    for name in ("café", "class", "a-b", "user", "os", "agentspec", "_app"):
        refused = invoke("init", str(tmp_path / "p"), "--name", name)
        assert refused.exit_code == 2 and "--name" in refused.output
    assert not (tmp_path / "p").exists()


def _written(directory: Path) -> list[str]:
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*"))


@pytest.mark.parametrize("readme", ["not utf-8", "directory", "fifo", "link"])
def test_a_readme_init_cannot_use_is_refused_before_anything_is_written(
        readme: str, tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    target = project / "README.md"
    outside = tmp_path / "outside.md"
    outside.write_text("# elsewhere\n")
    if readme == "not utf-8":
        target.write_bytes(b"# caf\xe9\n")
    elif readme == "directory":
        target.mkdir()
    elif readme == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to(outside)
    before = _written(project)
    refused = invoke("init", str(project), "--name", "helper")
    assert refused.exit_code == 1, refused.output
    assert "internal error" not in refused.output and "README.md" in refused.output
    assert _written(project) == before
    assert outside.read_text() == "# elsewhere\n"


def test_links_in_the_project_are_never_followed(tmp_path: Path) -> None:
    project, outside = tmp_path / "p", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (project / "helper.yaml").symlink_to(outside / "planted.yaml")  # dangling
    refused = invoke("init", str(project), "--name", "helper")
    assert refused.exit_code == 1 and "not overwriting" in refused.output
    (project / "helper.yaml").unlink()
    (project / "scenarios").symlink_to(outside)
    refused = invoke("init", str(project), "--name", "helper")
    assert refused.exit_code == 1 and "scenarios" in refused.output
    assert list(outside.iterdir()) == [] and _written(project) == ["scenarios"]


def test_a_directory_that_is_a_file_is_a_message(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    refused = invoke("init", str(tmp_path / "file"))
    assert refused.exit_code == 1 and "internal error" not in refused.output


# --- .gitignore and the schema (issue 20) ---------------------------------------------------


def test_init_appends_what_gitignore_lacks_without_clobbering_it(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.pyc\n/.adk\n.env")  # no final newline
    made = invoke("init", str(tmp_path), "--name", "helper")
    assert made.exit_code == 0, made.output
    assert (tmp_path / ".gitignore").read_text() == "*.pyc\n/.adk\n.env\n.agentspec/\n"
    again = invoke("init", str(tmp_path), "--name", "other")
    assert again.exit_code == 0, again.output
    assert (tmp_path / ".gitignore").read_text() == "*.pyc\n/.adk\n.env\n.agentspec/\n"
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / ".gitignore").write_text("!.agentspec/\r\n")  # the project keeps it on purpose
    assert invoke("init", str(kept), "--name", "helper").exit_code == 0
    assert (kept / ".gitignore").read_bytes() == b"!.agentspec/\r\n.adk/\n"


def test_an_existing_schema_is_kept_and_a_gitignore_link_is_refused(tmp_path: Path) -> None:
    (tmp_path / "agentspec.schema.json").write_text("{}\n")
    made = invoke("init", str(tmp_path), "--name", "helper")
    assert made.exit_code == 0, made.output
    assert (tmp_path / "agentspec.schema.json").read_text() == "{}\n"
    project, outside = tmp_path / "p", tmp_path / "outside"
    project.mkdir()
    outside.write_text("mine\n")
    (project / ".gitignore").symlink_to(outside)
    refused = invoke("init", str(project), "--name", "helper")
    assert refused.exit_code == 1 and ".gitignore" in refused.output, refused.output
    assert "internal error" not in refused.output
    assert _written(project) == [".gitignore"] and outside.read_text() == "mine\n"


def test_the_next_step_is_a_command_that_runs_as_shown(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # in the current directory (the first-agent guide's way) there is nothing to `cd` into;
    # elsewhere the directory is quoted for the shell
    here = tmp_path / "digest"
    here.mkdir()
    monkeypatch.chdir(here)
    made = invoke("init", "--template", "pipeline")
    assert made.exit_code == 0, made.output
    assert made.output.splitlines()[-1] == "next: agentspec test digest.yaml"
    made = invoke("init", str(tmp_path / "my project"), "--template", "router")
    assert made.exit_code == 0, made.output
    assert made.output.splitlines()[-1] == \
        f"next: cd '{tmp_path / 'my project'}' && agentspec test my_project.yaml"
