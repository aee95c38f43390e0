"""`summarization: false` turns off the default summarization of deep agents (issue 23): the
same deep agent, over the same conversation, is summarized by default and never with the
setting, live and in a generated package."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentspec.compiler import build_objects, compile_spec, emit_package, write_package
from agentspec.testing.scripted import install_script
from agentspec.validate.check import check
from tests.buildkit import package_loader

# a window of 200 tokens: the default summarizes once a request reaches 170
SPEC = """\
    agentspec: 1
    name: notes
    models:
      small: {id: gemini-2.5-flash, context_window: 200}
    agents:
      helper:
        kind: deep
        model: small
        instruction: Keep the user's notes.
    """
TURNS = ["Remember that the meeting with the auditors moved to Thursday at nine, room 4B. " * 10,
         "And the budget review is on Friday.", "Lunch is at noon.", "Dinner is at eight.",
         "When is the meeting?"]
REPLIES = {"helper": [{"text": "Noted."}] * 4 + [{"text": "Thursday at nine."}],
           "summarizer": [{"text": "The meeting moved to Thursday at nine, room 4B."}] * 5}


def _converse(app: Any) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        from google.adk.runners import InMemoryRunner
        from google.genai import types

        compaction = app.events_compaction_config
        replies = REPLIES if compaction is not None else {"helper": REPLIES["helper"]}
        models = install_script(app.root_agent, replies, compaction)
        runner = InMemoryRunner(app=app)
        try:
            await runner.session_service.create_session(app_name=app.name, user_id="u",
                                                        session_id="s")
            for turn in TURNS:
                said = types.Content(role="user", parts=[types.Part(text=turn)])
                async for _ in runner.run_async(user_id="u", session_id="s", new_message=said):
                    pass
            session = await runner.session_service.get_session(app_name=app.name,
                                                               user_id="u", session_id="s")
            assert session is not None
            models["summaries"] = [e for e in session.events if e.actions.compaction]
        finally:
            await runner.close()
        return models

    return asyncio.run(main())


def _spec(tmp_path: Path, off: bool) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(SPEC) + ("summarization: false\n" if off else ""))
    assert check(path, environ={}).diagnostics == []
    return path


@pytest.mark.parametrize("off", [False, True], ids=["default", "off"])
def test_a_deep_agent_is_summarized_by_default_and_never_when_it_is_off(
        tmp_path: Path, off: bool) -> None:
    compiled = compile_spec(_spec(tmp_path, off), environ={})
    app, problems = build_objects(compiled)
    assert problems == []
    models = _converse(app)
    if off:
        assert app.events_compaction_config is None
        assert models["summaries"] == [] and "summarizer" not in models
        # the last request carries the whole conversation
        assert TURNS[0] in str(models["helper"].requests[-1].contents)
    else:
        assert app.events_compaction_config.token_threshold == 170
        assert len(models["summaries"]) == len(models["summarizer"].requests) > 0
        assert TURNS[0] not in str(models["helper"].requests[-1].contents)


def test_the_generated_package_has_it_off_too(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = compile_spec(_spec(tmp_path, True), environ={})
    files = emit_package(compiled, tmp_path / "out")
    assert not write_package(files, tmp_path / "out")
    with package_loader(monkeypatch) as load:
        app = load(tmp_path / "out", "notes")
        assert app.events_compaction_config is None
        models = _converse(app)
    assert models["summaries"] == [] and "summarizer" not in models
    # and the default is on in a package built without it
    compiled = compile_spec(_spec(tmp_path, False), environ={})
    files = emit_package(compiled, tmp_path / "on")
    assert not write_package(files, tmp_path / "on")
    with package_loader(monkeypatch) as load:
        app = load(tmp_path / "on", "notes")
        assert app.events_compaction_config.token_threshold == 170
