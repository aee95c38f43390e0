"""`agentspec diff`: golden pairs (each change's code, agent, risk and positions in both
versions, never the wording), two git revisions of a spec, the formats and --fail-on."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import example, given
from hypothesis import strategies as st

from agentspec.cli import cli
from agentspec.diagnostics import REGISTRY
from agentspec.review.diff import Change, Where, absent_side, compare, load_side
from agentspec.review.markdown import code, inline, markdown
from tests.buildkit import ROOT

CASES = Path(__file__).parent / "diff_cases"


def _pos(where: Where | None) -> str:
    return f"{Path(where.file).name}:{where.line}" if where else "-"


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_golden_diff(case: str) -> None:
    folder = CASES / case
    env = (folder / "env").read_text().strip() if (folder / "env").exists() else None
    old, new = (load_side(folder / name, name, environment=env, environ={})
                if (folder / name).exists() else absent_side(folder / name, name)
                for name in ("old.yaml", "new.yaml"))  # one missing: a spec added or removed
    assert (old.app or old.absent) and (new.app or new.absent), old.problems + new.problems
    changes = compare(old, new)
    found = [f"{c.change} {c.agent} {c.risk} {_pos(c.old)} {_pos(c.new)}" for c in changes]
    assert found == (folder / "expected.txt").read_text().splitlines()
    # each change has a risk its code declares, and its code's category
    assert all(c.risk in REGISTRY[c.code].risks and c.category is REGISTRY[c.code].category
               and c.category is not None for c in changes)


def test_there_are_enough_golden_pairs() -> None:
    assert len([p for p in CASES.iterdir() if p.is_dir()]) >= 25


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, ["diff", *args], prog_name="agentspec")


def test_formats_and_fail_on() -> None:
    folder = CASES / "approval_dropped"
    old, new = str(folder / "old.yaml"), str(folder / "new.yaml")
    text = invoke(old, new)
    assert text.exit_code == 0, text.output
    assert text.output.splitlines()[0] == "lead"
    assert "HIGH   approval-dropped" in text.output
    assert text.output.splitlines()[-1] == "1 change(s): 1 high, 0 medium, 0 low"
    data = json.loads(invoke(old, new, "--format", "json").output)
    assert data["summary"] == {"high": 1, "medium": 0, "low": 0}
    assert data["changes"][0]["old"].endswith("old.yaml:16:7")
    assert data["changes"][0]["category"] == "security"
    markdown = invoke(old, new, "--format", "markdown").output
    assert "| risk | category | agent |" in markdown
    assert "| high | security | `lead` | `approval-dropped` |" in markdown
    assert invoke(old, new, "--fail-on", "high").exit_code == 1
    lowered = CASES / "loop_limit_lowered"
    quiet = invoke(str(lowered / "old.yaml"), str(lowered / "new.yaml"), "--fail-on", "medium")
    assert quiet.exit_code == 0  # only a low change
    instruction = CASES / "instruction_changed"
    shown = invoke(str(instruction / "old.yaml"), str(instruction / "new.yaml"))
    assert "+Help the user. Never share secrets." in shown.output  # the unified diff


def test_a_side_with_errors_is_reported(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("agentspec: 1\nname: x\nagents: {a: {kind: nope}}\n")
    done = invoke(str(tmp_path / "bad.yaml"), str(CASES / "no_change" / "new.yaml"))
    assert done.exit_code == 1 and "cannot be compared" in done.output


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout


def test_between_two_git_revisions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    (repo / "specs").mkdir(parents=True)
    source = CASES / "change_via_import"
    for name in ("tools.py", "old_common.yaml"):
        shutil.copy(source / name, repo / "specs" / name)
    shutil.copy(source / "old.yaml", repo / "specs" / "desk.yaml")
    _git(repo, "init", "-q")
    _git(repo, "-c", "user.email=a@b.c", "-c", "user.name=A", "add", ".")
    _git(repo, "-c", "user.email=a@b.c", "-c", "user.name=A", "commit", "-qm", "one")
    # the second revision: the import now defines `search` as an MCP server
    shutil.copy(source / "new_common.yaml", repo / "specs" / "old_common.yaml")
    _git(repo, "-c", "user.email=a@b.c", "-c", "user.name=A", "commit", "-qam", "two")
    monkeypatch.chdir(repo)
    between = invoke("HEAD~1:specs/desk.yaml", "HEAD:specs/desk.yaml", "--format", "json")
    assert between.exit_code == 0, between.output
    [change] = json.loads(between.output)["changes"]
    assert (change["change"], change["risk"]) == ("tool-changed", "high")
    assert change["old"] == "HEAD~1:specs/old_common.yaml:3:11"
    assert change["new"] == "HEAD:specs/old_common.yaml:3:11"
    # --base: a revision against the working tree, with a path relative to here
    (repo / "specs" / "desk.yaml").write_text((source / "old.yaml").read_text().replace(
        "Help.", "Help politely."))
    monkeypatch.chdir(repo / "specs")
    working = invoke("--base", "HEAD", "desk.yaml", "--format", "json")
    assert working.exit_code == 0, working.output
    assert [c["change"] for c in json.loads(working.output)["changes"]] == [
        "instruction-changed"]
    absolute = invoke("--base", "HEAD", str(repo / "specs" / "desk.yaml"), "--format", "json")
    assert [c["change"] for c in json.loads(absolute.output)["changes"]] == [
        "instruction-changed"]  # an absolute path is the same file at HEAD, not itself
    escape = invoke("HEAD:../../outside.yaml", "desk.yaml")
    assert escape.exit_code == 2 and "outside the repository" in escape.output
    added = invoke("HEAD:specs/nope.yaml", "desk.yaml", "--format", "json")
    assert added.exit_code == 0, added.output  # a spec the revision lacks is a new one
    assert json.loads(added.output)["changes"][-1]["change"] == "spec-added"
    neither = invoke("HEAD:specs/nope.yaml", "HEAD:specs/none.yaml")
    assert neither.exit_code == 2 and "neither" in neither.output


TOOLED = ("agentspec: 1\nname: tooled\nagents:\n  main:\n    model: gemini-2.5-flash\n"
                        "    instruction: Hi.\n    tools: [{python: 'tools:lookup'}]\n")


def test_a_spec_added_or_removed_since_base_is_reported_as_such(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 20: `diff --base` exited 2 on a spec the pull request adds."""
    repo = _repository(tmp_path, {"specs/gone.yaml": SMALL})
    _commit(repo)
    (repo / "specs" / "gone.yaml").unlink()
    (repo / "specs" / "new.yaml").write_text(SMALL)
    (repo / "specs" / "tooled.yaml").write_text(TOOLED)
    (repo / "specs" / "tools.py").write_text("def lookup(q: str) -> str:\n    return q\n")
    monkeypatch.chdir(repo)
    added = invoke("--base", "HEAD", "specs/new.yaml", "--format", "json")
    assert added.exit_code == 0, added.output
    data = json.loads(added.output)
    assert [(c["change"], c["code"], c["agent"]) for c in data["changes"]] == [
        ("agent-added", "AS501", "main"), ("spec-added", "AS578", "(spec)")]
    assert data["changes"][1]["new"] == "specs/new.yaml:1:1"
    assert invoke("--base", "HEAD", "specs/new.yaml", "--fail-on", "high").exit_code == 0
    assert invoke("--base", "HEAD", "specs/new.yaml", "--fail-on", "medium").exit_code == 1
    tooled = invoke("--base", "HEAD", "specs/tooled.yaml", "--fail-on", "high")
    assert tooled.exit_code == 1 and "HIGH   tool-added" in tooled.output, tooled.output
    removed = invoke("--base", "HEAD", "specs/gone.yaml")
    assert removed.exit_code == 0, removed.output
    assert "LOW    spec-removed" in removed.output and "LOW    agent-removed" in removed.output
    assert removed.output.splitlines()[-1] == "2 change(s): 0 high, 0 medium, 2 low"
    neither = invoke("--base", "HEAD", "specs/never.yaml")
    assert neither.exit_code == 2 and "neither" in neither.output


