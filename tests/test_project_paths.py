"""Every path a spec names stays inside its project (issue 12, item 2): the git work tree
holding the spec, else its directory; `..`, absolute paths and links leading out are refused
before anything is read, unless the top-level `outside_project` allows them; diagnostics and
diffs never show the content of a file that is not a spec."""

from __future__ import annotations

import json
import shutil
import subprocess
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from ruamel.yaml import YAML

from agentspec.cli import cli
from agentspec.compiler import compile_spec, emit_package
from agentspec.diagnostics import FORMATS, render
from agentspec.ir.lower import lower
from agentspec.language import Spec
from agentspec.project_files import project_root
from agentspec.validate.check import CheckResult, check
from agentspec.validate.semantic.project import path_marker

SECRET = "SENTINEL-7f3a9c-hunter2"
_YAML = YAML(typ="safe", pure=True)
_YAML.default_flow_style = False


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name="agentspec")


# --- every path field of the language is known and checked -----------------------------------


def _models(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for argument in typing.get_args(annotation):
        yield from _models(argument)


def _fields() -> Iterator[tuple[str, str, Any]]:
    seen: set[type[BaseModel]] = set()
    todo: list[type[BaseModel]] = [Spec]
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen.add(model)
        for name, info in model.model_fields.items():
            yield model.__name__, name, info
            todo += list(_models(info.annotation))


PATHS = {("Spec", "imports"): "file", ("LlmAgent", "instruction_file"): "file",
         ("LlmAgent", "memory"): "file", ("LlmAgent", "skills"): "directory",
         ("SkillsConfig", "paths"): "directory", ("FilesystemBackend", "root"): "directory",
         ("ShellBackend", "root"): "directory", ("SandboxBackend", "root"): "directory",
         ("SandboxMount", "source"): "directory", ("McpStdio", "cwd"): "directory",
         ("Jobs", "store"): "sqlite", ("Spec", "sessions"): "sqlite",
         ("StoreBackend", "url"): "sqlite",
         **{("Prompts", section): "file" for section in (
             "base", "filesystem", "execute", "todos", "task", "skills", "memory")},
         ("RemoteAgent", "card"): "file", ("OpenApiTool", "openapi"): "file"}
#: fields whose descriptions speak of files or directories, and are no paths on disk
NOT_PATHS = {("CompositeBackend", "default"), ("CompositeBackend", "routes"),
             ("LlmAgent", "filesystem"), ("LlmAgent", "tool_result_limit"),
             ("FilesystemConfig", "tools"), ("PythonSchema", "python"),
             ("ShellBackend", "env"), ("Spec", "outside_project"),
             ("FilesystemBackend", "hard_links"), ("ShellBackend", "hard_links"),
             ("SandboxBackend", "env"), ("SandboxBackend", "hard_links"),
             ("SandboxBackend", "mounts"), ("SandboxBackend", "max_file_bytes"),
             ("SandboxBackend", "max_workspace_mb"),
             ("SandboxMount", "target"), ("SandboxBackend", "allow_project_files"),
             # a directory of the root agent's file tools (a backend path), and a key that
             # is never written into generated files
             ("Summarization", "history"), ("ModelDef", "api_key"),
             # a mapping whose entries are the paths (`Prompts`)
             ("LlmAgent", "prompts"),
             # whose folders a backend's file tools show: a choice, not a path
             *((kind, "conversation_files") for kind in (
                 "FilesystemBackend", "ShellBackend", "SandboxBackend", "CompositeBackend")),
             # a service account's key (JSON from the environment) and the choice of
             # Application Default Credentials: they speak of a key file agentspec never reads
             ("ServiceAccountSettings", "key"), ("ServiceAccountSettings", "default"),
             # globs over a backend's virtual paths (path permissions), no paths on disk
             *((kind, rule) for rule in ("read", "write") for kind in (
                 "StateBackend", "FilesystemBackend", "ShellBackend", "SandboxBackend",
                 "CompositeBackend", "StoreBackend")),
             # whose files a store keeps apart: a choice, not a path
             ("StoreBackend", "scope")}
_INHERITED = {"DeepAgent": "LlmAgent", "Defaults": "LlmAgent"}


def test_every_path_field_of_the_language_is_marked_and_none_is_missed() -> None:
    marked, spoken = {}, set()
    for model, name, info in _fields():
        key = (_INHERITED.get(model, model), name)
        marker = path_marker(info.annotation) or next(
            (m for m in info.metadata if type(m).__name__ == "PathField"), None)
        if marker is not None:
            marked[key] = marker.kind
        words = (info.description or "").lower()
        if any(w in words for w in ("relative", "director", "file", "path")):
            spoken.add(key)
    assert marked == PATHS
    assert spoken - set(PATHS) - NOT_PATHS == set()  # a new path field must be declared


# --- a project with a secret beside it --------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tmp/repo (a git work tree: `.git`) holding specs/, with secrets outside it and links
    inside that lead out."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / "specs" / "skills" / "ok-skill").mkdir(parents=True)
    (repo / "specs" / "skills" / "ok-skill" / "SKILL.md").write_text(
        "---\nname: ok-skill\ndescription: Fine.\n---\nBody.\n")
    (repo / "specs" / "prompt.md").write_text("Help.\n")
    (repo / "shared").mkdir()
    (repo / "shared" / "common.md").write_text("Shared, inside the repository.\n")
    (repo / "specs" / "workspace").mkdir()
    outside = tmp_path / "outside"
    (outside / "evil-skill").mkdir(parents=True)
    (outside / "evil-skill" / "SKILL.md").write_text(
        f"---\nname: evil-skill\ndescription: {SECRET}\n---\n{SECRET}\n")
    (outside / "secret.md").write_text(f"{SECRET}\n")
    (outside / "secret.yaml").write_text(f"agents:\n  x: {{instruction: {SECRET}}}\n")
    (repo / "specs" / "link_out.md").symlink_to(outside / "secret.md")
    (repo / "specs" / "link_out.yaml").symlink_to(outside / "secret.yaml")
    (repo / "specs" / "dir_out").symlink_to(outside)
    (repo / "specs" / "creds.json").write_text(json.dumps({"private_key": SECRET}))
    (repo / "specs" / "secrets.yaml").write_text(f"db_password: {SECRET}\n")
    (repo / "specs" / ".env").write_text(f"TOKEN={SECRET}\n")
    monkeypatch.chdir(repo / "specs")
    return repo


def _spec(**overrides: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "agentspec": 1, "name": "app",
        "backends": {"files": {"type": "filesystem", "root": "workspace"},
                     "sh": {"type": "shell", "root": "workspace"}},
        "tools": {"server": {"mcp": {"command": "server", "cwd": "workspace"}}},
        "jobs": {"store": "sqlite:///.agentspec/jobs.db"},
        "agents": {"main": {"model": "gemini-2.5-flash", "instruction_file": "prompt.md",
                            "memory": ["prompt.md"], "skills": ["skills"],
                            "filesystem": "files", "tools": ["server", {"agent": "other"}]},
                   "other": {"model": "gemini-2.5-flash", "instruction": "Hi.",
                             "filesystem": "sh", "execution_mode": "offline"}},
    }
    for where, value in overrides.items():
        target = spec
        *parents, last = where.split(".")
        for key in parents:
            target = target[int(key) if key.isdigit() else key]
        target[int(last) if last.isdigit() else last] = value
    return spec


def _write(spec: dict[str, Any], name: str = "spec.yaml") -> Path:
    path = Path(name)
    with path.open("w") as handle:
        _YAML.dump(spec, handle)
    return path


def _shown(result: CheckResult) -> str:
    """Everything validate could print about the spec, in every format."""
    return "".join(render(result.diagnostics, result.sources, fmt) for fmt in FORMATS)


FIELDS = {"instruction_file": "agents.main.instruction_file", "memory": "agents.main.memory.0",
          "skills": "agents.main.skills.0", "filesystem root": "backends.files.root",
          "shell root": "backends.sh.root", "mcp cwd": "tools.server.mcp.cwd",
          "import": "imports.0", "sqlite store": "jobs.store",
          "sqlite sessions": "sessions"}
ESCAPES = ["/etc/passwd", "/proc/self/environ", "../../outside/secret.md", "link_out.md",
           "dir_out/secret.md", "dir_out", "/", "../..", "./dir_out/../dir_out/secret.md"]


def _value(field: str, escape: str) -> str:
    if field in ("sqlite store", "sqlite sessions"):
        return f"sqlite:///{escape}"
    if field == "import" and not escape.endswith((".yaml", "/", ".")):
        return escape.rsplit(".", 1)[0] + ".yaml" if "." in escape.rsplit("/", 1)[-1] \
            else escape + "/secret.yaml"
    return escape


@pytest.mark.parametrize("escape", ESCAPES)
@pytest.mark.parametrize("field", sorted(FIELDS))
def test_a_path_leading_out_of_the_project_is_refused_and_never_read(
        project: Path, field: str, escape: str) -> None:
    value = _value(field, escape)
    spec = _spec(**{FIELDS[field]: value}) if field != "import" else {
        **_spec(), "imports": [value]}
    result = check(_write(spec), environ={})
    refused = [d for d in result.diagnostics if d.code == "AS242"]
    assert len(refused) == 1, (value, result.diagnostics)
    assert refused[0].span is not None and refused[0].span.start.line > 1
    assert SECRET not in _shown(result)
    assert all(SECRET not in s.text for s in result.sources.values())


def test_paths_anywhere_in_the_git_work_tree_are_inside(project: Path) -> None:
    spec = _spec(**{"agents.main.instruction_file": "../shared/common.md"})
    result = check(_write(spec), environ={})
    assert result.ok and result.diagnostics == [], result.diagnostics
    assert project_root(Path("spec.yaml")) == project.resolve()


def test_without_git_the_project_is_the_spec_directory(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()  # a stray, empty `.git` makes no work tree
    (tmp_path / "a").mkdir()
    (tmp_path / "shared.md").write_text("x\n")
    monkeypatch.chdir(tmp_path / "a")
    path = _write({"agentspec": 1, "name": "app", "agents": {"main": {
        "model": "gemini-2.5-flash", "instruction_file": "../shared.md"}}})
    assert [d.code for d in check(path, environ={}).diagnostics] == ["AS242"]


def test_a_skill_folder_that_links_out_is_refused(project: Path) -> None:
    (project / "specs" / "skills" / "evil-skill").symlink_to(
        project.parent / "outside" / "evil-skill")
    result = check(_write(_spec()), environ={})
    assert [d.code for d in result.diagnostics] == ["AS242"]
    assert "evil-skill" in result.diagnostics[0].message and SECRET not in _shown(result)


# --- imports: specs only, and nothing of another file is shown ------------------------------


@pytest.mark.parametrize(("entry", "code"), [
    ("creds.json", "AS243"), (".env", "AS243"), ("secrets.yaml", "AS243"),
    ("/etc/shadow", "AS242"), ("/etc/passwd", "AS242"), ("dir_out/secret.yaml", "AS242")])
def test_an_import_that_is_not_a_spec_shows_nothing_of_it(project: Path, entry: str,
                                                          code: str) -> None:
    result = check(_write({**_spec(), "imports": [entry]}), environ={})
    assert [d.code for d in result.diagnostics] == [code]
    shown = _shown(result)
    assert SECRET not in shown and "db_password" not in shown and "private_key" not in shown
    assert all(SECRET not in s.text for s in result.sources.values())  # nothing to quote


# --- the opt-in ---------------------------------------------------------------------------


def test_outside_project_allows_a_directory_and_says_so(project: Path) -> None:
    outside = project.parent / "outside"
    spec = {**_spec(**{"agents.main.instruction_file": str(outside / "secret.md")}),
            "outside_project": [str(outside)]}
    result = check(_write(spec), environ={})
    assert [(d.code, d.severity.value) for d in result.diagnostics] == [("AS244", "info")]
    assert result.ok
    strict = invoke("validate", "--strict", "spec.yaml")
    assert strict.exit_code == 0 and "AS244" in strict.output
    compiled = compile_spec(Path("spec.yaml"), environ={})
    assert compiled.ok and compiled.app is not None
    assert compiled.app.root.instruction == f"{SECRET}\n"  # the spec asked for it, visibly
    assert emit_package(compiled, Path("out"))


def test_outside_project_is_literal_and_only_the_main_spec_sets_it(project: Path) -> None:
    outside = str(project.parent / "outside")
    (project / "specs" / "lib.yaml").write_text(
        f"outside_project: [{outside}]\nagents:\n  helper: {{instruction_file: "
        f"{outside}/secret.md}}\n")
    spec = {**_spec(), "root": "main", "vars": {"d": outside}, "outside_project": ["${vars.d}"],
            "imports": ["lib.yaml"],
            "environments": {"prod": {"outside_project": [outside]}}}
    result = check(_write(spec), environ={})
    assert sorted(d.code for d in result.diagnostics) == [
        "AS224", "AS242", "AS303", "AS306", "AS310"]  # AS224: lib's agent is unused


# --- diff: the opt-in is a high risk, and outside text is never shown -----------------------


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=a@b.c", "-c", "user.name=A", *args], cwd=repo,
                   check=True, capture_output=True)


def test_diff_reports_the_opt_in_and_never_shows_outside_text(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / "specs").mkdir(parents=True)
    outside.mkdir()
    (outside / "prompt.md").write_text(f"{SECRET}\n")
    base = {"agentspec": 1, "name": "app",
            "agents": {"main": {"model": "gemini-2.5-flash", "instruction": "Hi."}}}
    monkeypatch.chdir(repo / "specs")
    _write(base)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one")
    _write({**base, "outside_project": [str(outside)], "agents": {"main": {
        "model": "gemini-2.5-flash", "instruction_file": str(outside / "prompt.md")}}})
    for fmt in ("text", "markdown", "json"):
        done = invoke("diff", "--base", "HEAD", "spec.yaml", "--format", fmt)
        assert done.exit_code == 0, done.output
        assert SECRET not in done.output
    changes = json.loads(invoke("diff", "--base", "HEAD", "spec.yaml", "--format",
                                "json").output)["changes"]
    assert sorted((c["change"], c["risk"]) for c in changes) == [
        ("instruction-changed", "medium"), ("outside-project-widened", "high")]
    failing = invoke("diff", "--base", "HEAD", "spec.yaml", "--fail-on", "high")
    assert failing.exit_code == 1
    # without the opt-in, the spec has an error and diff says so, without the text
    _write({**base, "agents": {"main": {"model": "gemini-2.5-flash",
                                        "instruction_file": str(outside / "prompt.md")}}})
    refused = invoke("diff", "--base", "HEAD", "spec.yaml", "--format", "markdown")
    assert refused.exit_code == 1 and "AS242" in refused.output
    assert SECRET not in refused.output


# --- the property ----------------------------------------------------------------------------

PIECES = ["..", ".", "/", "dir_out", "link_out.md", "secret.md", "workspace", "prompt.md",
          "skills", "etc", "passwd", "proc", "self", "environ", "~", "%2e%2e", "..\\", " ",
          "shared", "common.md", "specs", "repo", "outside", "evil-skill", "SKILL.md"]
PATHS_TEXT = st.lists(st.sampled_from(PIECES), min_size=1, max_size=8).map("".join) | \
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=6).map("/".join)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(sorted(FIELDS)), text=PATHS_TEXT)
@example(field="instruction_file", text="../../outside/secret.md")
def test_no_path_reads_outside_the_project(project: Path, field: str, text: str) -> None:
    value = _value(field, text)
    spec = _spec(**{FIELDS[field]: value}) if field != "import" else {
        **_spec(), "imports": [value]}
    result = check(_write(spec), environ={})
    assert SECRET not in _shown(result)
    assert all(SECRET not in s.text for s in result.sources.values())
    if result.document is not None:
        assert SECRET not in json.dumps(result.document.data, default=str)


def test_build_checks_the_instruction_file_again_when_it_reads_it(project: Path) -> None:
    """A file swapped for a link after validate is not read by build either."""
    result = check(_write(_spec()), environ={})
    assert result.ok, result.diagnostics
    (project / "specs" / "prompt.md").unlink()
    (project / "specs" / "prompt.md").symlink_to(project.parent / "outside" / "secret.md")
    app, problems = lower(result)
    assert app is None and [d.code for d in problems] == ["AS242"]
