"""`agentspec lsp` driven by a real LSP client (pygls') over stdio, in a subprocess: the
diagnostics of open and changed buffers (positions as `validate --format json` gives them),
across imports and scenario files, every request, and hostile input."""

from __future__ import annotations

import asyncio
import json
import os
import re
import select
import subprocess
import sys
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
environments:
  prod: {agents: {helper: {model: mising}}}
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
    assert not session.shown, session.shown  # an error pop-up reads as the server failing
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
    overlay = [d for d in seen["spec"] if "(in environment `prod`)" in d.message]
    assert [d.range.start.line for d in overlay] == [20]  # the overlay's own problem
    assert places(seen["shared"]) == expected(rows, project, "common/shared.yaml") != set()
    assert places(seen["scenarios"]) == expected(rows, project, "scenarios/spec.yaml") != set()
    summary = [d for d in seen["spec"] if isinstance(d.data, dict) and d.data.get("summary")]
    assert len(summary) == 1 and summary[0].range.start.line == 3  # at `./common/shared.yaml`
    assert "2 problems" in summary[0].message and "AS101" in summary[0].message
    assert places(seen["shared opened"]) == places(seen["shared"])  # checked as imported
    assert "AS101" not in {d.code for d in seen["shared fixed"]}
    after = [d for d in seen["spec after"] if isinstance(d.data, dict) and d.data.get("summary")]
    assert after and "1 problem " in after[0].message  # only the module warning is left
    assert [d.range.start.line for d in seen["typo fixed"] if d.code == "AS202"] == [20]
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
    assert [s.name for s in symbols] == ["agent tree", "agents", "tools", "models", "vars"]  # type: ignore[attr-defined]
    [boss] = symbols[0].children  # type: ignore[index]
    assert boss.name == "boss" and boss.children is None  # `helpr` is no agent
    assert [a.name for a in symbols[1].children] == ["boss", "helper"]  # type: ignore[index]
    titles = {a.title for a in answers["actions"]}  # type: ignore[attr-defined]
    assert {"Change to `fast`", "Change to `helper`", "Declare `topic` under `state:`"} <= titles
    code = answers["hover code"]
    assert isinstance(code, lsp.Hover) and isinstance(code.contents, lsp.MarkupContent)
    assert "model `fsat`" in code.contents.value  # the name, then its diagnostic's code
    assert "**AS202** `unknown-model`" in code.contents.value


@pytest.mark.slow
def test_hostile_input_gives_diagnostics_or_nothing(project: Path, tmp_path_factory:
                                                    pytest.TempPathFactory) -> None:
    """Half-typed YAML, binary, a 10 MB paste, an import cycle mid-edit and a file outside
    the workspace: diagnostics or nothing; the server keeps answering, with no traceback on
    stderr and no internal error in its log (`drive` asserts both)."""
    spec, shared = project / "spec.yaml", project / "common" / "shared.yaml"
    outside = tmp_path_factory.mktemp("elsewhere") / "spec.yaml"
    outside.write_text(SPEC)
    seen: dict[str, list[lsp.Diagnostic]] = {}
    hovered: list[object] = []

    async def steps(s: Session) -> None:
        await s.open(spec)
        for name, text in [("half", SPEC[:SPEC.index("[search") + 7]),
                           ("tabs", "agents:\n\tboss: {\n"),
                           ("binary", "\x00\x01\x7f\ufffe\U0001f600" * 50),
                           ("big", "agents:\n" + "  a: " + "x" * (10 * 1024 * 1024)),
                           ("empty", "")]:
            seen[name] = await s.change(spec, text)
            hovered.append(await s.ask("text_document_hover_async", lsp.HoverParams(
                text_document=s.doc(spec), position=lsp.Position(1, 3))))
            await s.ask("text_document_completion_async", lsp.CompletionParams(
                text_document=s.doc(spec), position=lsp.Position(2, 1)))
            await s.ask("text_document_document_symbol_async",
                        lsp.DocumentSymbolParams(text_document=s.doc(spec)))
        await s.change(spec, SPEC)
        for uri in ("file:///tmp/%00nul.yaml", "untitled:Untitled-1", "file:///",
                    s.uri(project) + "/\ud800.yaml",  # a lone surrogate: no file's name
                    s.uri(project) + "/%00inside.yaml", s.uri(project) + "/%ff%fe.yaml"):
            s.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
                lsp.TextDocumentItem(uri, "yaml", 1, SPEC)))
            s.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(2, uri),
                [lsp.TextDocumentContentChangeWholeDocument("x")]))
        await s.open(shared, wait_on=spec)
        await s.change(shared, SHARED + "imports: [../spec.yaml]\n", wait_on=spec)
        seen["cycle"] = s.diagnostics[s.uri(shared)]
        s.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(s.uri(outside), "yaml", 1, SPEC)))
        seen["after outside"] = await s.change(spec, SPEC.replace("fsat", "fast"))
        seen["outside"] = s.diagnostics.get(s.uri(outside), [])
        hovered.append(await s.ask("text_document_hover_async", lsp.HoverParams(
            text_document=s.doc(outside), position=lsp.Position(17, 6))))

    drive(project, steps)
    codes = {name: {d.code for d in found} for name, found in seen.items()}
    assert codes["half"] == {"AS004"}  # yaml-syntax
    assert codes["tabs"] == {"AS006"} and codes["binary"] == {"AS004"}
    assert codes["big"] == {"AS010"} and codes["empty"] == {"AS007"}
    assert "AS302" in codes["cycle"]  # import-cycle, on the imported file
    assert seen["outside"] == [] and hovered[-1] is None
    assert "AS201" in {d.code for d in seen["after outside"]}  # the server still works