def test_markdown_lists_high_risks_first_and_a_shared_edit_once(tmp_path: Path) -> None:
    two = ("agentspec: 1\nname: app\nagents:\n  main: {model: gemini-2.5-flash, "
           "instruction: Hi., sub_agents: [helper]}\n  helper: {model: gemini-2.5-flash, "
           "instruction: Help.}\n")
    (tmp_path / "old.yaml").write_text(two)
    (tmp_path / "new.yaml").write_text(two.replace("Hi.", "Hello.").replace(
        "instruction: Help.", "instruction: Help., tools: [{builtin: google_search}]"))
    table = invoke(str(tmp_path / "old.yaml"), str(tmp_path / "new.yaml"), "--format",
                   "markdown").output
    assert table.index("| high | security | `helper`") < \
        table.index("| medium | behaviour | `main`"), table
    folder = CASES / "shared_definitions_edited"
    done = invoke(str(folder / "old.yaml"), str(folder / "new.yaml"), "--format", "markdown",
                  "--fail-on", "high")
    assert done.exit_code == 1
    rows = [line for line in done.output.splitlines() if line.startswith("| ") and
            not line.startswith("| risk")]
    risks = [row.split(" | ")[0].removeprefix("| ") for row in rows]
    assert risks == sorted(risks, key=["high", "medium", "low"].index) and len(rows) == 5
    assert "2 high, 3 medium, 0 low" in done.output
    assert all("`lead`, `billing`, `support`" in row for row in rows)
    text = invoke(str(folder / "old.yaml"), str(folder / "new.yaml")).output
    assert text.splitlines()[-1] == "5 change(s): 2 high, 3 medium, 0 low"
    data = json.loads(invoke(str(folder / "old.yaml"), str(folder / "new.yaml"),
                             "--format", "json").output)
    assert {tuple(c["agents"]) for c in data["changes"]} == {
        ("lead", "billing", "support"), ("lead", "billing", "support", "triage")}


