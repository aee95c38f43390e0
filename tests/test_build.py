"""`agentspec build`: shipped specs build both ways, refusals, secrets, writing and --check."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path, PurePosixPath

import pytest
from click.testing import CliRunner, Result

from agentspec.cli import cli
from agentspec.compiler import (
    build_objects,
    compile_spec,
    emit_package,
    stale_files,
    write_package,
)
from tests.buildkit import (
    NEEDS_ENVIRON,
    REQUIRED_BUILDABLE,
    ROOT,
    SHIPPED,
    buildable,
    buildable_params,
    compiled,
    package_loader,
)

RUFF = Path(sys.executable).parent / "ruff"  # the environment running the tests
WEATHER = ROOT / "examples" / "weather" / "agent.yaml"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name="agentspec")


def ruff_problems(text: str, name: str) -> str:
    done = subprocess.run(
        [str(RUFF), "check", "--isolated", "--select", "E,F,W", "--ignore", "E501",
         "--no-cache", "--stdin-filename", name, "-"],
        input=text, capture_output=True, text=True, check=False)
    return "" if done.returncode == 0 else done.stdout + done.stderr


# --- shipped specs ---------------------------------------------------------------------------


def test_the_shipped_examples_are_buildable(monkeypatch: pytest.MonkeyPatch) -> None:
    found = set(buildable())
    missing = [p.relative_to(ROOT).as_posix() for p in REQUIRED_BUILDABLE if p not in found]
    assert not missing, {m: [(d.code, d.message) for d in compiled(ROOT / m).diagnostics]
                         for m in missing}
    # and every shipped spec builds: with an empty environment, or with the variables it needs
    unbuilt = {p.stem for p in SHIPPED if p not in found}
    assert unbuilt == set(NEEDS_ENVIRON)
    for name, environ in NEEDS_ENVIRON.items():
        result = compile_spec(ROOT / "specs" / f"{name}.yaml", environ=environ)
        assert result.ok, [(d.code, d.message) for d in result.diagnostics]
        for key, value in environ.items():  # live objects read `${env.X}` when built
            monkeypatch.setenv(key, value)
        _, problems = build_objects(result)
        assert problems == []  # research_desk's Claude model: LiteLLM is in the dev extra


@pytest.mark.parametrize("path", buildable_params())
def test_builds_in_memory(path: Path) -> None:
    from google.adk.apps import App

    result = compiled(path)
    app, problems = build_objects(result)
    assert problems == []
    assert isinstance(app, App)
    assert result.plan is not None and result.app is not None
    assert app.name == result.plan.app_name
    assert app.root_agent.name == result.check.root == result.app.root.name


@pytest.mark.parametrize("path", buildable_params())
def test_builds_source_that_parses_and_is_lint_clean(path: Path, tmp_path: Path) -> None:
    result = compiled(path)
    assert result.plan is not None
    files = emit_package(result, tmp_path)
    name = PurePosixPath(result.plan.app_name)
    assert {name / "__init__.py", name / "agent.py"} <= set(files)
    assert set(files) <= {name / "__init__.py", name / "agent.py", name / "_paths.py"}
    assert (name / "_paths.py" in files) == bool(result.plan.module_dirs)
    for relative, text in files.items():
        ast.parse(text, filename=str(relative))
        assert ruff_problems(text, str(relative)) == "", relative
    agent = ast.parse(files[name / "agent.py"])
    assigned = {t.id for node in agent.body if isinstance(node, ast.Assign)
                for t in node.targets if isinstance(t, ast.Name)}
    assert {"app", "root_agent"} <= assigned


def test_ruff_check_is_not_toothless() -> None:
    assert ruff_problems("import os\nx = 1 \n", "x.py") != ""


# --- ${env.X} ---------------------------------------------------------------------------------

SECRET_SPEC = """\
    agentspec: 1
    name: secret_app
    description: "app ${env.SECRET_TOKEN}"
    vars: {tok: "${env.SECRET_TOKEN}"}
    global_instruction: "house rules ${vars.tok}"
    tools:
      ping: {python: "secret_tools:make_ping", args: {token: "${env.SECRET_TOKEN}"}}
      remote:
        mcp:
          url: https://example.com/mcp
          headers: {Authorization: "Bearer ${env.SECRET_TOKEN}"}
    agents:
      main:
        model: gemini-2.5-flash
        description: "d ${vars.tok}"
        instruction: "token ${env.SECRET_TOKEN}"
        static_instruction: "static ${env.SECRET_TOKEN}"
        tools: [ping, remote]
    """
SECRET_TOOLS = '''\
    def make_ping(token: str):
        def ping(text: str) -> dict:
            """Echo the text."""
            return {"text": text}
        ping.token = token
        return ping
    '''


def test_env_values_are_read_at_load_time_never_written(
        spec_dir: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = spec_dir(SECRET_SPEC, {"secret_tools.py": SECRET_TOOLS})
    result = compile_spec(path, environ={"SECRET_TOKEN": "s3cr3t"})
    assert result.ok, [(d.code, d.message) for d in result.diagnostics]
    out = tmp_path / "out"
    files = emit_package(result, out)
    for relative, text in files.items():
        assert "s3cr3t" not in text, relative
        ast.parse(text)
    agent_py = files[PurePosixPath("secret_app/agent.py")]
    assert "expand(" in agent_py
    assert "${env.SECRET_TOKEN}" in agent_py
    assert write_package(files, out) == []
    assert not any("s3cr3t" in p.read_text() for p in out.rglob("*.py"))

    monkeypatch.setenv("SECRET_TOKEN", "s3cr3t")
    with package_loader(monkeypatch) as load:
        app = load(out, "secret_app")
        root = app.root_agent
        assert root.instruction == "token s3cr3t"
        assert root.description == "d s3cr3t"
        assert root.static_instruction == "static s3cr3t"
        assert root.tools[0].token == "s3cr3t"
        mcp = root.tools[1].inner  # inside the stand-in of a server it cannot use
        assert mcp._connection_params.headers == {"Authorization": "Bearer s3cr3t"}
        assert app.plugins[0].global_instruction == "house rules s3cr3t"
        # another value in the environment: the same files, another agent
        monkeypatch.setenv("SECRET_TOKEN", "other")
        assert load(out, "secret_app").root_agent.instruction == "token other"
        # unset: loading fails with a message naming the variable
        monkeypatch.delenv("SECRET_TOKEN")
        with pytest.raises(Exception, match="SECRET_TOKEN"):
            load(out, "secret_app")


def test_unset_env_without_default_is_an_error_at_build(
        spec_dir: Callable[..., Path]) -> None:
    path = spec_dir("""\
        agentspec: 1
        name: needs_env
        agents:
          main:
            model: gemini-2.5-flash
            instruction: "token ${env.SECRET_TOKEN}"
            description: "fine ${env.OPTIONAL_THING:-default}"
        """)
    result = compile_spec(path, environ={})
    assert not result.ok
    assert result.plan is None
    assert [(d.code, d.is_error, d.span.start.line if d.span else 0)
            for d in result.diagnostics] == [("AS305", True, 6)]
    assert compile_spec(path, environ={"SECRET_TOKEN": ""}).ok  # set, even empty, is enough


# --- writing the package -----------------------------------------------------------------------


def test_write_package_refuses_a_hand_written_agent_py(tmp_path: Path) -> None:
    result = compiled(WEATHER)
    files = emit_package(result, tmp_path)
    package = tmp_path / "weather_assistant"
    package.mkdir()
    (package / "agent.py").write_text("# my own agent\nroot_agent = None\n")
    problems = write_package(files, tmp_path)
    assert [d.code for d in problems] == ["AS405"]
    assert (package / "agent.py").read_text() == "# my own agent\nroot_agent = None\n"
    assert not (package / "__init__.py").exists()  # nothing at all is written
    # the command says so and fails
    done = invoke("build", str(WEATHER), "-o", str(tmp_path))
    assert done.exit_code == 1
    assert "AS405" in done.output
    assert (package / "agent.py").read_text() == "# my own agent\nroot_agent = None\n"


def test_write_package_replaces_what_it_generated_before(tmp_path: Path) -> None:
    result = compiled(WEATHER)
    files = emit_package(result, tmp_path)
    assert write_package(files, tmp_path) == []
    agent = tmp_path / "weather_assistant" / "agent.py"
    agent.write_text(agent.read_text() + "\nEDITED = True\n")
    leftover = tmp_path / "weather_assistant" / "old_module.py"
    leftover.write_text(files[PurePosixPath("weather_assistant/__init__.py")])
    mine = tmp_path / "weather_assistant" / "notes.py"
    mine.write_text("# hand-written, kept\n")
    assert stale_files(files, tmp_path) != []
    assert write_package(files, tmp_path) == []
    assert "EDITED" not in agent.read_text()
    assert not leftover.exists()  # generated earlier, no longer produced
    assert mine.exists()
    assert stale_files(files, tmp_path) == []
    for relative, text in files.items():
        assert (tmp_path / relative).read_text() == text


def test_build_check_exits_0_when_fresh_and_1_with_a_diff_when_stale(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = invoke("build", str(WEATHER), "-o", str(out), "--check")
    assert done.exit_code == 1  # nothing on disk yet
    assert not out.exists()
    done = invoke("build", str(WEATHER), "-o", str(out))
    assert done.exit_code == 0, done.output
    assert "wrote" in done.output
    before = {p: p.read_text() for p in out.rglob("*.py")}
    done = invoke("build", str(WEATHER), "-o", str(out), "--check")
    assert done.exit_code == 0, done.output
    assert "up to date" in done.output
    agent = out / "weather_assistant" / "agent.py"
    agent.write_text(agent.read_text().replace("name='weather'", "name='hacked'"))
    done = invoke("build", str(WEATHER), "-o", str(out), "--check")
    assert done.exit_code == 1
    assert "stale" in done.output
    assert "-    name='hacked'," in done.output
    assert "+    name='weather'," in done.output
    assert "(on disk)" in done.output and "(from the spec)" in done.output
    assert agent.read_text() != before[agent]  # --check writes nothing


@pytest.mark.parametrize("path", buildable_params())
def test_generated_header_names_the_spec_and_says_do_not_edit(path: Path,
                                                             tmp_path: Path) -> None:
    files = emit_package(compiled(path), tmp_path)
    for relative, text in files.items():
        first = text.splitlines()[0]
        assert first == f"# Code generated by agentspec from {path.name}. DO NOT EDIT.", relative


@pytest.mark.parametrize("path", buildable_params())
def test_output_does_not_depend_on_the_working_directory(
        path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    elsewhere = tmp_path / "somewhere" / "else"
    elsewhere.mkdir(parents=True)
    outputs = []
    for cwd, spec in ((ROOT, path.relative_to(ROOT)), (path.parent, Path(path.name)),
                      (elsewhere, Path(os.path.relpath(path, elsewhere)))):
        monkeypatch.chdir(cwd)
        result = compile_spec(spec, environ={})
        assert result.ok
        outputs.append(emit_package(result, out))
        # a relative -o means the same directory seen from here
        assert emit_package(result, Path(os.path.relpath(out, cwd))) == outputs[0]
    assert outputs[0] == outputs[1] == outputs[2]
    # and the written package loads from anywhere
    assert write_package(outputs[0], out) == []
    monkeypatch.chdir(elsewhere)
    with package_loader(monkeypatch) as load:
        app = load(out, compiled(path).plan.app_name)  # type: ignore[union-attr]
    assert app.name == compiled(path).plan.app_name  # type: ignore[union-attr]


def test_the_package_moves_with_the_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths in the package are relative: a spec and its output copied elsewhere together
    give the same files."""
    import shutil

    first, second = tmp_path / "a" / "weather", tmp_path / "b" / "deeper" / "weather"
    for target in (first, second):
        shutil.copytree(WEATHER.parent, target, ignore=shutil.ignore_patterns("__pycache__"))
    files = [emit_package(compile_spec(d / "agent.yaml", environ={}), d / "build")
             for d in (first, second)]
    assert files[0] == files[1]


