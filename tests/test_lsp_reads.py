"""The language server reads a file again only when it changed: a sweep of requests over
every line of `specs/research_desk.yaml` (imports, skills, an instruction file, python
references) opens none of the files the check already read, and answers as a server that
starts afresh for every request does; a file changed on disk (even to the same size with its
modification time put back) or in its open buffer is seen by the next request."""

from __future__ import annotations

import collections
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp

from agentspec.lsp import actions, features, outline
from agentspec.lsp.analysis import Analysis
from agentspec.project_files import resolved

SPECS = Path(__file__).resolve().parent.parent / "specs"
#: a time long past: a file's stamp is trusted only once the file is older than its read
OLD = 1_600_000_000_000_000_000

_opened: list[collections.Counter[str]] = []


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if _opened and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        _opened[-1][os.fsdecode(args[0])] += 1


sys.addaudithook(_hook)  # cannot be removed: it counts only while `_opened` holds a counter


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    """A copy of the specs folder in a linked git work tree (its `.git` a `gitdir:` file),
    every file of it last written long ago."""
    shutil.copytree(SPECS, tmp_path / "specs", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / ".git").write_text(f"gitdir: {tmp_path}/main/.git/worktrees/specs\n")
    for folder, _, files in os.walk(tmp_path / "specs"):
        for name in files:
            os.utime(Path(folder, name), ns=(OLD, OLD))
    return resolved(tmp_path / "specs" / "research_desk.yaml")


def requests(analysis: Analysis, path: Path, position: lsp.Position
             ) -> dict[str, Callable[[], object]]:
    here = lsp.Range(position, position)
    action = lsp.CodeActionParams(lsp.TextDocumentIdentifier(path.as_uri()), here,
                                  lsp.CodeActionContext(diagnostics=[]))
    return {
        "hover": lambda: features.hover(analysis, path, position),
        "completion": lambda: features.completion(analysis, path, position),
        "definition": lambda: features.definition(analysis, path, position),
        "references": lambda: features.references(analysis, path, position),
        "rename": lambda: features.rename(analysis, path, position, "renamed"),
        "code action": lambda: actions.code_actions(analysis, path, action),
        "document symbols": lambda: outline.document_symbols(analysis, path),
    }


def answer(analysis: Analysis, path: Path, name: str, position: lsp.Position) -> object:
    """As the server answers a request: the checks of the document's trees first."""
    for root in analysis.roots_of(path):
        analysis.check(root)
    return requests(analysis, path, position)[name]()


def opened() -> collections.Counter[str]:
    _opened.append(collections.Counter())
    return _opened[-1]


def test_a_sweep_of_requests_reads_no_unchanged_file_again(desk: Path) -> None:
    analysis = Analysis()
    analysis.buffers[desk] = desk.read_text(encoding="utf-8")
    analysis.check(desk)  # the open
    tree = {str(p) for p in analysis.checks[desk].files}
    assert str(desk.parent / "common" / "tools.yaml") in tree
    assert any(p.endswith("SKILL.md") for p in tree)
    lines = analysis.buffers[desk].splitlines()
    counts = opened()
    try:
        for row, line in enumerate(lines):
            for column in sorted({0, *range(2, len(line) + 1, 7)}):
                for name in requests(analysis, desk, lsp.Position(row, 0)):
                    answer(analysis, desk, name, lsp.Position(row, column))
    finally:
        _opened.pop()
    ours = {path: n for path, n in counts.items()
            if path.startswith(str(desk.parent.parent))}
    # each file at most once: the tree's (the check is keyed by the texts it read; the first
    # request reads them to learn their stamps), a python module a definition opens, `.git`
    # (which tells where the project is), the scenario file beside the spec (references and
    # rename reach its names)
    assert all(n == 1 for n in ours.values()), ours
    assert ours.keys() - tree <= {str(desk.parent.parent / ".git"),
                                  str(desk.parent / "scenarios" / "research_desk.yaml"),
                                  *(str(p) for p in (desk.parent / "research_tools").iterdir())}