def test_the_shipped_specs_compare_clean_with_themselves() -> None:
    for path in sorted((ROOT / "specs").glob("*.yaml")):
        side = load_side(path, path.name, environ={"GITHUB_TOKEN": "x"})
        assert side.app is not None, (path, side.problems)
        assert compare(side, side) == []


def test_a_revision_is_never_an_option_to_git() -> None:
    done = invoke("--", "--output=/tmp/agentspec-x:a.yaml", str(CASES / "no_change" / "new.yaml"))
    assert done.exit_code == 2 and "neither a file nor REV:path" in done.output
    assert not Path("/tmp/agentspec-x").exists()


def _repository(tmp_path: Path, files: dict[str, str]) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    _git(repo, "init", "-q")
    return repo


def _commit(repo: Path) -> None:
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.email=a@b.c", "-c", "user.name=A", "commit", "-qm", "x")


SMALL = "agentspec: 1\nname: app\nagents:\n  main: {model: gemini-2.5-flash, instruction: Hi.}\n"


def test_a_repository_with_links_pointing_outside_it_can_be_compared(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 12, item 11: tarfile's data filter refused the whole archive."""
    repo = _repository(tmp_path, {"specs/app.yaml": SMALL})
    (repo / "absolute").symlink_to("/etc/passwd")
    (repo / "specs" / "relative").symlink_to("../../outside.txt")
    (repo / "inside").symlink_to("specs/app.yaml")
    _commit(repo)
    (repo / "specs" / "app.yaml").write_text(SMALL.replace("Hi.", "Hello."))
    monkeypatch.chdir(repo)
    for args in (("--base", "HEAD", "specs/app.yaml"), ("HEAD:specs/app.yaml",
                                                        "specs/app.yaml"),
                 ("HEAD:inside", "specs/app.yaml")):
        done = invoke(*args, "--format", "json")
        assert done.exit_code == 0, done.output
        assert [c["change"] for c in json.loads(done.output)["changes"]] == [
            "instruction-changed"]


def test_rev_path_is_read_from_git_by_its_spelling_never_a_file_of_that_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Round-4 H1: a file named `REV:./path` in the working tree (a pull request can add
    one) replaced the revision's spec. An argument is REV:path or a file by how it is
    written; a file whose name holds `:` is given as ./NAME."""
    repo = _repository(tmp_path, {"specs/s.yaml": SMALL})
    _commit(repo)
    changed = SMALL.replace("Hi.", "Hello.")
    (repo / "specs" / "s.yaml").write_text(changed)
    for planted in ("HEAD:./specs/s.yaml", "HEAD:specs/s.yaml"):
        (repo / planted).parent.mkdir(parents=True, exist_ok=True)
        (repo / planted).write_text(changed)
    (repo / "odd:name.yaml").write_text(changed)
    monkeypatch.chdir(repo)
    for old in ("HEAD:./specs/s.yaml", "HEAD:specs/s.yaml"):
        done = invoke(old, "specs/s.yaml", "--format", "json")
        assert done.exit_code == 0, done.output
        assert [c["change"] for c in json.loads(done.output)["changes"]] == [
            "instruction-changed"], old
    based = invoke("--base", "HEAD", "specs/s.yaml", "--fail-on", "medium")
    assert based.exit_code == 1 and "instruction-changed" in based.output, based.output
    # a file whose name holds `:`: ./NAME is the file; NAME alone names a revision, and the
    # error says how to name the file
    assert invoke("./odd:name.yaml", "specs/s.yaml").output.splitlines()[-1].startswith(
        "0 change(s)")
    wrong = invoke("odd:name.yaml", "specs/s.yaml")
    assert wrong.exit_code == 2 and "write ./odd:name.yaml" in wrong.output, wrong.output
    # with --base, the file given is always the working tree's
    _commit(repo)
    (repo / "odd:name.yaml").write_text(SMALL)
    odd = invoke("--base", "HEAD", "odd:name.yaml", "--format", "json")
    assert odd.exit_code == 0, odd.output
    assert [c["change"] for c in json.loads(odd.output)["changes"]] == ["instruction-changed"]
    assert invoke("--base", "-x", "specs/s.yaml").exit_code == 2


# the markdown comment: the spec's text stays inside its code block ------------------------

_OPENING = re.compile(r" {0,3}(`{3,}|~{3,})([^`]*)")


def _code_block(markdown: str) -> tuple[list[str], list[str]]:
    """CommonMark's fenced code block, simply: the lines of the first block (its opening
    fence: up to three spaces, three or more backticks or tildes; it closes at a line of up
    to three spaces, at least as many of the same character and only spaces or tabs) and the
    lines after it."""
    lines = re.split(r"\r\n|\r|\n", markdown)
    start = next(i for i, line in enumerate(lines) if _OPENING.fullmatch(line))
    fence = _OPENING.fullmatch(lines[start])
    assert fence is not None
    closing = re.compile(f" {{0,3}}{re.escape(fence.group(1)[0])}{{{len(fence.group(1))},}}"
                         r"[ \t]*")
    end = next((i for i in range(start + 1, len(lines)) if closing.fullmatch(lines[i])),
               len(lines))
    return lines[start + 1:end], lines[end + 1:]


#: lines that look like fences: a diff's mark, indentation, a run of backticks or tildes,
#: then anything; joined by any line ending
fence_line = st.builds(lambda *parts: "".join(parts), st.sampled_from(["", " ", "+", "-"]),
                       st.text(" \t", max_size=5), st.text("`~", max_size=8),
                       st.text(max_size=10))
fence_text = st.builds(lambda lines, ends: "".join(
    line + ends[i % len(ends)] for i, line in enumerate(lines)),
    st.lists(fence_line, min_size=1, max_size=8),
    st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=1, max_size=3)
) | st.text(min_size=1, max_size=60)


@given(detail=fence_text.filter(bool))
@example(detail="@@ -1,3 +1,3 @@\n-Be kind.\n+Be kind!\n ```\n </details>\n <!--\n")
def test_no_text_closes_the_markdown_code_block_early(detail: str) -> None:
    """Round-4 M6: an instruction's context line ` ```` ` closed the fence, and the spec's
    later lines became markdown and HTML of the pull-request comment."""
    change = Change("lead", "instruction-changed", "medium", "the instruction changed",
                    detail=detail)
    shown = markdown([change], Counter(medium=1), "s.yaml")
    inside, after = _code_block(shown.split("<summary>", 1)[1])
    assert after == ["</details>"]
    lines = re.split(r"\r\n|\r|\n", detail.rstrip("\r\n"))
    indent = "    " if any(re.match(r" {0,3}(`{3,}|~{3,})", line) for line in lines) else ""
    assert inside == [indent + line for line in lines]


_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")


def _read_cell(cell: str) -> tuple[str, str]:
    """What CommonMark (with GFM's `\\|` in a table) shows for a cell, and the characters it
    reads outside code spans as written (not escaped): backslash escapes first, then code
    spans, left to right."""
    shown, raw, at = [], [], 0
    while at < len(cell):
        escaped = _ESCAPED.match(cell, at)
        if escaped:
            shown.append(escaped.group(1))
            at = escaped.end()
            continue
        run = re.compile(r"`+").match(cell, at)
        if run:
            close = next((m for m in re.finditer(r"`+", cell[run.end():])
                          if len(m.group()) == len(run.group())), None)
            if close is not None:
                end = run.end() + close.end()
                shown.append(cell[at:end].replace("\\|", "|"))
                at = end
                continue
        shown.append(cell[at])
        raw.append(cell[at])
        at += 1
    return "".join(shown), "".join(raw)


@given(text=st.text(st.sampled_from(list("`<>[]()!*_~&|\\ a\n")), max_size=40) | st.text())
@example(text="now runs python m:f {'x': '<img src=x>'} ![a](http://e/x.png) | low |")
@example(text="\\`<b>` [link](javascript:x) <!--")
def test_no_text_in_a_table_cell_becomes_markup(text: str) -> None:
    """A reason, state value, tool argument or file name in the comment's table is shown as
    written: no HTML, link, image or emphasis, no cell ended early; its code spans stay."""
    shown, raw = _read_cell(inline(text))
    assert shown == re.sub(r"\r\n|\r|\n", " ", text)
    assert not set(raw) & set("<>[]!*_~&|\\`"), raw
    assert "|" not in inline(text).replace("\\|", "")


@given(text=st.text(st.sampled_from(list("` a\n")), max_size=20) | st.text())
@example(text="specs/`<img src=x>`.yaml")
def test_a_file_name_is_one_code_span(text: str) -> None:
    """The spec's file name in the comment's first line (a pull request names its files)."""
    span = code(text)
    fence = re.match(r"`+", span)
    assert fence is not None and span.endswith(fence.group())
    inside = span[len(fence.group()):-len(fence.group())]
    # CommonMark: the span closes at the first run of exactly as many backticks
    assert len(fence.group()) not in {len(r) for r in re.findall(r"`+", inside)}
    if len(inside) >= 2 and inside[0] == inside[-1] == " " and inside.strip(" "):
        inside = inside[1:-1]
    assert inside == re.sub(r"\r\n|\r|\n", " ", text)


def test_a_route_change_says_what_changed(tmp_path: Path) -> None:
    # "the route changed" alone sent the reviewer to read both specs
    base = (CASES / "route_changed" / "new.yaml").read_text()
    (tmp_path / "old.yaml").write_text(base)
    (tmp_path / "new.yaml").write_text(base.replace(
        "route: {model: gemini-2.5-flash}",
        "route: {model: gemini-2.5-pro, instruction: Bills go to billing.}"))
    (tmp_path / "state.yaml").write_text((CASES / "route_changed" / "old.yaml").read_text())
    reasons = [json.loads(invoke(str(tmp_path / "old.yaml"), str(tmp_path / new),
                                 "--format", "json").output)["changes"][0]["reason"]
               for new in ("new.yaml", "state.yaml")]
    assert reasons == ["the route changed: model gemini-2.5-flash -> gemini-2.5-pro, "
                       "instruction", "the route changed: model gemini-2.5-flash -> state topic"]
