"""`agentspec lsp` driven by a real LSP client (pygls') over stdio, in a subprocess: the
diagnostics of open and changed buffers (positions as `validate --format json` gives them),
across imports and scenario files, every request, and hostile input."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from tests.lspclient import AGENTSPEC, Session

SPEC = """\
agentspec: 1
name: desk
root: boss
imports: [./common/shared.yaml]
vars: {company: Acme}
global_instruction: You work for ${vars.company}.
models:
  fast: gemini-2.5-flash
tools:
  search: {python: tools_mod:search}
agents:
  boss:
    model: fsat
    instruction: Write {draft?} about {topic}.
    tools: [search, fetch]
    sub_agents: [helpr]
  helper:
    instruction: Help.
    output_key: draft
"""
SHARED = """\
agentspec: 1
tools:
  fetch:
    python: tools_mod:fetch
    filtr: [x]
"""
MODULE = "def search(query: str) -> str:\n    return query\n"
SCENARIOS = "messages: [hi]\nreplies:\n  nobody: [{text: hello}]\nexpct: {}\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "common").mkdir()
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "spec.yaml").write_text(SPEC)
    (tmp_path / "common" / "shared.yaml").write_text(SHARED)
    (tmp_path / "tools_mod.py").write_text(MODULE)
    (tmp_path / "scenarios" / "spec.yaml").write_text(SCENARIOS)
    return tmp_path


def drive(folder: Path, steps: Callable[[Session], Awaitable[None]],
          command: tuple[str, ...] = (AGENTSPEC, "lsp")) -> Session:
    async def main() -> Session:
        async with Session(folder, command) as session:
            await steps(session)
        return session

    session = asyncio.run(main())
    assert "Traceback" not in session.stderr, session.stderr
    assert not [log for log in session.logs if "internal error" in log], session.logs
    return session


def validate_json(folder: Path, spec: str) -> list[dict[str, object]]:
    done = subprocess.run([AGENTSPEC, "validate", spec, "--format", "json"], cwd=folder,
                          capture_output=True, text=True, timeout=300)
    rows: list[dict[str, object]] = json.loads(done.stdout)
    return rows


def places(diagnostics: list[lsp.Diagnostic]) -> set[tuple[object, ...]]:
    """1-based (code, line, column, end line, end column), as validate's JSON; the import
    summaries are left out (validate has none)."""
    return {(d.code, d.range.start.line + 1, d.range.start.character + 1,
             d.range.end.line + 1, d.range.end.character + 1) for d in diagnostics
            if not (isinstance(d.data, dict) and d.data.get("summary"))}


def expected(rows: list[dict[str, object]], folder: Path, file: str) -> set[tuple[object, ...]]:
    found = set()
    for row in rows:
        where = row["location"]
        assert isinstance(where, dict)
        if (folder / str(where["file"])).resolve() == (folder / file).resolve():
            found.add((row["code"], where["line"], where["column"], where["end_line"],
                       where["end_column"]))
    return found


@pytest.mark.slow
def test_diagnostics_equal_validate_across_imports_and_scenarios(project: Path) -> None:
    rows = validate_json(project, "spec.yaml")
    seen: dict[str, list[lsp.Diagnostic]] = {}

    async def steps(s: Session) -> None:
        seen["spec"] = await s.open(project / "spec.yaml")
        seen["shared"] = s.diagnostics[s.uri(project / "common" / "shared.yaml")]
        seen["scenarios"] = await s.open(project / "scenarios" / "spec.yaml")
        # fixing the typo in the imported buffer clears it there and at the import
        fixed = SHARED.replace("    filtr: [x]\n", "")
        await s.open(project / "common" / "shared.yaml", wait_on=project / "spec.yaml")
        seen["shared opened"] = s.diagnostics[s.uri(project / "common" / "shared.yaml")]
        # the root is published last: once it is, the imported file's are too
        seen["spec after"] = await s.change(project / "common" / "shared.yaml", fixed,
                                            wait_on=project / "spec.yaml")
        seen["shared fixed"] = s.diagnostics[s.uri(project / "common" / "shared.yaml")]
        # a change in the spec buffer (unsaved) is what is checked
        seen["typo fixed"] = await s.change(project / "spec.yaml",
                                            SPEC.replace("fsat", "fast"))

    drive(project, steps)
    assert places(seen["spec"]) == expected(rows, project, "spec.yaml") != set()
    assert places(seen["shared"]) == expected(rows, project, "common/shared.yaml") != set()
    assert places(seen["scenarios"]) == expected(rows, project, "scenarios/spec.yaml") != set()
    summary = [d for d in seen["spec"] if isinstance(d.data, dict) and d.data.get("summary")]
    assert len(summary) == 1 and summary[0].range.start.line == 3  # at `./common/shared.yaml`
    assert "2 problems" in summary[0].message and "AS101" in summary[0].message
    assert places(seen["shared opened"]) == places(seen["shared"])  # checked as imported
    assert "AS101" not in {d.code for d in seen["shared fixed"]}
    after = [d for d in seen["spec after"] if isinstance(d.data, dict) and d.data.get("summary")]
    assert after and "1 problem " in after[0].message  # only the module warning is left
    assert "AS202" not in {d.code for d in seen["typo fixed"]}
    assert "AS201" in {d.code for d in seen["typo fixed"]}


@pytest.mark.slow
def test_requests(project: Path) -> None:
    spec = project / "spec.yaml"
    answers: dict[str, object] = {}

    async def steps(s: Session) -> None:
        diagnostics = await s.open(spec)
        doc = s.doc(spec)

        def at(line: int, col: int) -> dict[str, object]:
            return {"text_document": doc, "position": lsp.Position(line, col)}

        def everything() -> lsp.ReferenceContext:
            return lsp.ReferenceContext(include_declaration=True)

        asks: dict[str, tuple[str, object]] = {
            "hover key": ("hover", lsp.HoverParams(**at(18, 6))),  # output_key
            "hover var": ("hover", lsp.HoverParams(**at(5, 40))),  # ${vars.company}
            "definition": ("definition", lsp.DefinitionParams(**at(14, 22))),  # fetch
            "python": ("definition", lsp.DefinitionParams(**at(9, 30))),  # tools_mod:search
            "references": ("references", lsp.ReferenceParams(**at(14, 13),  # search
                                                             context=everything())),
            "state": ("references", lsp.ReferenceParams(**at(18, 17),  # draft
                                                        context=everything())),
            "rename": ("rename", lsp.RenameParams(**at(2, 7), new_name="chief")),
            "rename import": ("rename", lsp.RenameParams(**at(14, 22), new_name="get")),
            "models": ("completion", lsp.CompletionParams(**at(12, 13))),
            "tools": ("completion", lsp.CompletionParams(**at(14, 12))),
            "keys": ("completion", lsp.CompletionParams(**at(17, 4))),
            "symbols": ("document_symbol", lsp.DocumentSymbolParams(text_document=doc)),
            "actions": ("code_action", lsp.CodeActionParams(
                text_document=doc, range=lsp.Range(lsp.Position(12, 0), lsp.Position(16, 0)),
                context=lsp.CodeActionContext(diagnostics=diagnostics))),
            "hover code": ("hover", lsp.HoverParams(text_document=doc, position=next(
                d for d in diagnostics if d.code == "AS202").range.start)),
        }
        for name, (method, params) in asks.items():
            answers[name] = await s.ask(f"text_document_{method}_async", params)

    drive(project, steps)
    hover = answers["hover key"]
    assert isinstance(hover, lsp.Hover) and isinstance(hover.contents, lsp.MarkupContent)
    assert "Session-state key" in hover.contents.value
    var = answers["hover var"]
    assert isinstance(var, lsp.Hover) and isinstance(var.contents, lsp.MarkupContent)
    assert "'Acme'" in var.contents.value
    [found] = answers["definition"]  # type: ignore[misc]
    assert found.uri.endswith("common/shared.yaml") and found.range.start.line == 2
    [python] = answers["python"]  # type: ignore[misc]
    assert python.uri.endswith("tools_mod.py") and python.range.start.line == 0
    refs = answers["references"]
    assert isinstance(refs, (list, tuple))
    lines = {(Path(r.uri).name, r.range.start.line) for r in refs}
    assert lines == {("spec.yaml", 9), ("spec.yaml", 14)}
    assert {r.range.start.line for r in answers["state"]} == {13, 18}  # type: ignore[attr-defined]
    rename = answers["rename"]
    assert isinstance(rename, lsp.WorkspaceEdit) and rename.changes is not None
    assert sorted((e.range.start.line, e.range.start.character) for e in
                  rename.changes[spec.resolve().as_uri()]) == [(2, 6), (11, 2)]
    imported = answers["rename import"]
    assert isinstance(imported, lsp.WorkspaceEdit) and imported.changes is not None
    assert set(imported.changes) == {spec.resolve().as_uri(),
                                     (project / "common" / "shared.yaml").resolve().as_uri()}
    assert [i.label for i in answers["models"]] == ["fast"]  # type: ignore[attr-defined]
    assert [i.label for i in answers["tools"]] == ["fetch", "search"]  # type: ignore[attr-defined]
    keys = answers["keys"]
    assert isinstance(keys, (list, tuple))
    assert {"output_key", "description", "model"} <= {i.label for i in keys}
    symbols = answers["symbols"]
    assert [s.name for s in symbols] == ["agents", "tools", "models", "vars"]  # type: ignore[attr-defined]
    assert [a.name for a in symbols[0].children] == ["boss", "helper"]  # type: ignore[index]
    titles = {a.title for a in answers["actions"]}  # type: ignore[attr-defined]
    assert {"Change to `fast`", "Change to `helper`", "Declare `topic` under `state:`"} <= titles
    code = answers["hover code"]
    assert isinstance(code, lsp.Hover) and isinstance(code.contents, lsp.MarkupContent)