def test_the_answers_are_a_fresh_servers(desk: Path) -> None:
    analysis = Analysis()
    analysis.buffers[desk] = desk.read_text(encoding="utf-8")
    lines = analysis.buffers[desk].splitlines()
    for row in range(0, len(lines), 5):
        position = lsp.Position(row, min(len(lines[row]), 12))
        fresh = Analysis()
        fresh.buffers = dict(analysis.buffers)
        for name in requests(analysis, desk, position):
            assert answer(analysis, desk, name, position) == \
                answer(fresh, desk, name, position), (name, row)


def _tools_offered(analysis: Analysis, desk: Path) -> set[str]:
    row = next(i for i, line in enumerate(analysis.buffers[desk].splitlines())
               if "tools: [web_search, fetch]" in line)
    items = answer(analysis, desk, "completion", lsp.Position(row, 28))
    assert isinstance(items, list)
    return {item.label for item in items}


def test_a_changed_file_is_read_again(desk: Path) -> None:
    analysis = Analysis()
    analysis.buffers[desk] = desk.read_text(encoding="utf-8")
    tools = resolved(desk.parent / "common" / "tools.yaml")
    assert "fetch" in _tools_offered(analysis, desk)
    text = tools.read_text(encoding="utf-8")
    # the same size and the modification time put back: the change time still tells
    tools.write_text(text.replace("  fetch:", "  fetcx:"), encoding="utf-8")
    os.utime(tools, ns=(OLD, OLD))
    offered = _tools_offered(analysis, desk)
    assert "fetcx" in offered and "fetch" not in offered
    # a file written as recently as it is read is judged by its content
    tools.write_text(text.replace("  fetch:", "  fetcy:"), encoding="utf-8")
    assert "fetcy" in _tools_offered(analysis, desk)
    tools.write_text(text.replace("  fetch:", "  fetcz:"), encoding="utf-8")
    assert "fetcz" in _tools_offered(analysis, desk)
    # an open buffer of it, then that buffer changed
    analysis.buffers[tools] = text.replace("  fetch:", "  opened:")
    assert "opened" in _tools_offered(analysis, desk)
    analysis.buffers[tools] = text.replace("  fetch:", "  edited:")
    assert "edited" in _tools_offered(analysis, desk)
    del analysis.buffers[tools]
    assert "fetcz" in _tools_offered(analysis, desk)


def test_a_file_changed_while_it_is_checked_is_checked_again(
        desk: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check is keyed by the texts it read: a save that lands after the check read the
    file, before the check ended, is not taken for what the check saw."""
    from agentspec.validate import check as check_module

    tools = resolved(desk.parent / "common" / "tools.yaml")
    text = tools.read_text(encoding="utf-8")
    checked = check_module.check

    def saved_meanwhile(*args: Any, **kwargs: Any) -> Any:
        result = checked(*args, **kwargs)
        tools.write_text(text.replace("  fetch:", "  fetcx:"), encoding="utf-8")
        os.utime(tools, ns=(OLD, OLD))
        return result

    analysis = Analysis()
    analysis.buffers[desk] = desk.read_text(encoding="utf-8")
    monkeypatch.setattr(check_module, "check", saved_meanwhile)
    analysis.check(desk)
    monkeypatch.setattr(check_module, "check", checked)
    offered = _tools_offered(analysis, desk)
    assert "fetcx" in offered and "fetch" not in offered
    assert "fetcx" in analysis.check(desk).files[tools].text


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_or_a_folder_is_no_text_and_never_blocks(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    (tmp_path / "folder.yaml").mkdir()
    (tmp_path / "latin1.yaml").write_bytes(b"name: caf\xe9\n")
    (tmp_path / "bom.yaml").write_bytes(b"\xef\xbb\xbfname: a\n")
    analysis = Analysis()
    for name in ("pipe.yaml", "folder.yaml", "latin1.yaml", "missing.yaml"):
        assert analysis.text_of(tmp_path / name) is None
    assert analysis.text_of(tmp_path / "bom.yaml") == "name: a\n"
    analysis.find_importers(tmp_path / "other.yaml", [resolved(tmp_path)])