def test_a_change_to_a_document_never_opened_is_ignored_quietly(project: Path) -> None:
    """pygls answered a `didChange` for a document the editor never opened (whole or in
    part, in the project or not) with an error pop-up, "Error in server: KeyError: 'file:
    ...'", as if the server had failed; `drive` asserts there is none."""
    spec = project / "spec.yaml"
    seen: dict[str, list[lsp.Diagnostic]] = {}

    async def steps(s: Session) -> None:
        for uri in (s.uri(project / "common" / "shared.yaml"), s.uri(project / "absent.yaml"),
                    "file:///etc/hostname"):
            for change in (lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 1)), text="Z"),
                    lsp.TextDocumentContentChangeWholeDocument("agents: {}\n")):
                s.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                    lsp.VersionedTextDocumentIdentifier(2, uri), [change]))
        seen["spec"] = await s.open(spec)  # and the server goes on

    session = drive(project, steps)
    assert "AS202" in {d.code for d in seen["spec"]}
    assert len([log for log in session.logs if "was not applied" in log]) == 6


class _Frames:
    """The server's messages as they come; a server that never answers fails the test after
    a generous wait instead of hanging it."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        self.fd, self.buffer = process.stdout.fileno(), b""

    def until(self, wanted: int) -> dict[str, object]:
        while True:
            head, found, rest = self.buffer.partition(b"\r\n\r\n")
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length")), -1)
            if found and len(rest) >= length:
                self.buffer = rest[length:]
                message = json.loads(rest[:length])
                if message.get("id") == wanted:
                    return dict(message)
                continue
            ready, _, _ = select.select([self.fd], [], [], 120)
            assert ready, f"no answer to request {wanted}"
            chunk = os.read(self.fd, 65536)
            assert chunk, "the server ended"
            self.buffer += chunk


def test_a_request_with_parameters_out_of_the_protocol_is_answered(project: Path) -> None:
    """A negative line or one past 2**31 does not fit the protocol's types (a typed client
    cannot even send it; a raw one can): pygls answered nothing, so the editor waited
    forever. It is answered with an "invalid params" error, and the server goes on."""
    process = subprocess.Popen([AGENTSPEC, "lsp"], cwd=project, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdin is not None and process.stderr is not None

    def send(message: dict[str, object]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert process.stdin is not None
        process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        process.stdin.flush()

    uri = (project / "spec.yaml").resolve().as_uri()
    frames = _Frames(process)
    try:
        send({"id": 1, "method": "initialize", "params": {"capabilities": {},
                                                           "rootUri": project.as_uri()}})
        frames.until(1)
        send({"method": "initialized", "params": {}})
        for number, line in ((2, -1), (3, 2 ** 32)):
            send({"id": number, "method": "textDocument/hover", "params": {
                "textDocument": {"uri": uri}, "position": {"line": line, "character": 0}}})
            answer = frames.until(number)
            assert answer["error"] == {"code": -32602, "message": "Invalid Params"}, answer
        send({"id": 4, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": uri}, "position": {"line": 1, "character": 3}}})
        assert "result" in frames.until(4)
        send({"id": 5, "method": "shutdown"})
        frames.until(5)
        send({"method": "exit"})
        assert process.wait(timeout=60) == 0
        assert "Traceback" not in process.stderr.read().decode()
    finally:
        process.kill()


def test_without_the_extra_the_message_names_it(tmp_path: Path) -> None:
    """A plain install (no pygls) is told which extra to install, with no traceback."""
    hide = ("import sys; sys.modules['pygls'] = None; sys.argv = ['agentspec', 'lsp']; "
            "from agentspec.cli import main; main()")
    done = subprocess.run([sys.executable, "-c", hide], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 1
    assert "pip install 'agentspec-adk[lsp]'" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("editor", ["neovim", "helix", "vscode"])
def test_editors_start_the_server_as_documented(project: Path, editor: str) -> None:
    """The command line each editor's configuration (docs/guides/editors.md, the VS Code
    extension) runs answers an initialize request over stdio and serves diagnostics."""
    command = _documented_command(editor)
    seen: dict[str, list[lsp.Diagnostic]] = {}

    async def steps(s: Session) -> None:
        assert s.init.server_info is not None and s.init.server_info.name == "agentspec"
        seen["spec"] = await s.open(project / "spec.yaml")

    drive(project, steps, command=(AGENTSPEC, *command[1:]))
    assert "AS202" in {d.code for d in seen["spec"]}


def _documented_command(editor: str) -> list[str]:
    """The command line the docs or the extension give `editor`."""
    repo = Path(__file__).resolve().parent.parent
    if editor == "vscode":
        text = (repo / "editors" / "vscode" / "extension.js").read_text()
        found = re.search(r'DEFAULT_ARGS = (\[.*?\])', text)
        assert found is not None
        return ["agentspec", *json.loads(found.group(1))]
    guide = (repo / "docs" / "guides" / "editors.md").read_text()
    marker = {"neovim": "cmd = ", "helix": "command = "}[editor]
    block = guide.split(f"<!-- {editor} -->", 1)[1]
    line = next(line for line in block.splitlines() if marker in line)
    if editor == "neovim":
        found = re.search(r"cmd = (\{.*?\})", line)
        assert found is not None
        return json.loads("[" + found.group(1)[1:-1] + "]")
    found = re.search(r'command = "([^"]+)"', block)
    args = re.search(r"args = (\[.*?\])", block)
    assert found is not None
    return [found.group(1), *(json.loads(args.group(1)) if args else [])]
