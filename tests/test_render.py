"""Rendering of diagnostics: one snapshot per output format, plus sorting and de-duplication."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from agentspec.diagnostics import FORMATS, Diagnostic, Related, Severity, codes, normalize, render
from agentspec.source import Pos, SourceFile, Span
from agentspec.validate.check import CheckResult, check

SPEC = """\
agentspec: 1
name: desk
imports: [./lib.yaml]
tools:
  search: {builtin: google_search}
agents:
  main:
    instruction: Answer ${env.TOPIC}.
    model: gemini-2.5-flash
    sub_agents: [helper, helpr]
    tools: [search]
  helper:
    descripton: Helps.
    instruction: Help.
    model: gemini-2.5-flash
    disallow_transfer_to_peers: "yes"
"""

LIB = """\
agentspec: 1
tools:
  search: {builtin: url_context}
"""


@pytest.fixture
def result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CheckResult:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec.yaml").write_text(SPEC)
    (tmp_path / "lib.yaml").write_text(LIB)
    return check(Path("spec.yaml"), environ={})


def test_the_fixed_spec_has_the_expected_problems(result: CheckResult) -> None:
    found = [(d.span.file, d.span.start.line, d.span.start.col, d.code)
             for d in result.diagnostics if d.span]
    assert found == [
        ("lib.yaml", 3, 3, "AS205"),     # duplicate name across an import, related: spec.yaml
        ("spec.yaml", 8, 25, "AS305"),   # a warning
        ("spec.yaml", 10, 26, "AS201"),  # unknown agent, did you mean
        ("spec.yaml", 13, 5, "AS101"),   # unknown key, did you mean
        ("spec.yaml", 16, 33, "AS103"),  # wrong type
    ]
    assert len(result.diagnostics) == len(found)
    duplicate = result.diagnostics[0]
    assert [(r.span.file, r.span.start.line, r.span.start.col) for r in duplicate.related] == [
        ("spec.yaml", 5, 3)
    ]
    assert "Did you mean" in (result.diagnostics[2].hint or "")
    assert "Did you mean" in (result.diagnostics[3].hint or "")
    assert result.diagnostics[1].severity is Severity.WARNING


@pytest.mark.parametrize("fmt", ["concise", "full", "json", "github"])
def test_snapshot(result: CheckResult, fmt: str, snapshot: object) -> None:
    assert render(result.diagnostics, result.sources, fmt) == snapshot


def test_formats_are_the_four_documented() -> None:
    assert set(FORMATS) == {"concise", "full", "json", "github"}


def test_concise_lines_start_with_location_and_code(result: CheckResult) -> None:
    lines = render(result.diagnostics, result.sources, "concise").splitlines()
    assert len(lines) == len(result.diagnostics)
    for line, diag in zip(lines, result.diagnostics, strict=True):
        assert diag.span is not None
        assert line.startswith(f"{diag.span.file}:{diag.span.start.line}:{diag.span.start.col}: "
                               f"{diag.code} ")


def test_full_carets_sit_under_the_span(result: CheckResult) -> None:
    text = render(result.diagnostics, result.sources, "full")
    *blocks, summary = text.split("\n\n")
    assert summary == "4 errors, 1 warning\n"
    assert len(blocks) == len(result.diagnostics)
    for block, diag in zip(blocks, result.diagnostics, strict=True):
        assert diag.span is not None and diag.span.end is not None
        lines = block.splitlines()
        source_row = next(i for i, line in enumerate(lines)
                          if re.match(rf"^\s*{diag.span.start.line} \| ", line))
        prefix = lines[source_row].index("| ") + 2
        caret_line = lines[source_row + 1]
        first_caret = caret_line.index("^")
        assert first_caret - prefix == diag.span.start.col - 1, block
        assert caret_line.count("^") == diag.span.end.col - diag.span.start.col
        source = result.sources[diag.span.file]
        assert lines[source_row][prefix:] == source.line(diag.span.start.line)


def test_full_shows_related_and_help(result: CheckResult) -> None:
    text = render(result.diagnostics, result.sources, "full")
    assert "spec.yaml:5:3" in text  # the related first definition
    assert text.count("help: ") == sum(1 for d in result.diagnostics if d.hint)


def test_json_is_valid_and_complete(result: CheckResult) -> None:
    rows = json.loads(render(result.diagnostics, result.sources, "json"))
    assert [(r["location"]["file"], r["location"]["line"], r["location"]["column"], r["code"])
            for r in rows] == [
        (d.span.file, d.span.start.line, d.span.start.col, d.code)
        for d in result.diagnostics if d.span
    ]
    for row in rows:
        assert set(row) >= {"code", "name", "severity", "message", "hint", "location", "related"}
        assert row["severity"] in ("error", "warning")
    assert rows[0]["related"][0]["location"]["file"] == "spec.yaml"
    assert rows[0]["related"][0]["location"]["line"] == 5


def test_github_annotation_syntax(result: CheckResult) -> None:
    lines = render(result.diagnostics, result.sources, "github").splitlines()
    pattern = re.compile(r"^::(error|warning) file=([^,]+),line=(\d+),col=(\d+),title=AS\d{3}"
                         r" [a-z0-9-]+::.+$")
    assert len(lines) == len(result.diagnostics)
    for line, diag in zip(lines, result.diagnostics, strict=True):
        match = pattern.match(line)
        assert match, line
        assert match.group(1) == diag.severity.value
        assert diag.span is not None
        assert (match.group(2), int(match.group(3)), int(match.group(4))) == (
            diag.span.file, diag.span.start.line, diag.span.start.col)


def test_github_escapes_newlines_percent_and_property_separators() -> None:
    diag = codes.YAML_SYNTAX("100% bad\nsecond line", Span.at("dir,a:b.yaml", 2, 3))
    line = render([diag], {}, "github")
    assert line == ("::error file=dir%2Ca%3Ab.yaml,line=2,col=3,title=AS004 yaml-syntax::"
                    "100%25 bad%0Asecond line\n")


def test_diagnostic_without_span_renders_in_every_format() -> None:
    diag = codes.FILE_NOT_FOUND("no file matches `x/*.yaml`", None)
    assert render([diag], {}, "concise") == "agentspec: AS001 No file matches `x/*.yaml`\n"
    assert "AS001" in render([diag], {}, "full")
    assert json.loads(render([diag], {}, "json"))[0]["location"] is None
    assert render([diag], {}, "github").startswith("::error title=AS001 file-not-found::")


def test_no_diagnostics() -> None:
    assert render([], {}, "concise") == ""
    assert render([], {}, "full") == ""
    assert json.loads(render([], {}, "json")) == []
    assert render([], {}, "github") == ""


def test_full_with_tab_and_unknown_source() -> None:
    source = SourceFile(Path("t.yaml"), "a:\n\tb: 1\n", "t.yaml")
    diag = codes.TAB_INDENT("a tab is used for indentation", Span.at("t.yaml", 2, 1))
    text = render([diag], {"t.yaml": source}, "full")
    assert "2 |  b: 1" in text
    assert "  | ^" in text
    other = codes.TAB_INDENT("tab", Span.at("elsewhere.yaml", 1, 1))
    assert " | " not in render([other], {}, "full").split("\n\n")[0]


def test_full_multiline_span_gets_one_caret() -> None:
    source = SourceFile(Path("m.yaml"), "a: |\n  x\n  y\n", "m.yaml")
    span = Span("m.yaml", Pos(1, 4), Pos(3, 4))
    text = render([codes.WRONG_TYPE("bad", span)], {"m.yaml": source}, "full")
    caret = next(line for line in text.splitlines() if "^" in line)
    assert caret.count("^") == 1


# --- normalize ------------------------------------------------------------------------------


def at(code: str, file: str, line: int, col: int, message: str = "m") -> Diagnostic:
    from agentspec.diagnostics import REGISTRY

    return REGISTRY[code](message, Span.at(file, line, col))


def test_normalize_sorts_by_file_line_column_code() -> None:
    shuffled = [
        at("AS201", "b.yaml", 1, 1),
        at("AS101", "a.yaml", 10, 2),
        at("AS103", "a.yaml", 2, 9),
        at("AS101", "a.yaml", 2, 9),
        at("AS005", "a.yaml", 2, 1),
        codes.FILE_NOT_FOUND("no file", None),
        at("AS101", "a.yaml", 9, 30),
    ]
    ordered = normalize(shuffled)
    assert [(d.span.file if d.span else "", d.span.start.line if d.span else 0,
             d.span.start.col if d.span else 0, d.code) for d in ordered] == [
        ("", 0, 0, "AS001"),
        ("a.yaml", 2, 1, "AS005"),
        ("a.yaml", 2, 9, "AS101"),
        ("a.yaml", 2, 9, "AS103"),
        ("a.yaml", 9, 30, "AS101"),  # numeric, not textual, line order
        ("a.yaml", 10, 2, "AS101"),
        ("b.yaml", 1, 1, "AS201"),
    ]


def test_normalize_drops_exact_repeats_only() -> None:
    one = at("AS201", "a.yaml", 3, 4, "no agent named `x`")
    again = at("AS201", "a.yaml", 3, 4, "no agent named `x`")
    different = at("AS219", "a.yaml", 3, 4, "the frontmatter has no `name`")
    other_problem = at("AS219", "a.yaml", 3, 4, "`description` is longer than 1024 characters")
    other_place = at("AS201", "a.yaml", 3, 5, "no agent named `x`")
    result = normalize([one, again, different, other_problem, other_place])
    assert result[0] is one  # the first one seen is kept
    assert result[-1] is other_place
    assert {id(d) for d in result[1:3]} == {id(different), id(other_problem)}
    assert len(result) == 4


def test_normalize_keeps_distinct_messages_without_a_place() -> None:
    first = codes.FILE_NOT_FOUND("no file matches `a/*.yaml`", None)
    second = codes.FILE_NOT_FOUND("no file matches `b/*.yaml`", None)
    assert normalize([second, first, second]) == [first, second]


def test_normalize_ignores_end_and_is_idempotent() -> None:
    first = codes.WRONG_TYPE("m", Span("a.yaml", Pos(1, 1), Pos(1, 5)))
    second = codes.WRONG_TYPE("m", Span("a.yaml", Pos(1, 1), Pos(1, 9)))
    once = normalize([second, first])
    assert len(once) == 1
    assert normalize(once) == once


def test_normalize_keeps_related() -> None:
    diag = codes.DUPLICATE_KEY("dup", Span.at("a.yaml", 3, 1),
                               related=[Related(Span.at("a.yaml", 1, 1), "first defined here")])
    (kept,) = normalize([diag, diag])
    assert kept.related == diag.related


def test_check_output_is_normalized(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec.yaml").write_text(textwrap.dedent("""\
        agentspec: 1
        name: app
        agents:
          b: {instruction: B., model: gemini-2.5-flash, zz: 1, sub_agents: [nope]}
          a: {instruction: A., model: gemini-2.5-flash, yy: 1, sub_agents: [b, nope2]}
        """))
    result = check(Path("spec.yaml"), environ={})
    assert result.diagnostics == normalize(result.diagnostics)
    assert result.diagnostics == sorted(result.diagnostics, key=Diagnostic.sort_key)
