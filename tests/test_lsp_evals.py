"""Eval files (`evals/<spec>.yaml`) in `agentspec lsp`, driven by a real LSP client over
stdio: diagnostics where `validate --format json` puts them, from the unsaved buffer and
again when the spec beside them changes; hover (a key's meaning, a code); definition of a
name into the spec; completion of the names the spec builds and of the eval file's keys."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from tests.lspclient import Session
from tests.test_lsp import drive, expected, places, validate_json

SPEC = """\
agentspec: 1
name: desk
state:
  tier: {required: true, description: the customer's tier}
tools:
  lookup: {python: "mytools:lookup"}
agents:
  lead:
    model: gemini-2.5-flash
    instruction: Help the {tier} customer.
    tools: [lookup]
"""
EVALS = """\
criteria:
  tool_trajectory_avg_score: 1.0
cases:
  - name: one
    state: {tier: gold}
    turns:
      - user: hi
        tools: [lokup]
    replies:
      led: [{text: hi}]
  - name: two
    turns: [{user: hi, tools: [lookup]}]
    state: {tier: gold}
    repliez: {}
"""
MODULE = 'def lookup(q: str) -> str:\n    """Look up."""\n    return "found " + q\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "evals").mkdir()
    (tmp_path / "spec.yaml").write_text(SPEC)
    (tmp_path / "mytools.py").write_text(MODULE)
    (tmp_path / "evals" / "spec.yaml").write_text(EVALS)
    return tmp_path


def _at(text: str, needle: str, offset: int = 0) -> lsp.Position:
    row = next(i for i, line in enumerate(text.splitlines()) if needle in line)
    return lsp.Position(row, text.splitlines()[row].index(needle) + offset)


@pytest.mark.slow
def test_eval_file_diagnostics_follow_the_buffer_and_the_spec(project: Path) -> None:
    evals, spec = project / "evals" / "spec.yaml", project / "spec.yaml"
    rows = validate_json(project, "spec.yaml")
    seen: dict[str, list[lsp.Diagnostic]] = {}

    async def steps(s: Session) -> None:
        seen["open"] = await s.open(evals)
        seen["fixed"] = await s.change(evals, EVALS.replace("lokup", "lookup"))
        await s.open(spec, wait_on=evals)  # published after the spec: the last of the two
        # the agent loses its tool: the eval file beside the spec is checked again
        seen["spec changed"] = await s.change(spec, SPEC.replace("    tools: [lookup]\n", ""),
                                              wait_on=evals)

    drive(project, steps)
    assert places(seen["open"]) == expected(rows, project, "evals/spec.yaml")
    assert {d.code for d in seen["open"]} == {"AS724", "AS725", "AS101"}
    assert {d.code for d in seen["fixed"]} == {"AS725", "AS101"}
    assert [d.range.start.line for d in seen["spec changed"] if d.code == "AS724"] == [7, 11]


@pytest.mark.slow
def test_eval_file_hover_definition_and_completion(project: Path) -> None:
    evals = project / "evals" / "spec.yaml"
    typed = EVALS.replace("    repliez: {}\n", "    repliez: {}\n  - name: three\n"
                          "    turns: [{user: hi, tools: [")
    answers: dict[str, object] = {}

    async def steps(s: Session) -> None:
        diagnostics = await s.open(evals)
        doc = s.doc(evals)

        def at(text: str, needle: str, offset: int = 0) -> dict[str, object]:
            return {"text_document": doc, "position": _at(text, needle, offset)}

        answers["hover key"] = await s.ask("text_document_hover_async", lsp.HoverParams(
            **at(EVALS, "tool_trajectory_avg_score", 3)))
        answers["hover code"] = await s.ask("text_document_hover_async", lsp.HoverParams(
            text_document=doc, position=next(d for d in diagnostics
                                             if d.code == "AS725").range.start))
        answers["definition"] = await s.ask("text_document_definition_async",
                                            lsp.DefinitionParams(**at(EVALS, "[lookup]", 2)))
        answers["keys"] = await s.ask("text_document_completion_async", lsp.CompletionParams(
            text_document=doc, position=lsp.Position(len(EVALS.splitlines()), 0)))
        answers["replies"] = await s.ask("text_document_completion_async",
                                         lsp.CompletionParams(**at(EVALS, "led:", 0)))
        await s.change(evals, typed)
        answers["tools"] = await s.ask("text_document_completion_async", lsp.CompletionParams(
            text_document=doc, position=lsp.Position(len(typed.splitlines()) - 1,
                                                      len(typed.splitlines()[-1]))))

    drive(project, steps)
    hover = answers["hover key"]
    assert isinstance(hover, lsp.Hover) and isinstance(hover.contents, lsp.MarkupContent)
    assert "tools called in each turn" in hover.contents.value
    code = answers["hover code"]
    assert isinstance(code, lsp.Hover) and isinstance(code.contents, lsp.MarkupContent)
    assert "**AS725**" in code.contents.value
    [found] = answers["definition"]  # type: ignore[misc]
    assert found.uri.endswith("/spec.yaml") and "/evals/" not in found.uri
    assert found.range.start.line == 5  # `lookup:` under `tools:`
    keys = {item.label for item in answers["keys"]}  # type: ignore[attr-defined]
    assert {"cases", "criteria", "judge"} <= keys and "agents" not in keys
    assert [item.label for item in answers["replies"]] == ["lead"]  # type: ignore[attr-defined]
    assert [item.label for item in answers["tools"]] == ["lookup"]  # type: ignore[attr-defined]


def test_hostile_eval_buffers_give_diagnostics(project: Path) -> None:
    """In process: half-typed, binary, a 10 MB paste, an eval file outside the project
    through a link; diagnostics, never an exception."""
    from agentspec.lsp import features, outline
    from agentspec.lsp.analysis import Analysis
    from agentspec.project_files import resolved

    evals = resolved(project / "evals" / "spec.yaml")
    analysis = Analysis()
    for text, code in [(EVALS[:EVALS.index("[lokup") + 4], "AS004"),
                       ("\x00\x01\x7f" * 50, "AS004"),
                       ("cases:\n  - name: " + "x" * (10 * 1024 * 1024), "AS010"),
                       ("", "AS007")]:
        analysis.buffers[evals] = text
        assert code in {d.code for d in analysis.check(evals).by_file[evals]}
        features.completion(analysis, evals, lsp.Position(1, 3))
        features.hover(analysis, evals, lsp.Position(1, 3))
        features.definition(analysis, evals, lsp.Position(1, 3))
        outline.document_symbols(analysis, evals)
    elsewhere = project.parent / f"{project.name}-elsewhere.yaml"
    elsewhere.write_text(EVALS)
    (project / "evals" / "linked.yaml").symlink_to(elsewhere)
    (project / "linked.yaml").write_text(SPEC)
    linked = project / "evals" / "linked.yaml"
    assert {d.code for d in analysis.check(linked).by_file[linked]} == {"AS242"}  # not read


def test_a_keystroke_in_an_eval_file_checks_that_file_only(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the spec tells its eval file is kept while the spec's texts are unchanged; a
    change of the spec's buffer checks it again, and the eval file with it."""
    from agentspec.lsp.analysis import Analysis
    from agentspec.project_files import resolved
    from agentspec.validate import check as validate_check

    checked: list[Path] = []
    real = validate_check.check

    def counting(path: Path, **kwargs: object) -> validate_check.CheckResult:
        checked.append(path)
        return real(path, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(validate_check, "check", counting)
    evals, spec = resolved(project / "evals" / "spec.yaml"), resolved(project / "spec.yaml")
    analysis = Analysis()
    for number in range(3):
        analysis.buffers[evals] = EVALS + f"# edit {number}\n"
        found = {d.code for d in analysis.check(evals).by_file[evals]}
        assert found == {"AS724", "AS725", "AS101"}
    assert len(checked) == 1
    analysis.buffers[spec] = SPEC.replace("  lead:", "  led:").replace("lead", "led")
    found = {d.code for d in analysis.check(evals).by_file[evals]}
    assert len(checked) == 2 and found == {"AS724", "AS101"}  # `led` has a model now
