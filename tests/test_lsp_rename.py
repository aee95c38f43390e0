"""Rename and references in `agentspec lsp` reach the scenario and eval files beside a spec,
driven by a real LSP client over stdio on a copy of `specs/research_desk.yaml`'s tree: every
place a renamed agent or tool is used as that name changes (scripted replies, calls,
transfers, `subagent_type`, stubs, expectations, eval turns), no text that merely contains
it does, and the renamed tree validates and passes its scenarios as before."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from lsprotocol import types as lsp

from agentspec.cli import cli
from tests.lspclient import Session
from tests.test_lsp import drive

SPECS = Path(__file__).resolve().parent.parent / "specs"
#: research_desk's files: its imports, tools, prompt, skills, memory and backends
TREE = ("research_desk.yaml", "common", "research_tools", "prompts", "skills", "AGENTS.md",
        "workspace", "memories")
#: a scenario that uses the spec's own tool `web_search` and its agent `researcher` in every
#: place a name goes, and in texts that merely contain them
SCENARIO = """\
env: {GITHUB_TOKEN: not-a-real-token}
scenarios:
  - name: the coordinator searches, then delegates to the researcher
    messages: [Ask the researcher to web_search eels]
    replies:
      coordinator:
        - {call: web_search, args: {query: researcher web_search}}
        - {call: task, args: {description: researcher, subagent_type: researcher}}
        - {text: "researcher and web_search done"}
    stubs:
      web_search: {results: [researcher]}
    expect:
      tools: [web_search, {name: task, args: {subagent_type: researcher}}]
      not_tools: [fetch]
      agents: [coordinator]
      jobs: [{agent: researcher, status: QUEUED}]
      final: {contains: researcher and web_search}
"""
EVALS = """\
criteria:
  tool_trajectory_avg_score: 1.0
cases:
  - name: searches
    turns:
      - user: web_search for the researcher
        tools:
          - web_search
          - {name: task, args: {subagent_type: researcher}}
    replies:
      coordinator:
        - {call: web_search, args: {query: researcher}}
        - {call: task, args: {description: web_search, subagent_type: researcher}}
        - {text: researcher}
    stubs:
      web_search: {results: []}