# --- instruction files are verbatim ------------------------------------------------------------


def test_instruction_files_are_read_as_they_are(spec_dir: Callable[..., Path],
                                                tmp_path: Path) -> None:
    text = "Run `echo ${env.AGENTSPEC_TEST_UNSET}` and write $${HOME} literally.\n"
    path = spec_dir("""\
        agentspec: 1
        name: verbatim_app
        agents:
          main: {model: gemini-2.5-flash, instruction_file: prompt.md}
        """, {"prompt.md": text})
    result = compile_spec(path, environ={})
    assert result.ok
    app, problems = build_objects(result)
    assert problems == []
    assert app.root_agent.instruction == text
    agent_py = emit_package(result, tmp_path / "out")[PurePosixPath("verbatim_app/agent.py")]
    assert "expand(" not in agent_py


@pytest.mark.parametrize("spec", ["specs/pipeline.yaml", "specs/travel_desk.yaml",
                                  "specs/deep_agent.yaml", "specs/support_router.yaml",
                                  "specs/planner.yaml", "specs/offline_jobs.yaml",
                                  "examples/weather/agent.yaml"])
def test_committed_packages_match_their_specs(spec: str) -> None:
    """The generated packages beside the shipped specs are what `build` makes of them now:
    `agentspec build SPEC` regenerates one after a change."""
    compiled = compile_spec(ROOT / spec, environ={})
    assert compiled.ok, compiled.diagnostics
    files = emit_package(compiled, compiled.spec_dir)
    assert stale_files(files, compiled.spec_dir) == []


