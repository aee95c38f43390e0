"""Deep agents are summarized by default at 85% of their models' context window (issue 23,
item 1), from `context_window:` or the table of known models; an unknown window leaves the
spec unsummarized, and validate says so (AS236)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from agentspec.compiler import build_objects, compile_spec
from agentspec.contract.context_windows import known_window
from agentspec.validate.check import check

SPEC = """\
    agentspec: 1
    name: summarized
    models:
      small: {id: gemini-2.5-flash, context_window: 200000}
      other: {id: openai/gpt-4o, provider: litellm}
    agents:
      helper:
        kind: deep
        model: MODEL
        instruction: Help.
    """


def _app(tmp_path: Path, model: str, extra: str = "") -> tuple[Any, list[tuple[str, str]]]:
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(SPEC).replace("MODEL", model) + extra)
    found = [(d.code, d.severity.value) for d in check(path, environ={}).diagnostics]
    compiled = compile_spec(path, environ={})
    assert compiled.ok, compiled.diagnostics
    app, problems = build_objects(compiled)
    assert problems == []
    return app, found


def test_a_known_model_is_summarized_at_85_percent(tmp_path: Path) -> None:
    app, found = _app(tmp_path, "gemini-2.5-flash")
    config = app.events_compaction_config
    assert config is not None and found == []
    assert (config.token_threshold, config.event_retention_size) == (int(0.85 * 1048576), 6)


def test_a_declared_window_wins(tmp_path: Path) -> None:
    app, _ = _app(tmp_path, "small")
    assert app.events_compaction_config.token_threshold == 170000


def test_an_unknown_window_keeps_todays_behaviour_and_says_so(tmp_path: Path) -> None:
    app, found = _app(tmp_path, "other")
    assert app.events_compaction_config is None
    assert found == [("AS236", "info")]


def test_the_specs_own_summarization_comes_first(tmp_path: Path) -> None:
    app, found = _app(tmp_path, "other", "summarization: {trigger: {tokens: 5000}}\n")
    assert app.events_compaction_config.token_threshold == 5000 and found == []
    plain = textwrap.dedent(SPEC).replace("kind: deep", "todos: true")
    (tmp_path / "plain.yaml").write_text(plain.replace("MODEL", "gemini-2.5-flash"))
    app, _ = build_objects(compile_spec(tmp_path / "plain.yaml", environ={}))
    assert app.events_compaction_config is None  # only deep agents get the default


def test_known_windows_cover_releases_of_a_known_model() -> None:
    assert known_window("gemini-2.5-flash-preview-05-20") == 1048576
    assert known_window("gemini-1.5-pro-002") == 2097152
    assert known_window("gemini-2.5-flash-lite") == 1048576
    assert known_window("claude-sonnet") is None


def test_a_name_for_a_known_model_id_is_summarized(tmp_path: Path) -> None:
    # `models: {smart: gemini-2.5-pro}` (the deep-agent guide's spelling) names a known id
    path = tmp_path / "named.yaml"
    path.write_text(textwrap.dedent(SPEC).replace("MODEL", "smart").replace(
        "models:\n", "models:\n  smart: gemini-2.5-pro\n"))
    assert [d.code for d in check(path, environ={}).diagnostics] == []
    app, problems = build_objects(compile_spec(path, environ={}))
    assert problems == []
    assert app.events_compaction_config.token_threshold == int(0.85 * 1048576)