"""


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    for name in TREE:
        source, target = SPECS / name, tmp_path / name
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copy(source, target)
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "evals").mkdir()
    shipped = (SPECS / "scenarios" / "research_desk.yaml").read_text()
    (tmp_path / "scenarios" / "research_desk.yaml").write_text(
        shipped.replace("scenarios:\n", "scenarios:\n" + SCENARIO.split("scenarios:\n")[1], 1))
    (tmp_path / "evals" / "research_desk.yaml").write_text(EVALS)
    return tmp_path


def _validate(folder: Path) -> list[tuple[object, ...]]:
    done = CliRunner().invoke(cli, ["validate", str(folder / "research_desk.yaml"),
                                    "--format", "json"], prog_name="agentspec")
    rows = json.loads(done.output)
    # where, not the message: a message may name the renamed agent or tool
    return sorted((r["code"], r["location"]["file"], r["location"]["line"]) for r in rows)


def _test(folder: Path) -> tuple[int, str]:
    done = CliRunner().invoke(cli, ["test", str(folder / "research_desk.yaml")],
                              prog_name="agentspec")
    return done.exit_code, done.output


def _at(text: str, needle: str) -> lsp.Position:
    row = next(i for i, line in enumerate(text.splitlines()) if needle in line)
    return lsp.Position(row, text.splitlines()[row].index(needle))


def _helper_renamed(spec: Path) -> tuple[Any, dict[str, list[lsp.TextEdit]]]:
    """The analysis of `spec` (SMALL) and the edits renaming its agent `helper` to `aide`."""
    from agentspec.lsp import features
    from agentspec.lsp.analysis import Analysis

    analysis = Analysis()
    analysis.check(spec)
    helper = _at(SMALL, "  helper:")
    helper.character += 2
    edit = features.rename(analysis, spec, helper, "aide")
    assert edit is not None and edit.changes is not None
    return analysis, {uri: list(edits) for uri, edits in edit.changes.items()}


def _apply(text: str, edits: list[lsp.TextEdit]) -> str:
    lines = text.splitlines(keepends=True)
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character),
                       reverse=True):
        start, end = edit.range.start, edit.range.end
        assert start.line == end.line
        line = lines[start.line]
        lines[start.line] = line[:start.character] + edit.new_text + line[end.character:]
    return "".join(lines)


def _renamed(edits: dict[str, list[lsp.TextEdit]], path: Path, text: str) -> list[str]:
    """The lines the edits of `path` change, after the change."""
    mine = edits.get(path.resolve().as_uri(), [])
    after = _apply(text, mine).splitlines()
    return sorted({after[e.range.start.line].strip() for e in mine})


@pytest.mark.slow
def test_rename_reaches_the_scenario_and_eval_files_and_keeps_them_valid(desk: Path) -> None:
    spec = desk / "research_desk.yaml"
    scenarios, evals = desk / "scenarios" / "research_desk.yaml", desk / "evals" / \
        "research_desk.yaml"
    before = _validate(desk)
    code, report = _test(desk)
    assert code == 0, report
    text = spec.read_text()
    answers: dict[str, object] = {}

    async def steps(s: Session) -> None:
        await s.open(spec)
        doc = s.doc(spec)
        agent, tool = _at(text, "  researcher:"), _at(text, "  web_search:")
        agent.character += 2
        tool.character += 2
        answers["agent"] = await s.ask("text_document_rename_async", lsp.RenameParams(
            text_document=doc, position=agent, new_name="investigator"))
        answers["tool"] = await s.ask("text_document_rename_async", lsp.RenameParams(
            text_document=doc, position=tool, new_name="lookup"))
        answers["references"] = await s.ask("text_document_references_async",
                                            lsp.ReferenceParams(
            text_document=doc, position=tool,
            context=lsp.ReferenceContext(include_declaration=False)))

    drive(desk, steps)
    agent, tool = answers["agent"], answers["tool"]
    assert isinstance(agent, lsp.WorkspaceEdit) and agent.changes is not None
    assert isinstance(tool, lsp.WorkspaceEdit) and tool.changes is not None
    texts = {p: p.read_text() for p in (spec, scenarios, evals)}
    # exactly the names: a text that contains one (a message, an answer, a description,
    # an argument other than `subagent_type`) is left as it was
    assert _renamed(agent.changes, scenarios, texts[scenarios]) == sorted([
        "- {call: task, args: {description: researcher, subagent_type: investigator}}",
        "- {call: task, args: {description: Find sources on eel migration, subagent_type: "
        "investigator}}",
        "- {name: task, args: {subagent_type: investigator}}",
        "jobs: [{agent: investigator, status: QUEUED, input: Find sources on eel migration}]",
        "jobs: [{agent: investigator, status: QUEUED}]",
        "tools: [web_search, {name: task, args: {subagent_type: investigator}}]"])
    assert _renamed(tool.changes, scenarios, texts[scenarios]) == [
        "- {call: lookup, args: {query: researcher web_search}}",
        "lookup: {results: [researcher]}",
        "tools: [lookup, {name: task, args: {subagent_type: researcher}}]"]
    assert _renamed(agent.changes, evals, texts[evals]) == [
        "- {call: task, args: {description: web_search, subagent_type: investigator}}",
        "- {name: task, args: {subagent_type: investigator}}"]
    assert _renamed(tool.changes, evals, texts[evals]) == [
        "- lookup", "- {call: lookup, args: {query: researcher}}", "lookup: {results: []}"]
    refs = answers["references"]
    assert isinstance(refs, (list, tuple))
    assert sorted((Path(r.uri).parent.name, r.range.start.line) for r in refs) == sorted(
        [("scenarios", row) for row, line in enumerate(texts[scenarios].splitlines())
         if "web_search:" in line or "call: web_search" in line or "[web_search" in line]
        + [("evals", row) for row, line in enumerate(texts[evals].splitlines())
           if "web_search:" in line or "call: web_search" in line or "- web_search" in line]
        + [(desk.name, row) for row, line in enumerate(text.splitlines())
           if "web_search," in line or "[web_search" in line])
    for path, original in texts.items():
        both = [*agent.changes.get(path.resolve().as_uri(), []),
                *tool.changes.get(path.resolve().as_uri(), [])]
        path.write_text(_apply(original, both))
    assert "investigator:" in spec.read_text() and "  lookup:" in spec.read_text()
    assert _validate(desk) == before
    code, report = _test(desk)
    assert code == 0, report


SMALL = """\
agentspec: 1
name: desk
root: boss
tools:
  search: {python: "tools_mod:search"}
