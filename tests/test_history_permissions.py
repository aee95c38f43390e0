"""`summarization.history` obeys the backends' `write` lists (issue 23): a history file the
lists deny is never written, no summary is made without it (nothing leaves the model's view
unrecorded) and each attempt is a warning, not a silent write. Validate tells what it can
know statically (AS324-AS326, golden cases `history_write_*`)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentspec.cli import cli
from agentspec.compiler import build_objects, compile_spec
from agentspec.runtime.failures import failures_in
from agentspec.testing.scripted import install_script
from tests.test_summarization import SPEC, TURNS

ALICE_ONLY = SPEC.replace("files: {type: filesystem, root: ./workspace}",
                          'files: {type: filesystem, root: ./workspace, '
                          'write: ["/conversation_history/alice/**"]}')
# the holder lets anything be written; the composite the agent's file tools go through does not
COMPOSITE = SPEC.replace(
    "files: {type: filesystem, root: ./workspace}",
    "files: {type: filesystem, root: ./workspace}\n"
    "  kept: {type: composite, default: files, "
    'write: ["/conversation_history/alice/**"]}').replace("filesystem: files",
                                                          "filesystem: kept")
REPLIES = {"scribe": [{"text": "Noted."}, {"text": "You're welcome."}, {"text": "4417."}],
           "summarizer": [{"text": "A locker code was noted."}] * 3}


def _converse(user: str) -> tuple[dict[str, Any], list[str]]:
    app, problems = build_objects(compile_spec(Path("spec.yaml")))
    assert not problems

    async def main() -> tuple[dict[str, Any], list[str]]:
        from google.adk.runners import InMemoryRunner
        from google.genai import types

        models = install_script(app.root_agent, REPLIES, app.events_compaction_config)
        runner = InMemoryRunner(app=app)
        try:
            await runner.session_service.create_session(app_name=app.name, user_id=user,
                                                        session_id="s1")
            for turn in TURNS:
                said = types.Content(role="user", parts=[types.Part(text=turn)])
                async for _ in runner.run_async(user_id=user, session_id="s1",
                                                new_message=said):
                    pass
            session = await runner.session_service.get_session(app_name=app.name,
                                                               user_id=user, session_id="s1")
            assert session is not None
            failures = [str(f) for event in session.events for f in failures_in(event)]
        finally:
            await runner.close()
        return models, failures

    return asyncio.run(main())


@pytest.mark.parametrize("spec", [ALICE_ONLY, COMPOSITE], ids=["holder", "composite"])
def test_a_history_the_write_list_denies_is_never_written(spec_dir: Any, tmp_path: Path,
                                                           spec: str) -> None:
    spec_dir(spec)
    models, failures = _converse("bob")
    denied = ("agent `summarizer` failed: summarization failed: RuntimeError: "
              "summarization.history: Writing /conversation_history/bob/s1.md is not allowed: "
              "backend `{}` lets the file tools write only `/conversation_history/alice/**` "
              "(its `write` rule)".format("kept" if spec is COMPOSITE else "files"))
    assert failures and set(failures) == {denied}
    assert not (tmp_path / "workspace" / "conversation_history").exists()
    # the summarizer is not paid for a summary that could not be kept
    assert models["summarizer"].requests == []


def test_the_history_a_write_list_allows_is_written(spec_dir: Any, tmp_path: Path) -> None:
    spec_dir(ALICE_ONLY)
    models, failures = _converse("alice")
    assert failures == []
    history = tmp_path / "workspace" / "conversation_history" / "alice" / "s1.md"
    assert TURNS[0] in history.read_text()
    assert models["summarizer"].requests


def test_a_link_in_the_history_directory_leads_no_history_where_the_lists_deny(
        spec_dir: Any, tmp_path: Path) -> None:
    """alice's folder, which the `write` list allows, is a symbolic link (made by a person, or
    by a command on a shell backend) to a folder it denies: the history is judged where it
    would land, as the file tools judge a link, so nothing is written there."""
    spec_dir(ALICE_ONLY)
    history = tmp_path / "workspace" / "conversation_history"
    history.mkdir(parents=True)
    (tmp_path / "workspace" / "protected").mkdir()
    (history / "alice").symlink_to("../protected")
    models, failures = _converse("alice")
    assert failures and all("a symbolic link to /protected/s1.md" in f for f in failures)
    assert list((tmp_path / "workspace" / "protected").iterdir()) == []
    assert models["summarizer"].requests == []


def test_a_link_in_the_history_directory_leads_no_history_to_another_users_folder(
        spec_dir: Any, tmp_path: Path) -> None:
    """Without lists: alice's folder linked to bob's would put alice's conversation where
    bob's file tools read it; it is refused, and bob's folder stays his own."""
    spec_dir(SPEC)
    history = tmp_path / "workspace" / "conversation_history"
    (history / "bob").mkdir(parents=True)
    (history / "alice").symlink_to("bob")
    _, failures = _converse("alice")
    assert failures and all("leads to /conversation_history/bob/s1.md" in f for f in failures)
    assert list((history / "bob").iterdir()) == []


def test_run_warns_of_a_denied_history(spec_dir: Any, tmp_path: Path) -> None:
    spec_dir(ALICE_ONLY)
    script = {"messages": TURNS, "replies": {"scribe": REPLIES["scribe"]}}
    (tmp_path / "script.yaml").write_text(json.dumps(script))
    done = CliRunner().invoke(cli, ["run", "spec.yaml", "--script", "script.yaml"])
    assert done.exit_code == 0, done.output
    warned = [line for line in done.output.splitlines() if "summarization failed" in line]
    assert warned and all("Writing /conversation_history/user/" in line and
                          "(its `write` rule)" in line for line in warned)
    assert not (tmp_path / "workspace" / "conversation_history").exists()


# what validate knows statically: every history file name tried at once --------------------

LETTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-~")
FILES = (*((frozenset(c), False) for c in "h/"), (LETTERS, True), (frozenset("/"), False),
         (LETTERS, True), *((frozenset(c), False) for c in ".md"))


@pytest.mark.parametrize(("globs", "some", "every"), [
    (("/h/**",), True, True),
    (("/**/*.md",), True, True),
    (("/notes/**",), False, False),
    (("/h/*/*.txt",), False, False),
    (("/h/alice/*",), True, False),  # one user's folder
    (("/h/[a-z]*/*",), True, False),  # not an id starting with a digit or an escape
    (("/h/[a-z]*/*", "/h/[!a-z]*/*"), True, True),  # together they cover every id
    (("/h/*/?.md",), True, False),  # one-character session ids only
    (("/h/[z-a]/*",), False, False),  # malformed: matches nothing
])
def test_coverage_tells_some_and_every(globs: tuple[str, ...], some: bool, every: bool) -> None:
    from agentspec.contract.globs import coverage, permits

    assert coverage(globs, FILES) == (some, every)
    for user, session in [("alice", "s1"), ("0", "x"), ("~40b", "s")]:  # agrees with permits
        if permits(globs, f"/h/{user}/{session}.md"):
            assert some
        else:
            assert not every


def test_coverage_gives_up_on_a_pattern_too_intricate_to_tell() -> None:
    from agentspec.contract.globs import coverage

    assert coverage(("/h/" + "*a" * 40 + "?" * 30,), FILES) is None


def test_a_route_below_the_history_leaves_the_later_backends_to_run_time(tmp_path: Path
                                                                         ) -> None:
    """`/conversation_history/alice/` routes alice's history to a backend that lets it be
    written: `files`' list, which denies the others', is not every history file's."""
    from agentspec.validate.check import check

    spec = SPEC.replace(
        "files: {type: filesystem, root: ./workspace}",
        "files: {type: filesystem, root: ./workspace, write: [/notes/**]}\n"
        "  alices: {type: filesystem, root: ./alice}\n"
        "  kept: {type: composite, default: files, "
        "routes: {/conversation_history/alice/: alices}}").replace("filesystem: files",
                                                                    "filesystem: kept")
    (tmp_path / "spec.yaml").write_text(spec)
    assert [d.code for d in check(tmp_path / "spec.yaml", environ={}).diagnostics] == []
    (tmp_path / "spec.yaml").write_text(spec.replace("routes: {/conversation_history/alice/: "
                                                     "alices}", "routes: {/other/: alices}"))
    assert [d.code for d in check(tmp_path / "spec.yaml", environ={}).diagnostics] == ["AS324"]
