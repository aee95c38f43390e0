"""The `agentspec` command: exit codes, formats, globs, environments, explain, schema, version."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentspec.cli import cli
from agentspec.diagnostics import REGISTRY
from agentspec.language.schema import json_schema

CLEAN = """\
agentspec: 1
name: clean
agents:
  main:
    instruction: Answer the question.
    model: gemini-2.5-flash
"""

# one warning (AS305: an unset environment variable), no errors
WARNING_ONLY = """\
agentspec: 1
name: warned
agents:
  main:
    instruction: Answer about ${env.AGENTSPEC_TEST_UNSET}.
    model: gemini-2.5-flash
"""

# one error (AS201 at 6:18)
BROKEN = """\
agentspec: 1
name: broken
agents:
  main:
    instruction: Answer.
    sub_agents: [ghost]
    model: gemini-2.5-flash
"""

# the base spec names an unknown model; the `prod` overlay fixes it, `dev` does not
OVERLAYS = """\
agentspec: 1
name: envs
models: {fast: gemini-2.5-flash}
agents:
  main: {instruction: Hi, model: fsat}
environments:
  prod:
    agents: {main: {model: fast}}
  dev: {}
"""


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name, text in {"clean.yaml": CLEAN, "warning.yaml": WARNING_ONLY,
                       "broken.yaml": BROKEN, "envs.yaml": OVERLAYS}.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name="agentspec")


def concise_codes(output: str) -> list[tuple[str, int, int, str]]:
    found = []
    for line in output.splitlines():
        match = re.match(r"^(.+?):(\d+):(\d+): (AS\d{3}) ", line)
        if match:
            found.append((match.group(1), int(match.group(2)), int(match.group(3)),
                          match.group(4)))
        elif line.startswith("agentspec: AS"):
            found.append(("", 0, 0, line.split()[1]))
    return found


# --- validate: exit codes -------------------------------------------------------------------


def test_clean_spec_exits_0(workdir: Path) -> None:
    result = run("validate", "clean.yaml")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert "ok" in result.stderr


def test_errors_exit_1(workdir: Path) -> None:
    result = run("validate", "broken.yaml")
    assert result.exit_code == 1
    assert concise_codes(result.stdout) == [("broken.yaml", 6, 18, "AS201")]


def test_warnings_only_exit_0(workdir: Path) -> None:
    result = run("validate", "warning.yaml")
    assert result.exit_code == 0
    assert concise_codes(result.stdout) == [("warning.yaml", 5, 31, "AS305")]


def test_warnings_with_strict_exit_1(workdir: Path) -> None:
    result = run("validate", "--strict", "warning.yaml")
    assert result.exit_code == 1
    assert concise_codes(result.stdout) == [("warning.yaml", 5, 31, "AS305")]
    assert run("validate", "--strict", "clean.yaml").exit_code == 0


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("validate",),
        ("validate", "--no-such-option", "clean.yaml"),
        ("--no-such-option",),
        ("no-such-command",),
        ("validate", "--format", "xml", "clean.yaml"),
        ("validate", "--env"),
    ],
)
def test_usage_errors_exit_2(workdir: Path, args: tuple[str, ...]) -> None:
    assert run(*args).exit_code == 2


def test_missing_named_file_is_a_diagnostic_and_exits_2(workdir: Path) -> None:
    result = run("validate", "nope.yaml")
    assert result.exit_code == 2
    assert [c[3] for c in concise_codes(result.stdout)] == ["AS001"]


def test_directory_is_a_diagnostic_and_exits_2(workdir: Path) -> None:
    (workdir / "adir").mkdir()
    result = run("validate", "adir")
    assert result.exit_code == 2
    assert [c[3] for c in concise_codes(result.stdout)] == ["AS002"]


# --- validate: formats ----------------------------------------------------------------------


def test_json_format(workdir: Path) -> None:
    result = run("validate", "--format", "json", "broken.yaml", "warning.yaml")
    assert result.exit_code == 1
    rows = json.loads(result.stdout)
    assert [(r["location"]["file"], r["location"]["line"], r["location"]["column"], r["code"])
            for r in rows] == [("broken.yaml", 6, 18, "AS201"), ("warning.yaml", 5, 31, "AS305")]
    assert [r["severity"] for r in rows] == ["error", "warning"]
    for row in rows:
        assert {"code", "name", "message", "location"} <= set(row)


def test_json_format_clean_is_an_empty_list(workdir: Path) -> None:
    result = run("validate", "--format", "json", "clean.yaml")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == []


def test_github_format(workdir: Path) -> None:
    result = run("validate", "--format", "github", "broken.yaml")
    assert result.exit_code == 1
    assert result.stdout.startswith("::error file=broken.yaml,line=6,col=18,title=AS201 ")


def test_full_format(workdir: Path) -> None:
    result = run("validate", "--format", "full", "broken.yaml")
    assert result.exit_code == 1
    assert "error[AS201]" in result.stdout
    assert "--> broken.yaml:6:18" in result.stdout
    assert "^^^^^" in result.stdout


def test_strict_json_reports_warnings_as_errors(workdir: Path) -> None:
    result = run("validate", "--strict", "--format", "json", "warning.yaml")
    assert result.exit_code == 1
    assert [r["severity"] for r in json.loads(result.stdout)] == ["error"]


# --- validate: several files and globs ------------------------------------------------------


def test_several_files(workdir: Path) -> None:
    result = run("validate", "clean.yaml", "broken.yaml", "warning.yaml")
    assert result.exit_code == 1
    assert concise_codes(result.stdout) == [("broken.yaml", 6, 18, "AS201"),
                                            ("warning.yaml", 5, 31, "AS305")]
    assert "3 specs" in result.stderr


def test_several_clean_files(workdir: Path) -> None:
    result = run("validate", "clean.yaml", "warning.yaml")
    assert result.exit_code == 0


def test_glob(workdir: Path) -> None:
    specs = workdir / "specs"
    specs.mkdir()
    (specs / "a.yaml").write_text(CLEAN)
    (specs / "b.yaml").write_text(BROKEN)
    (specs / "notes.md").write_text("not a spec\n")
    result = run("validate", "specs/*.yaml")
    assert result.exit_code == 1
    assert concise_codes(result.stdout) == [("specs/b.yaml", 6, 18, "AS201")]
    assert "2 specs" in result.stderr


def test_glob_of_clean_specs(workdir: Path) -> None:
    specs = workdir / "specs"
    specs.mkdir()
    (specs / "a.yaml").write_text(CLEAN)
    (specs / "b.yaml").write_text(WARNING_ONLY)
    assert run("validate", "specs/*.yaml").exit_code == 0


def test_glob_matching_nothing_reports_as001(workdir: Path) -> None:
    result = run("validate", "nothing/*.yaml")
    assert result.exit_code in (1, 2)
    assert concise_codes(result.stdout) == [("", 0, 0, "AS001")]


def test_glob_matching_nothing(workdir: Path) -> None:
    result = run("validate", "nothing/*.yaml")
    assert result.exit_code == 1
    assert concise_codes(result.stdout) == [("", 0, 0, "AS001")]


def test_glob_matching_nothing_beside_a_clean_file(workdir: Path) -> None:
    result = run("validate", "clean.yaml", "nothing/*.yaml")
    assert result.exit_code == 1
    assert [c[3] for c in concise_codes(result.stdout)] == ["AS001"]


def test_glob_and_explicit_name_are_checked_once(workdir: Path) -> None:
    result = run("validate", "--format", "json", "broken.yaml", "broke*.yaml")
    assert [r["code"] for r in json.loads(result.stdout)] == ["AS201"]
    assert "1 spec," in run("validate", "broken.yaml", "broke*.yaml").stderr


# --- validate: environments -----------------------------------------------------------------


def test_without_env_base_and_every_overlay_are_checked(workdir: Path) -> None:
    result = run("validate", "envs.yaml")
    assert result.exit_code == 1
    assert concise_codes(result.stdout) == [("envs.yaml", 5, 34, "AS202")]


def test_env_picks_the_overlay(workdir: Path) -> None:
    assert run("validate", "--env", "prod", "envs.yaml").exit_code == 0
    dev = run("validate", "--env", "dev", "envs.yaml")
    assert dev.exit_code == 1
    assert concise_codes(dev.stdout) == [("envs.yaml", 5, 34, "AS202")]


def test_unknown_env(workdir: Path) -> None:
    result = run("validate", "--env", "staging", "envs.yaml")
    assert result.exit_code == 1
    assert "AS307" in [c[3] for c in concise_codes(result.stdout)]


# --- explain, schema, version ---------------------------------------------------------------


def test_explain_code() -> None:
    result = run("explain", "AS201")
    assert result.exit_code == 0
    entry = REGISTRY["AS201"]
    assert "unknown-agent" in result.stdout
    assert entry.explanation in result.stdout


def test_explain_by_name_and_lowercase() -> None:
    by_name = run("explain", "unknown-agent")
    assert by_name.exit_code == 0
    assert by_name.stdout == run("explain", "AS201").stdout
    assert run("explain", "as201").stdout == by_name.stdout


def test_explain_unknown_code_exits_2() -> None:
    result = run("explain", "ASX")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "ASX" in result.stderr


@pytest.mark.parametrize("prefix", ["AS2", "as21", "AS20", "AS0"])
def test_explain_a_prefix_lists_the_codes_under_it(prefix: str) -> None:
    """`AS2` names every 2xx code to `--select`; `explain` lists them, as `--all` does."""
    result = run("explain", prefix)
    assert result.exit_code == 0, result.stderr
    listed = re.findall(r"^(AS\d{3})\s+(\S+)", result.stdout, flags=re.MULTILINE)
    under = [(code, e.name) for code, e in REGISTRY.items() if code.startswith(prefix.upper())]
    assert listed == under and len(under) > 1
    assert run("explain", "ALL").stdout == run("explain", "--all").stdout


def test_explain_a_prefix_of_no_code_exits_2() -> None:
    free = next(f"AS{n}" for n in range(10, 100) if not any(
        c.startswith(f"AS{n}") for c in REGISTRY))
    result = run("explain", free)
    assert result.exit_code == 2 and result.stdout == ""
    assert f"unknown code `{free}`" in result.stderr


def test_explain_all_lists_every_code() -> None:
    result = run("explain", "--all")
    assert result.exit_code == 0
    listed = re.findall(r"^(AS\d{3})\s+(\S+)", result.stdout, flags=re.MULTILINE)
    assert listed == [(code, entry.name) for code, entry in REGISTRY.items()]


def test_schema_prints_the_json_schema() -> None:
    result = run("schema")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == json_schema()


def test_schema_writes_the_schema_into_a_project_and_never_through_a_link(
        tmp_path: Path) -> None:
    target = tmp_path / "editor" / "agentspec.schema.json"
    written = run("schema", "-o", str(target))
    assert written.exit_code == 0, written.output
    assert json.loads(target.read_text()) == json_schema()
    target.write_text("{}")
    assert run("schema", "--output", str(target)).exit_code == 0  # an older one is replaced
    assert json.loads(target.read_text()) == json_schema()
    outside = tmp_path / "outside.json"
    outside.write_text("mine")
    (tmp_path / "link.json").symlink_to(outside)
    refused = run("schema", "-o", str(tmp_path / "link.json"))
    assert refused.exit_code == 1 and "symbolic link" in refused.output, refused.output
    assert outside.read_text() == "mine"


def test_version() -> None:
    from importlib.metadata import version

    result = run("--version")
    assert result.exit_code == 0
    assert version("agentspec-adk") in result.stdout


def test_help_lists_commands() -> None:
    result = run("--help")
    assert result.exit_code == 0
    for command in ("validate", "schema", "explain"):
        assert command in result.stdout


def test_internal_failure_exits_2_without_a_traceback(
        workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The validate docstring promises exit status 2 for an internal failure."""
    import agentspec.validate.check

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated internal failure")

    monkeypatch.setattr(agentspec.validate.check, "check", boom)
    result = run("validate", "clean.yaml")
    assert result.exit_code == 2