agents:
  boss:
    model: gemini-2.5-flash
    instruction: Lead.
    tools: [search]
    sub_agents: [helper]
  helper: {model: gemini-2.5-flash, instruction: Help.}
"""
SMALL_SCENARIO = """\
messages: [helper, search for me]
replies:
  boss:
    - {call: search, args: {helper: helper}}
    - {transfer: helper}
    - {call: transfer_to_agent, args: {agent_name: helper}}
    - {call: search, args: {subagent_type: helper}}
  helper: [{text: helper done}]
stubs: {search: helper}
expect:
  agents: [helper]
  not_tools: [exit_loop]
  errors: [{tool: search, contains: helper}]
"""


def test_rename_edits_the_names_of_the_scenario_beside_the_spec_only(tmp_path: Path) -> None:
    from agentspec.lsp import features
    from agentspec.project_files import resolved

    project = tmp_path / "project"
    (project / "scenarios").mkdir(parents=True)
    (project / "evals").mkdir()
    spec = resolved(project / "spec.yaml")
    spec.write_text(SMALL)
    scenario = project / "scenarios" / "spec.yaml"
    scenario.write_text(SMALL_SCENARIO)
    outside = tmp_path / "elsewhere.yaml"  # linked into the project: never edited
    outside.write_text("cases:\n  - name: x\n    turns: [{user: hi}]\n"
                       "    replies: {helper: [{text: hi}]}\n")
    (project / "evals" / "spec.yaml").symlink_to(outside)
    analysis, changes = _helper_renamed(spec)
    assert set(changes) == {spec.as_uri(), resolved(scenario).as_uri()}
    assert _apply(SMALL_SCENARIO, changes[resolved(scenario).as_uri()]) == \
        SMALL_SCENARIO.replace("{transfer: helper}", "{transfer: aide}") \
        .replace("agent_name: helper", "agent_name: aide") \
        .replace("  helper: [{text", "  aide: [{text").replace("[helper]", "[aide]")
    search = _at(SMALL, "  search:")
    search.character += 2
    tool = features.rename(analysis, spec, search, "find")
    assert tool is not None and tool.changes is not None
    assert _apply(SMALL_SCENARIO, tool.changes[resolved(scenario).as_uri()]) == \
        SMALL_SCENARIO.replace("{call: search", "{call: find") \
        .replace("{search: helper}", "{find: helper}").replace("tool: search", "tool: find")
    # from the scenario file, the same places
    analysis.check(resolved(scenario))  # as the server does when it is opened
    transfer = _at(SMALL_SCENARIO, "{transfer: helper}")
    transfer.character += len("{transfer: ")
    again = features.references(analysis, resolved(scenario), transfer, True)
    assert {(Path(r.uri).parent.name, r.range.start.line) for r in again} == {
        ("project", 10), ("project", 11), ("scenarios", 4), ("scenarios", 5),
        ("scenarios", 7), ("scenarios", 10)}
    # a name the spec does not define (a built-in tool, a toolset's): renaming its uses
    # would only break them
    builtin = _at(SMALL_SCENARIO, "exit_loop")
    assert features.rename(analysis, resolved(scenario), builtin, "stop") is None
    assert features.rename(analysis, resolved(scenario), transfer, "aide") is not None


def test_rename_reaches_a_scenario_file_named_after_the_spec_name(tmp_path: Path) -> None:
    """`validate` and `test` find `scenarios/<name>.yaml` when no file of the stem is
    there: so does rename."""
    from agentspec.project_files import resolved

    (tmp_path / "scenarios").mkdir()
    spec = resolved(tmp_path / "spec.yaml")
    spec.write_text(SMALL)
    scenario = resolved(tmp_path / "scenarios" / "desk.yaml")  # SMALL's `name:`
    scenario.write_text(SMALL_SCENARIO)
    _, changes = _helper_renamed(spec)
    assert len(changes[scenario.as_uri()]) == 4
