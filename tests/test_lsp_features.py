"""The language server's features in process (tests/test_lsp.py drives the real server over
stdio): what the cursor is on in half-typed YAML, definitions of files and Python
references that stay in the project, quick fixes, rename's refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from agentspec.lsp import actions, features, outline
from agentspec.lsp.analysis import Analysis
from agentspec.lsp.cursor import context_at
from agentspec.project_files import resolved

SPEC = """\
agentspec: 1
name: desk
state:
  draft: ""
agents:
  boss:
    instruction_file: prompts/boss.md
    skills: [./skills, ../elsewhere]
    instruction: Write {draft} on {topic}.
    tools: [{python: ../outside_mod:run}]
    callbacks: {before_model: [guards:check]}
    sub_agents:
      - name: inner
        instruction: Hi.
"""


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "prompts").mkdir(parents=True)
    (project / "prompts" / "boss.md").write_text("Be brief.\n")
    (project / "skills" / "search").mkdir(parents=True)
    (project / "skills" / "search" / "SKILL.md").write_text("---\nname: search\n---\n")
    (project / "guards.py").write_text("import os\n\n\ndef check(ctx):\n    return None\n")
    (tmp_path / "elsewhere" / "x").mkdir(parents=True)
    (tmp_path / "elsewhere" / "x" / "SKILL.md").write_text("secret\n")
    path = resolved(project / "spec.yaml")
    path.write_text(SPEC)
    return path


def _analysis(spec: Path, text: str = SPEC) -> Analysis:
    analysis = Analysis()
    analysis.buffers[spec] = text
    analysis.check(spec)
    return analysis


def _where(text: str, needle: str, offset: int = 0) -> lsp.Position:
    row = next(i for i, line in enumerate(text.splitlines()) if needle in line)
    return lsp.Position(row, text.splitlines()[row].index(needle) + offset)


def test_definitions_of_files_and_python_stay_in_the_project(spec: Path) -> None:
    analysis = _analysis(spec)
    prompt = features.definition(analysis, spec, _where(SPEC, "prompts/boss.md", 2))
    assert [Path(loc.uri[7:]).name for loc in prompt] == ["boss.md"]
    skills = features.definition(analysis, spec, _where(SPEC, "./skills", 2))
    assert [Path(loc.uri[7:]).parent.name for loc in skills] == ["search"]
    assert features.definition(analysis, spec, _where(SPEC, "../elsewhere", 3)) == []
    guard = features.definition(analysis, spec, _where(SPEC, "guards:check", 3))
    assert [(Path(loc.uri[7:]).name, loc.range.start.line) for loc in guard] == [("guards.py", 3)]
    assert features.definition(analysis, spec, _where(SPEC, "outside_mod", 2)) == []


def test_state_references_and_the_declare_fix(spec: Path) -> None:
    analysis = _analysis(spec)
    refs = features.references(analysis, spec, _where(SPEC, "{draft}", 2))
    assert sorted(r.range.start.line for r in refs) == [3, 8]
    found = analysis.checks[spec].by_file[spec]
    shown = features.diagnostics_of(analysis, spec, found)
    topic = [d for d in shown if d.code == "AS223"]
    assert topic, [d.code for d in shown]
    params = lsp.CodeActionParams(lsp.TextDocumentIdentifier(spec.as_uri()), topic[0].range,
                                  lsp.CodeActionContext(diagnostics=topic))
    [action] = actions.code_actions(analysis, spec, params)
    assert action.edit is not None and action.edit.changes is not None
    [edit] = action.edit.changes[spec.as_uri()]
    assert (edit.range.start.line, edit.new_text) == (3, '  topic: ""\n')  # under `state:`


def _apply(text: str, edits: list[lsp.TextEdit]) -> str:
    lines = text.splitlines(keepends=True)
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character),
                       reverse=True):
        start = sum(map(len, lines[:edit.range.start.line])) + edit.range.start.character
        end = sum(map(len, lines[:edit.range.end.line])) + edit.range.end.character
        text = text[:start] + edit.new_text + text[end:]
        lines = text.splitlines(keepends=True)
    return text


@pytest.mark.parametrize("state", [
    "state: {draft: \"\"}\n",  # a flow mapping: a second `state:` block was added after it
    "state: {}\n",
    "state:\n    draft: \"\"\n",  # four spaces: the key was added at two, a YAML error
    "state:  # initial values\n  draft: \"\"\n",
    "",
])
def test_the_declare_fix_leaves_a_spec_without_the_problem(spec: Path, state: str) -> None:
    text = ("agentspec: 1\nname: desk\n" + state + "agents:\n  boss:\n    model: "
            "gemini-2.5-flash\n    instruction: Write {draft?} on {topic}.\n")
    analysis = _analysis(spec, text)
    shown = features.diagnostics_of(analysis, spec, analysis.checks[spec].by_file[spec])
    topic = [d for d in shown if d.code == "AS223"]
    params = lsp.CodeActionParams(lsp.TextDocumentIdentifier(spec.as_uri()), topic[0].range,
                                  lsp.CodeActionContext(diagnostics=topic))
    [action] = actions.code_actions(analysis, spec, params)
    assert action.edit is not None and action.edit.changes is not None
    fixed = _apply(text, list(action.edit.changes[spec.as_uri()]))
    after = _analysis(spec, fixed).checks[spec].by_file.get(spec, [])
    assert not [d for d in after if d.is_error or d.code == "AS223"], (fixed, after)


def test_a_did_you_mean_fix_replaces_the_misspelled_name_only(spec: Path) -> None:
    """AS304's range is the whole `${vars.compny}`: the fix replaced it with `company`, so
    the instruction said "company" instead of the variable's value, and nothing was reported
    after it."""
    text = ("agentspec: 1\nname: desk\nvars: {company: Acme}\nagents:\n  boss:\n"
            "    model: gemini-2.5-flash\n    instruction: Work for ${vars.compny}.\n"
            "    tools: [\"serch\"]\ntools:\n  search: {builtin: google_search}\n")
    analysis = _analysis(spec, text)
    shown = features.diagnostics_of(analysis, spec, analysis.checks[spec].by_file[spec])
    fixed = text
    for diag in [d for d in shown if d.code in ("AS304", "AS203")]:
        params = lsp.CodeActionParams(lsp.TextDocumentIdentifier(spec.as_uri()), diag.range,
                                      lsp.CodeActionContext(diagnostics=[diag]))
        [action] = actions.code_actions(analysis, spec, params)
        assert action.edit is not None and action.edit.changes is not None
        fixed = _apply(fixed, list(action.edit.changes[spec.as_uri()]))
    assert "instruction: Work for ${vars.company}.\n" in fixed
    assert 'tools: ["search"]' in fixed


def test_rename_refuses_what_is_not_a_name(spec: Path) -> None:
    analysis = _analysis(spec)
    at = _where(SPEC, "boss:", 1)
    assert features.rename(analysis, spec, at, "two words") is None
    assert features.rename(analysis, spec, at, "${env.X}") is None
    renamed = features.rename(analysis, spec, at, "chief")
    assert renamed is not None and renamed.changes is not None


def test_rename_refuses_a_name_taken_or_reserved(spec: Path) -> None:
    """Renaming `boss` to `helper` (another agent) made two `helper:` keys and merged their
    uses; to `class`, a name generated code cannot use (AS106)."""
    text = ("agentspec: 1\nname: desk\nroot: boss\nmodels: {fast: gemini-2.5-flash}\n"
            "agents:\n  boss: {instruction: Hi., model: fast, sub_agents: [helper]}\n"
            "  helper: {instruction: Help., model: fast}\n")
    analysis = _analysis(spec, text)
    at = _where(text, "boss:", 1)
    assert features.rename(analysis, spec, at, "helper") is None
    assert features.rename(analysis, spec, at, "class") is None
    assert features.rename(analysis, spec, at, "None") is None
    same = features.rename(analysis, spec, at, "boss")
    assert same is not None and same.changes is not None
    chief = features.rename(analysis, spec, at, "chief")
    assert chief is not None and chief.changes is not None
    assert len(chief.changes[spec.as_uri()]) == 2  # `root:` and the key
    fast = _where(text, "fast:", 1)
    other_kind = features.rename(analysis, spec, fast, "helper")  # a model may be `helper`
    assert other_kind is not None and other_kind.changes is not None


def test_symbols_nest_inline_sub_agents(spec: Path) -> None:
    symbols = outline.document_symbols(_analysis(spec), spec)
    agents = next(s for s in symbols if s.name == "agents")
    assert [(a.name, [c.name for c in a.children or ()]) for a in agents.children or ()] == \
        [("boss", ["inner"])]


@pytest.mark.parametrize(("lines", "row", "col", "path", "value_of"), [
    (["agents:", "  boss:", "    mod"], 2, 7, ["agents", "boss"], None),
    (["agents:", "  boss:", "    model: f"], 2, 12, ["agents", "boss"], "model"),
    (["agents:", "  boss:", "    sub_agents:", "      - he"], 3, 10,
     ["agents", "boss"], "sub_agents"),
    (["agents:", "  boss:", "    sub_agents:", "    - he"], 3, 8, ["agents", "boss"],
     "sub_agents"),
    (["agents:", "  boss:", "    sub_agents:", "      - name: x", "        instr"], 4, 13,
     ["agents", "boss", "sub_agents"], None),
    (["agents:", "  boss: {tools: [a, "], 1, 21, ["agents"], "boss"),
    (["\x00\x01", "\t- : : ["], 1, 7, [], None),
])
def test_the_cursor_context_of_half_typed_yaml(lines: list[str], row: int, col: int,
                                               path: list[str], value_of: str | None) -> None:
    found = context_at(lines, row, col)
    assert (found.path, found.value_of) == (path, value_of)


def test_completion_offers_names_and_keys(spec: Path) -> None:
    analysis = _analysis(spec)
    outline.document_symbols(analysis, spec)  # the file parsed once, as it was
    text = SPEC.replace("        instruction: Hi.\n", "        instruction: Hi.\n    mod\n")
    analysis.buffers[spec] = text  # a key half typed: the file does not parse now
    keys = features.completion(analysis, spec, _where(text, "    mod", 7))
    assert "model" in {k.label for k in keys}
    states = features.completion(analysis, spec, _where(text, "{draft}", 1))
    assert [s.label for s in states] == ["draft"]


def test_an_imported_file_is_checked_as_its_importer_sees_it(tmp_path: Path) -> None:
    """Opened alone, `common/shared.yaml` (no `name`, no `agents`) is found imported by a
    spec of the folder and gets that spec's diagnostics, not a spec's missing keys."""
    (tmp_path / "common").mkdir()
    spec = resolved(tmp_path / "spec.yaml")
    spec.write_text("agentspec: 1\nname: a\nimports: [./common/shared.yaml]\nagents:\n"
                    "  boss: {instruction: Hi., tools: [fetch]}\n")
    shared = resolved(tmp_path / "common" / "shared.yaml")
    shared.write_text("agentspec: 1\ntools:\n  fetch: {builtin: google_search, filtr: 1}\n")
    analysis = Analysis()
    analysis.buffers[shared] = shared.read_text()
    assert "AS102" in {d.code for d in analysis.check(shared).by_file[shared]}  # on its own
    analysis.find_importers(shared, [resolved(tmp_path)])
    [root] = analysis.roots_of(shared)
    assert root == spec and shared not in analysis.checks
    assert {d.code for d in analysis.check(root).by_file[shared]} == {"AS101"}


def test_hover_explains_a_code_in_a_suppression_comment(spec: Path) -> None:
    text = SPEC.replace("name: desk", "name: desk  # agentspec: ignore[AS224]")
    analysis = _analysis(spec, text)
    shown = features.hover(analysis, spec, _where(text, "AS224", 2))
    assert shown is not None and isinstance(shown.contents, lsp.MarkupContent)
    assert shown.contents.value.startswith("**AS224** `unreachable-agent`")


def test_an_unsaved_scenario_buffer_is_what_is_checked(spec: Path) -> None:
    scenarios = spec.parent / "scenarios"
    scenarios.mkdir()
    path = resolved(scenarios / "spec.yaml")
    path.write_text("messages: [hi]\n")
    analysis = Analysis()
    assert "AS101" not in {d.code for d in analysis.check(path).by_file[path]}
    analysis.buffers[path] = "messages: [hi]\nexpct: {}\n"  # typed, not saved
    assert "AS101" in {d.code for d in analysis.check(path).by_file[path]}
