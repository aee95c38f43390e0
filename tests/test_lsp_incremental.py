"""A keystroke after a cached state gives the language server exactly the diagnostics a
fresh check gives (validate's: `check()` without a reparser, what `validate --format json`
prints), for an edit in the root, in an imported file, in an environment overlay, and for
an error that appears and then goes away; and the keystroke re-parses only what changed."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from agentspec.diagnostics import Diagnostic
from agentspec.lsp import features
from agentspec.lsp.analysis import Analysis
from agentspec.project_files import resolved
from agentspec.validate.check import check
from tests.test_parse_incremental import edited

AGENTS = "".join(f"""\
  helper_{i}:
    description: Helper {i}.
    instruction: Help with part {i} for ${{vars.company}}; read {{part_{i}?}}.
    output_key: part_{i + 1}
""" for i in range(6))
SPEC = f"""\
agentspec: 1
name: desk
root: boss
imports: [./common/shared.yaml]
vars: {{company: Acme}}
models:
  fast: gemini-2.5-flash
agents:
  boss:
    model: fast
    instruction: Write about {{topic?}}.
    tools: [fetch]
    sub_agents: [helper_0, helper_1, helper_2, helper_3, helper_4, helper_5]
{AGENTS}environments:
  prod:
    models: {{fast: gemini-2.5-pro}}
"""
SHARED = """\
agentspec: 1
tools:
  fetch:
    builtin: google_search
"""


@pytest.fixture
def paths(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / ".git").mkdir()  # the project's root
    (tmp_path / "common").mkdir()
    spec, shared = tmp_path / "spec.yaml", tmp_path / "common" / "shared.yaml"
    spec.write_text(SPEC)
    shared.write_text(SHARED)
    return resolved(spec), resolved(shared)


def shown(found: list[Diagnostic]) -> list[str]:
    """Everything a diagnostic says, its end included (`Span`'s == leaves the end out)."""
    return [f"{d!r} end={d.span.end if d.span else None}" for d in found]


def fresh(spec: Path, buffers: dict[Path, str]) -> dict[Path, list[str]]:
    """validate's diagnostics, by the file each names (as `--format json` places them): no
    analysis, nothing kept."""
    result = check(spec, texts=dict(buffers))
    found: dict[Path, list[Diagnostic]] = {}
    for diag in result.diagnostics:
        where = resolved(Path(diag.span.file)) if diag.span else spec
        found.setdefault(where, []).append(diag)
    return {path: shown(diags) for path, diags in found.items() if diags}


def assert_same(analysis: Analysis, spec: Path) -> dict[Path, list[str]]:
    done = analysis.check(spec)
    kept = {path: shown(diags) for path, diags in done.by_file.items() if diags}
    assert kept == fresh(spec, analysis.buffers)
    # and what is published, against a new analysis of the same buffers
    again = Analysis()
    again.buffers = dict(analysis.buffers)
    new = again.check(spec)
    assert set(done.by_file) == set(new.by_file)
    for path in done.by_file:
        assert [str(d) for d in features.diagnostics_of(analysis, path, done.by_file[path])] \
            == [str(d) for d in features.diagnostics_of(again, path, new.by_file[path])]
    return kept


def codes(found: dict[Path, list[str]], path: Path) -> set[str]:
    return {line.split("code='", 1)[1].split("'", 1)[0] for line in found.get(path, [])
            if "code='" in line}


def test_edits_after_a_cached_state_give_what_a_fresh_check_gives(
        paths: tuple[Path, Path]) -> None:
    spec, shared = paths
    analysis = Analysis()
    analysis.buffers[spec] = SPEC
    assert_same(analysis, spec)

    # in the root: a word in an instruction, then a line above everything
    analysis.buffers[spec] = SPEC.replace("Help with part 3", "Help with part three")
    assert_same(analysis, spec)
    analysis.buffers[spec] = "# a new first line\n" + analysis.buffers[spec]
    assert_same(analysis, spec)

    # in the imported file (an unsaved buffer): a problem appears there
    analysis.buffers[shared] = SHARED + "    filtr: [x]\n"
    found = assert_same(analysis, spec)
    assert "AS101" in codes(found, shared)

    # in the overlay: an unknown model in `prod` only
    analysis.buffers[spec] = analysis.buffers[spec].replace(
        "models: {fast: gemini-2.5-pro}", "agents: {boss: {model: mising}}")
    found = assert_same(analysis, spec)
    assert any("(in environment `prod`)" in line for line in found[spec])

    # an error that appears, then goes away (back to the text parsed before)
    before = analysis.buffers[spec]
    analysis.buffers[spec] = before.replace("model: fast", "model: fsat")
    found = assert_same(analysis, spec)
    assert "fsat" in str(found[spec])
    analysis.buffers[spec] = before
    found = assert_same(analysis, spec)
    assert "fsat" not in str(found.get(spec, []))

    # a syntax error in one agent (the whole file is parsed, its error reported), then fixed
    analysis.buffers[spec] = before.replace("    description: Helper 4.\n",
                                            "    description: [Helper 4.\n")
    found = assert_same(analysis, spec)
    assert "AS004" in codes(found, spec) or "AS003" in codes(found, spec)
    analysis.buffers[spec] = before
    assert_same(analysis, spec)


def test_a_keystroke_parses_the_edited_agent_only(paths: tuple[Path, Path]) -> None:
    spec, shared = paths
    analysis = Analysis()
    analysis.buffers[spec] = SPEC
    analysis.check(spec)
    parsed = analysis.reparser.parsed_pieces
    analysis.buffers[spec] = SPEC.replace("Help with part 3", "Help with part three")
    analysis.check(spec)
    assert analysis.reparser.parsed_pieces == parsed + 1  # helper_3; the import is kept
    analysis.buffers[shared] = SHARED + "    # a comment\n"
    analysis.check(spec)
    assert analysis.reparser.parsed_pieces == parsed + 2  # the import's `tools`


def test_edits_in_an_import_that_does_not_parse_are_checked_again(
        paths: tuple[Path, Path]) -> None:
    """An imported file that does not parse is no source of the check (validate shows
    nothing of it but its problem), yet a change in it must re-check its importer."""
    spec, shared = paths
    analysis = Analysis()
    analysis.buffers[spec] = SPEC
    analysis.buffers[shared] = SHARED.replace("  fetch:", '  "fetch:')
    first = assert_same(analysis, spec)
    assert "AS004" in codes(first, shared)  # published on the file it is in
    assert spec in analysis.roots_of(shared)
    analysis.buffers[shared] = SHARED.replace("  fetch:", "  fetch: [")
    assert assert_same(analysis, spec) != first
    analysis.buffers[shared] = SHARED
    assert "AS004" not in str(assert_same(analysis, spec))


def test_random_edits_give_what_a_fresh_check_gives(paths: tuple[Path, Path]) -> None:
    """Seeded random keystrokes in the root and its import, through one analysis."""
    spec, shared = paths
    rng = random.Random(26)
    for _ in range(25):
        analysis = Analysis()
        texts = {spec: SPEC, shared: SHARED}
        analysis.buffers[spec] = SPEC
        for _ in range(5):
            target = spec if rng.random() < 0.75 else shared
            texts[target] = analysis.buffers[target] = edited(rng, texts[target])
            done = analysis.check(spec)
            assert {path: shown(diags) for path, diags in done.by_file.items() if diags} \
                == fresh(spec, analysis.buffers)