# --- real subprocesses ----------------------------------------------------------------------


def agentspec_process(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentspec", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_subprocess_clean_and_broken(workdir: Path) -> None:
    clean = agentspec_process(workdir, "validate", "clean.yaml")
    assert clean.returncode == 0, clean.stderr
    assert "Traceback" not in clean.stderr
    broken = agentspec_process(workdir, "validate", "--format", "json", "broken.yaml")
    assert broken.returncode == 1
    assert [r["code"] for r in json.loads(broken.stdout)] == ["AS201"]


def test_subprocess_usage_error_and_version(workdir: Path) -> None:
    assert agentspec_process(workdir).returncode == 2
    assert agentspec_process(workdir, "validate", "--bogus", "x.yaml").returncode == 2
    version = agentspec_process(workdir, "--version")
    assert version.returncode == 0
    assert version.stdout.startswith("agentspec, version ")


@pytest.mark.slow
def test_subprocess_glob_and_strict(workdir: Path) -> None:
    warned = agentspec_process(workdir, "validate", "warn*.yaml")
    assert warned.returncode == 0
    strict = agentspec_process(workdir, "validate", "--strict", "warn*.yaml")
    assert strict.returncode == 1


def test_subprocess_internal_failure_exits_2(workdir: Path) -> None:
    code = textwrap.dedent("""\
        import sys
        import agentspec.validate.check
        def boom(*args, **kwargs):
            raise RuntimeError("simulated internal failure")
        agentspec.validate.check.check = boom
        sys.argv = ["agentspec", "validate", "clean.yaml"]
        from agentspec.cli import main
        main()
        """)
    done = subprocess.run([sys.executable, "-c", code], cwd=workdir, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2, done.stderr


def test_a_reader_that_leaves_early_is_no_internal_error(tmp_path: Path) -> None:
    # `agentspec explain --all | head`: the pipe's reader is gone before the output is
    # written (here, before the command starts); that is the reader's choice, not a bug
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "agentspec", "explain", "--all"],
                              cwd=tmp_path, stdout=write, stderr=subprocess.PIPE, text=True,
                              timeout=120)
    finally:
        os.close(write)
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_is_the_systems_refusal_not_a_bug(tmp_path: Path) -> None:
    """Output that cannot be written (a full disk, here /dev/full) names the system's
    refusal; "a bug in agentspec" is for ours."""
    spec = tmp_path / "spec.yaml"
    spec.write_text("agentspec: 1\nname: x\nagents:\n  a: {model: gemini-2.5-flash, "
                    "instruction: Hi.}\nbogus: 1\n")
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "agentspec", "validate", str(spec)],
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=120,
                              env={**os.environ, "AGENTSPEC_CACHE_DIR": ""})
    assert done.returncode == 2
    assert "the system refused a write: No space left on device" in done.stderr
    assert "bug in agentspec" not in done.stderr and "Traceback" not in done.stderr