def test_build_check_needs_no_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 20: `build --check` failed on an unset `${env.X}` (the shipped research desk
    without GITHUB_TOKEN; a pull request from a fork has no secrets)."""
    spec = ROOT / "specs" / "research_desk.yaml"
    out = tmp_path / "out"
    monkeypatch.setenv("GITHUB_TOKEN", "the-secret")
    assert invoke("build", str(spec), "-o", str(out)).exit_code == 0
    monkeypatch.delenv("GITHUB_TOKEN")
    assert invoke("build", str(spec), "-o", str(out)).exit_code == 1  # a build still needs it
    done = invoke("build", str(spec), "-o", str(out), "--check")
    assert done.exit_code == 0, done.output
    assert "GITHUB_TOKEN" in done.output and "not constructed" in done.output
    assert "up to date" in done.output and "the-secret" not in done.output
    agent = out / "research_desk" / "agent.py"
    agent.write_text(agent.read_text() + "# edited\n")
    assert invoke("build", str(spec), "-o", str(out), "--check").exit_code == 1


def test_a_second_project_in_one_process_gets_its_own_modules(tmp_path: Path) -> None:
    """Two projects whose tool modules share a name, built one after the other in one
    process (an editor, a test run, the Python API): each gets its own file, as it would in
    a fresh process (the second got the first's module from sys.modules)."""
    for name, function in (("one", "lookup"), ("two", "search")):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "shared_tools_mod.py").write_text(
            f"def {function}(q: str) -> str:\n    \"\"\"Finds q.\"\"\"\n    return q\n")
        (folder / "spec.yaml").write_text(
            f"agentspec: 1\nname: {name}\ntools:\n  find: {{python: shared_tools_mod:{function}}}\n"
            "agents:\n  lead:\n    model: gemini-2.5-flash\n    instruction: Help.\n"
            "    tools: [find]\n")
        done = invoke("build", str(folder / "spec.yaml"), "-o", str(tmp_path / f"out_{name}"))
        assert done.exit_code == 0, done.output
