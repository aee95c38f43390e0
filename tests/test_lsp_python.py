"""The language server's completion of python references, in process: module paths from the
project's `.py` files, attribute names from the module's source read as text (a module
that would do harm when imported completes without running), nothing from outside the
project or from files too large to read."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from agentspec.lsp import features
from agentspec.lsp.analysis import Analysis
from agentspec.project_files import resolved
from agentspec.pysource import MAX_SOURCE

SPEC = """\
agentspec: 1
name: desk
models:
  routed: {route: {python: }, models: [gemini-2.5-flash]}
tools:
  search: {python: }
agents:
  boss:
    instruction: Hi.
    callbacks:
      before_model: []
    tools: [search]
"""
#: importing it would write a file: completion must read it, never run it
GUARDS = """\
import pathlib
pathlib.Path(__file__).with_name("imported").write_text("ran")


async def check(ctx):
    return None


class Limits:
    pass


THRESHOLD = 3


def _helper():
    pass
"""


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "pkg" / "sub").mkdir(parents=True)
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "sub" / "__init__.py").write_text("")
    (project / "pkg" / "sub" / "deep.py").write_text("def run():\n    pass\n")
    (project / "not_a_package").mkdir()
    (project / "not_a_package" / "hidden.py").write_text("def no():\n    pass\n")
    (project / ".venv").mkdir()
    (project / ".venv" / "vendored.py").write_text("")
    (project / "my-script.py").write_text("")  # no module can be named so
    (project / "guards.py").write_text(GUARDS)
    (project / "huge.py").write_text("def big():\n    pass\n" + "#" * MAX_SOURCE)
    (project / "broken.py").write_text("def broken(:\n")
    (tmp_path / "elsewhere.py").write_text("def secret():\n    pass\n")
    (project / "linked.py").symlink_to(tmp_path / "elsewhere.py")
    path = resolved(project / "spec.yaml")
    path.write_text(SPEC)
    return path


def _complete(spec: Path, text: str, needle: str) -> list[lsp.CompletionItem]:
    """Completion at the end of the first `needle` in `text` (the buffer)."""
    analysis = Analysis()
    analysis.buffers[spec] = SPEC
    analysis.check(spec)
    analysis.index(spec)  # as it was before the edit, which may leave it unparsable
    analysis.buffers[spec] = text
    analysis.check(spec)  # as the server does before it answers
    row = next(i for i, line in enumerate(text.splitlines()) if needle in line)
    column = text.splitlines()[row].index(needle) + len(needle)
    return features.completion(analysis, spec, lsp.Position(row, column))


def test_modules_complete_from_the_project(spec: Path) -> None:
    for needle in ("search: {python: ", "route: {python: ", "before_model: ["):
        found = _complete(spec, SPEC, needle)
        assert [i.label for i in found] == ["broken", "guards", "huge", "pkg", "pkg.sub",
                                            "pkg.sub.deep"], needle
        assert {i.kind for i in found} == {lsp.CompletionItemKind.Module}


def test_attributes_complete_from_the_source_never_imported(spec: Path) -> None:
    text = SPEC.replace("search: {python: ", "search: {python: guards:")
    found = _complete(spec, text, "python: guards:")
    assert [(i.label, i.kind) for i in found] == [
        ("Limits", lsp.CompletionItemKind.Class), ("THRESHOLD", lsp.CompletionItemKind.Variable),
        ("_helper", lsp.CompletionItemKind.Function),
        ("check", lsp.CompletionItemKind.Function)]
    assert "guards" not in sys.modules
    assert not (spec.parent / "imported").exists()
    edit = found[0].text_edit
    assert isinstance(edit, lsp.TextEdit)
    line = text.splitlines()[edit.range.start.line]
    assert line[:edit.range.start.character].endswith("guards:")  # only the name is replaced


def test_attributes_of_a_dotted_module_in_a_block_list(spec: Path) -> None:
    text = SPEC.replace("      before_model: []\n",
                        "      before_model:\n        - pkg.sub.deep:r\n")
    found = _complete(spec, text, "- pkg.sub.deep:r")
    assert [i.label for i in found] == ["run"]
    edit = found[0].text_edit
    assert isinstance(edit, lsp.TextEdit)
    assert edit.range.end.character - edit.range.start.character == 1  # the `r` typed


@pytest.mark.parametrize("module", ["huge", "broken", "linked",
                                    "..elsewhere", "nothing"])
def test_nothing_from_a_module_too_large_broken_or_outside(spec: Path, module: str) -> None:
    text = SPEC.replace("search: {python: ", f"search: {{python: {module}:")
    assert _complete(spec, text, f"python: {module}:") == []


def test_elsewhere_the_names_of_the_spec_are_completed(spec: Path) -> None:
    text = SPEC.replace("    tools: [search]", "    tools: [search, ")
    found = _complete(spec, text, "tools: [search, ")
    assert [i.label for i in found] == ["search"]


@pytest.mark.parametrize("pasted", ["x" * 200_000 + ": ", "python:" * 30_000 + " ",
                                    "  tools: [{python: " + "a" * 200_000 + ":"])
def test_a_long_pasted_line_is_answered(spec: Path, pasted: str) -> None:
    """Patterns anchored at the cursor read the end of the line only: over the whole of a
    pasted run of word characters their work grew with its square (200,000 characters:
    about twenty minutes)."""
    text = SPEC + pasted
    analysis = Analysis()
    analysis.buffers[spec] = text
    row = len(text.splitlines()) - 1
    for found in (features.completion(analysis, spec, lsp.Position(row, len(pasted))),
                  features.hover(analysis, spec, lsp.Position(row, len(pasted) - 1))):
        assert found is None or isinstance(found, (list, lsp.Hover))
