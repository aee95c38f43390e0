"""What users choose to hear: `validate --select/--ignore`, `# agentspec: ignore[...]`
comments, the project's config file (`agentspec.toml`, `[tool.agentspec]`), and `diff
--fail-on`/`--except` by risk, category and code (issues 22.4 and 26.4)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentspec.cli import cli
from agentspec.diagnostics.config import find_config, load_config
from agentspec.diagnostics.model import Category, Risk
from agentspec.diagnostics.selectors import Selection, change_selector, selector
from agentspec.diagnostics.suppress import suppressions
from agentspec.source import SourceFile
from agentspec.validate.check import check

#: two warnings (AS224 on line 8, AS226 on line 10) and, with `ERROR`, an error (AS215)
SPEC = """\
agentspec: 1
name: demo
root: assistant
agents:
  assistant:
    instruction: Help the user.{error}
    sub_agents: [refine]
  legacy_helper:
    instruction: Help the user the old way.
  refine:
    kind: loop
    sub_agents: [critic]
  critic:
    instruction: Critique the draft.
"""
ERROR = "\n    interrupt_on: {nope: true}"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name="agentspec")


def codes(output: str) -> list[str]:
    return re.findall(r":\d+:\d+: (AS\d{3}) ", output)


def project(tmp_path: Path, spec: str = SPEC.format(error="")) -> Path:
    """A project (a git work tree) holding `spec.yaml` in a subdirectory."""
    (tmp_path / ".git").mkdir(parents=True)
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "spec.yaml").write_text(spec)
    return tmp_path / "agents" / "spec.yaml"


# naming codes ---------------------------------------------------------------------------


def test_codes_are_named_by_code_name_prefix_or_all() -> None:
    assert selector("as224").prefix == "AS224"  # type: ignore[union-attr]
    assert selector("unreachable-agent").prefix == "AS224"  # type: ignore[union-attr]
    assert selector("AS2").prefix == "AS2"  # type: ignore[union-attr]
    assert selector("ALL").prefix == "AS"  # type: ignore[union-attr]
    for nothing in ("AS999", "AS8", "unreachable-agnt", "AS2x", "", "A"):
        assert selector(nothing) is None, nothing


def test_the_most_specific_selector_wins_and_ignore_wins_a_tie() -> None:
    pick = selector
    narrowed = Selection((pick("AS2"),), (pick("AS224"),))  # type: ignore[arg-type]
    assert narrowed.hears("AS226") and not narrowed.hears("AS224")
    assert not narrowed.hears("AS101")  # not selected
    widened = Selection((pick("AS224"),), (pick("AS2"),))  # type: ignore[arg-type]
    assert widened.hears("AS224") and not widened.hears("AS226")
    tie = Selection((pick("AS224"),), (pick("unreachable-agent"),))  # type: ignore[arg-type]
    assert not tie.hears("AS224")
    assert Selection().hears("AS224")


def test_diff_entries_are_risks_categories_or_diff_codes() -> None:
    high = change_selector("high")
    assert high is not None and high.risk is Risk.HIGH
    assert high.matches("AS518", Risk.HIGH, Category.OPERATIONS, or_higher=True)
    medium = change_selector("medium")
    assert medium is not None
    assert medium.matches("AS506", Risk.HIGH, Category.SECURITY, or_higher=True)
    assert not medium.matches("AS506", Risk.HIGH, Category.SECURITY)  # --except: exactly
    security = change_selector("Security")
    assert security is not None and security.category is Category.SECURITY
    assert change_selector("AS57") is not None and change_selector("tool-added") is not None
    assert change_selector("AS2") is None  # no diff code starts so
    assert change_selector("unreachable-agent") is None


# validate --select / --ignore ------------------------------------------------------------


def test_select_and_ignore_choose_the_warnings_but_never_hide_an_error(tmp_path: Path) -> None:
    spec = project(tmp_path, SPEC.format(error=ERROR))
    assert sorted(codes(run("validate", str(spec)).output)) == ["AS215", "AS224", "AS226"]
    ignored = run("validate", str(spec), "--ignore", "AS224,loop-unbounded")
    assert codes(ignored.output) == ["AS215"] and ignored.exit_code == 1
    selected = run("validate", str(spec), "--select", "AS226")
    assert codes(selected.output) == ["AS215", "AS226"]
    every_error = run("validate", str(spec), "--ignore", "ALL")
    assert codes(every_error.output) == ["AS215"] and every_error.exit_code == 1


def test_ignoring_only_errors_is_said(tmp_path: Path) -> None:
    spec = project(tmp_path, SPEC.format(error=ERROR))
    done = run("validate", str(spec), "--ignore", "interrupt-unknown-tool")
    assert "names only errors" in done.stderr and "AS215" in done.stdout
    (tmp_path / "agentspec.toml").write_text("ignore = ['AS2', 'AS215']\n")
    found = [(d.code, d.span.start.col if d.span else 0) for d in check(spec).diagnostics]
    assert sorted(found) == [("AS015", 18), ("AS215", 20)]


def test_an_unknown_selector_is_a_usage_error(tmp_path: Path) -> None:
    spec = project(tmp_path)
    done = run("validate", str(spec), "--ignore", "unreachable-agnt")
    assert done.exit_code == 2 and "unreachable-agent" in done.output
    assert run("validate", str(spec), "--select", ",").exit_code == 2


def test_strict_fails_only_on_what_is_heard(tmp_path: Path) -> None:
    spec = project(tmp_path)
    assert run("validate", "--strict", str(spec)).exit_code == 1
    assert run("validate", "--strict", "--ignore", "AS224,AS226", str(spec)).exit_code == 0


# suppression comments --------------------------------------------------------------------


def test_a_suppression_hides_its_line_only_and_is_reported_when_unused(tmp_path: Path) -> None:
    text = SPEC.format(error="").replace("  legacy_helper:", "  legacy_helper:  # agentspec: "
                                         "ignore[AS224, AS226]")
    spec = project(tmp_path, text)
    found = check(spec).diagnostics
    assert [(d.code, d.span.start.line if d.span else 0) for d in found] == [
        ("AS018", 8), ("AS226", 10)]
    assert "AS226" in found[0].message
    moved = text.replace("  refine:", "  refine:  # agentspec: ignore[loop-unbounded]")
    spec.write_text(moved)
    assert [d.code for d in check(spec).diagnostics] == ["AS018"]


def test_a_spec_comment_never_hides_a_diff_change(tmp_path: Path) -> None:
    """A change's author must not hide it from its reviewer: a suppression naming diff
    codes is refused, and diff reports the change on that line all the same."""
    _, problems = suppressions(SourceFile(tmp_path / "s.yaml",
                                          "a: 1  # agentspec: ignore[tool-added, AS57]\n",
                                          "s.yaml"))
    assert [p.code for p in problems] == ["AS019", "AS019"]
    assert "diff changes" in problems[0].message


def test_a_suppression_inside_a_value_is_text(tmp_path: Path) -> None:
    """Block text, quoted strings and plain values that hold the marker are never comments
    (an instruction may quote one), so they neither hide nor count as unused."""
    text = ("a: |\n  # agentspec: ignore[AS224]\nb: \"x # agentspec: ignore[AS224]\"\n"
            "c: 'x # agentspec: ignore[AS224]'\nd: x # agentspec: ignore[AS224]\n")
    found, problems = suppressions(SourceFile(tmp_path / "s.yaml", text, "s.yaml"))
    assert [(s.line, s.span.start.col) for s in found] == [(5, 26)] and problems == []


def test_a_malformed_or_broken_file_gives_diagnostics_not_a_crash(tmp_path: Path) -> None:
    for text in ("a: [\n# agentspec: ignore[AS224\n", "# agentspec: ignore[,,,]\n",
                 "x: 1 # agentspec: ignore[" + "A" * 100_000 + "]\n", "\x00# agentspec:\n",
                 "a: b # agentspec: ignore[AS2, AS999]  # agentspec: ignore[AS2]\n"):
        found, problems = suppressions(SourceFile(tmp_path / "s.yaml", text, "s.yaml"))
        assert all(p.code == "AS019" for p in problems)
        assert all(s.selector.prefix.startswith("AS") for s in found)


# the project's config file ---------------------------------------------------------------


def test_pyproject_table_applies_from_above_the_spec(tmp_path: Path) -> None:
    spec = project(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname = 'x'\n\n[tool.agentspec]\nignore = ['AS224']\n")
    assert find_config(spec) == tmp_path / "pyproject.toml"
    assert codes(run("validate", str(spec)).output) == ["AS226"]
    # the command line's --select replaces the file's, --ignore adds to it
    assert codes(run("validate", str(spec), "--ignore", "AS226").output) == []
    (tmp_path / "agents" / "agentspec.toml").write_text('select = ["AS224"]\n')
    assert find_config(spec) == tmp_path / "agents" / "agentspec.toml"  # the nearest wins
    assert codes(run("validate", str(spec)).output) == ["AS224"]
    assert codes(run("validate", str(spec), "--select", "AS226").output) == ["AS226"]


def test_no_config_is_read_above_the_project(tmp_path: Path) -> None:
    (tmp_path / "agentspec.toml").write_text('ignore = ["ALL"]\n')
    spec = project(tmp_path / "repo")
    assert find_config(spec) is None
    assert codes(run("validate", str(spec)).output) == ["AS224", "AS226"]


def test_a_pyproject_without_the_table_is_passed_over(tmp_path: Path) -> None:
    spec = project(tmp_path)
    (tmp_path / "agents" / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    (tmp_path / "agentspec.toml").write_text('ignore = ["AS226"]\n')
    assert find_config(spec) == tmp_path / "agentspec.toml"


@pytest.mark.parametrize(("text", "line", "col"), [
    ("ignore = [\"AS224\"\n", 2, 1),  # TOML syntax: the parser's position
    ("ignore = [\"AS224\"\nx\n", 2, 1),
    ("ignore = \"AS224\"\n", 1, 1),  # not a list
    ("[diff]\nexcept = [1]\n", 2, 1),
    ("diff = 3\n", 1, 1),
    ("\n\nselect = [\n  'AS2',\n  'AS9',\n]\n", 5, 3),
    # U+2028 and U+0085 are text in a TOML comment, not line breaks (str.splitlines's are)
    ("# a note \u2028 and \x85 more\nselect = ['AS9']\n", 2, 11),
])
def test_config_problems_are_diagnostics_at_their_line(tmp_path: Path, text: str, line: int,
                                                       col: int) -> None:
    spec = project(tmp_path)
    (tmp_path / "agentspec.toml").write_text(text)
    found = [d for d in check(spec).diagnostics if d.code == "AS015"]
    assert [(d.span.start.line, d.span.start.col) for d in found if d.span] == [(line, col)]
    assert found[0].span is not None and found[0].span.file.endswith("agentspec.toml")


def test_an_unreadable_or_huge_config_is_a_diagnostic(tmp_path: Path) -> None:
    spec = project(tmp_path)
    (tmp_path / "agentspec.toml").write_bytes(b"ignore = ['\xff']\n")
    assert [d.code for d in check(spec).diagnostics if d.code == "AS015"] == ["AS015"]
    (tmp_path / "agentspec.toml").write_text("# " + "x" * 300_000 + "\n")
    assert [d.code for d in check(spec).diagnostics if d.code == "AS015"] == ["AS015"]
    (tmp_path / "agentspec.toml").write_text("x = " + "[" * 100_000 + "\n")
    assert [d.code for d in check(spec).diagnostics if d.code == "AS015"] == ["AS015"]
    (tmp_path / "agentspec.toml").unlink()
    (tmp_path / "outside.toml").write_text("secret = [ hunter2\n")
    (tmp_path / "agentspec.toml").symlink_to(tmp_path / "outside.toml")
    linked = [d for d in check(spec).diagnostics if d.code == "AS015"]
    assert len(linked) == 1 and "link" in linked[0].message
    assert linked[0].span is not None and linked[0].span.file.endswith("agentspec.toml")
    assert load_config(None).selection().hears("AS224")


# diff --fail-on / --except ---------------------------------------------------------------

CASES = Path(__file__).parent / "diff_cases"


def diff(case: str, *args: str) -> Result:
    folder = CASES / case
    return run("diff", str(folder / "old.yaml"), str(folder / "new.yaml"), *args)


def test_fail_on_names_categories_and_codes() -> None:
    # sandbox_network_and_mount: two high security changes and a medium operations one
    assert diff("sandbox_network_and_mount", "--fail-on", "security").exit_code == 1
    assert diff("sandbox_network_and_mount", "--fail-on", "cosmetic").exit_code == 0
    assert diff("sandbox_network_and_mount", "--fail-on", "limit-changed").exit_code == 1
    assert diff("sandbox_network_and_mount", "--fail-on", "AS57").exit_code == 1
    assert diff("sandbox_network_and_mount", "--fail-on", "AS52,cosmetic").exit_code == 0
    assert diff("agent_renamed", "--fail-on", "cosmetic").exit_code == 1


def test_except_leaves_changes_out_of_the_output_and_the_verdict() -> None:
    done = diff("sandbox_network_and_mount", "--except", "security", "--format", "json")
    data = json.loads(done.output)
    assert [c["change"] for c in data["changes"]] == ["limit-changed"]
    assert data["changes"][0]["category"] == "operations"
    assert data["summary"] == {"high": 0, "medium": 1, "low": 0}
    assert diff("sandbox_network_and_mount", "--fail-on", "high", "--except",
                "AS572", "--except", "sandbox-mount-added").exit_code == 0
    assert diff("sandbox_network_and_mount", "--fail-on", "high", "--except",
                "AS572").exit_code == 1


def test_what_except_leaves_out_is_always_said() -> None:
    """A config file's `except` (one beside the new file, which the reader of the output may
    never have seen) left high-risk changes out with only "0 change(s)" shown."""
    text = diff("sandbox_network_and_mount", "--except", "security", "--fail-on", "high")
    assert text.exit_code == 0
    assert text.output.splitlines()[-1].endswith(
        "; 2 more left out by `except` (2 high): `security`"), text.output
    data = json.loads(diff("sandbox_network_and_mount", "--except", "security",
                           "--format", "json").output)
    assert data["left_out"] == {"high": 2, "medium": 0, "low": 0}
    shown = diff("sandbox_network_and_mount", "--except", "AS572", "--except", "AS574",
                 "--format", "markdown").output
    assert shown.rstrip().endswith("2 more left out by `except` (2 high): `AS572`, "
                                   "`AS574`"), shown
    nothing = diff("sandbox_network_and_mount", "--format", "json").output
    assert json.loads(nothing)["left_out"] == {"high": 0, "medium": 0, "low": 0}
    assert "left out" not in diff("sandbox_network_and_mount").output


def test_an_unknown_entry_is_a_usage_error() -> None:
    done = diff("no_change", "--fail-on", "securty")
    assert done.exit_code == 2 and "security" in done.output
    assert diff("no_change", "--except", "unreachable-agent").exit_code == 2
    assert diff("no_change", "--fail-on", " , ").exit_code == 2  # would drop the config's


def test_the_project_config_sets_the_diff_defaults(tmp_path: Path) -> None:
    folder = CASES / "sandbox_network_and_mount"
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    for name in ("old.yaml", "new.yaml"):
        (tmp_path / name).write_text((folder / name).read_text())
    (tmp_path / "reference").mkdir()
    old, new = str(tmp_path / "old.yaml"), str(tmp_path / "new.yaml")
    (tmp_path / "agentspec.toml").write_text("[diff]\nfail-on = ['security']\n")
    assert run("diff", old, new).exit_code == 1
    assert run("diff", old, new, "--fail-on", "cosmetic").exit_code == 0  # replaces
    (tmp_path / "agentspec.toml").write_text(
        "[diff]\nfail-on = ['security']\nexcept = ['AS572', 'AS574']\n")
    assert run("diff", old, new).exit_code == 0
    assert run("diff", old, new, "--except", "operations").output.startswith("0 change(s)")
    (tmp_path / "agentspec.toml").write_text("[diff]\nfail-on = ['securty']\n")
    broken = run("diff", old, new)
    assert broken.exit_code == 1 and "AS015" in broken.output and "agentspec.toml:2" in \
        broken.output


def test_a_change_is_judged_by_the_base_revisions_settings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pull request that loosens the gate in the same change (`except = ["security"]`)
    is judged by the base revision's config: `diff --base` reads it from the revision."""
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    spec = ("agentspec: 1\nname: desk\nagents:\n  lead:\n    model: gemini-2.5-flash\n"
            "    instruction: Help.\n")
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "desk.yaml").write_text(spec)
    (tmp_path / "agentspec.toml").write_text("[diff]\nfail-on = ['security']\n")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "base")
    (tmp_path / "agents" / "desk.yaml").write_text(
        spec + "    tools: [{builtin: google_search}]\n")
    (tmp_path / "agentspec.toml").write_text("[diff]\nexcept = ['security']\n")
    monkeypatch.chdir(tmp_path)
    judged = run("diff", "--base", "HEAD", "agents/desk.yaml")
    files = run("diff", "./agents/desk.yaml", "./agents/desk.yaml")
    assert judged.exit_code == 1 and "tool-added" in judged.output, judged.output
    assert files.exit_code == 0
