"""Per-user folders (issue 21, item 6): one user's file tools neither reach nor list another
user's evicted large results or conversation history, however the path is spelt."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentspec.runtime.backends import BackendError
from agentspec.runtime.harness.files import _glob, _grep, _ls
from agentspec.runtime.harness.filesystem import backend_factory
from agentspec.runtime.harness.scope import register_private
from agentspec.runtime.user_folders import path_segment


def _setup(tmp_path: Path) -> tuple[Any, Path]:
    root = tmp_path / "work"
    definitions = {"files": {"type": "filesystem", "root": str(root)},
                   "mixed": {"type": "composite", "default": "files",
                             "routes": {"/archive": "files"}}}
    register_private(str(root), "/conversation_history")
    alice = path_segment("alice@example.com")
    for folder in ("large_tool_results", "conversation_history"):
        (root / folder / alice).mkdir(parents=True)
        (root / folder / alice / "secret.txt").write_text("alice's locker code is 4417\n")
    (root / "shared.txt").write_text("everyone may read this\n")
    return definitions, root


def _as(definitions: Any, user: str, backend: str = "files") -> Any:
    return backend_factory(backend, definitions)(
        SimpleNamespace(user_id=user, state={}))  # type: ignore[arg-type]


@pytest.mark.parametrize("intruder", ["bob", "alice_example_com-ff8d9819fc0e12bf",
                                      "Alice@example.com", "alice~40example.com"])
def test_another_user_can_neither_read_nor_list_them(tmp_path: Path, intruder: str) -> None:
    """Attack: with one backend for all users, Bob's agent listed `/large_tool_results/`
    and the history directory and read Alice's files."""
    definitions, _ = _setup(tmp_path)
    alice = path_segment("alice@example.com")
    for backend, prefix in (("files", ""), ("mixed", "/archive")):
        bob = _as(definitions, intruder, backend)
        for folder in ("/large_tool_results", "/conversation_history"):
            path = f"{prefix}{folder}/{alice}/secret.txt"
            with pytest.raises(BackendError, match="another user"):
                bob.read(path)
            with pytest.raises(BackendError, match="another user"):
                bob.write(path, "overwritten")
            with pytest.raises(BackendError, match="another user"):
                bob.ls(f"{prefix}{folder}/{alice}")
            with pytest.raises(BackendError, match="another user"):  # case-insensitive disks
                bob.read(f"{prefix}{folder.upper()}/{alice.upper()}/secret.txt")
            assert alice not in str(_ls(bob, f"{prefix}{folder}"))
        assert "locker" not in str(_grep(bob, "4417", "/", None, "content"))
        assert "secret.txt" not in str(_glob(bob, "**/*.txt", "/"))
        assert "shared.txt" in str(_glob(bob, "**/*.txt", "/"))
    owner = _as(definitions, "alice@example.com")
    assert "4417" in owner.read(f"/large_tool_results/{alice}/secret.txt")
    assert "4417" in str(_grep(owner, "4417", "/", None, "content"))


_NOISE = st.sampled_from(["", ".", "x/..", "large_tool_results/..", "./.", "y/z/../.."])


@given(noise=st.lists(_NOISE, min_size=4, max_size=4),
       folder=st.sampled_from(["large_tool_results", "conversation_history"]))
def test_no_spelling_of_a_path_reaches_another_users_file(noise: list[str],
                                                          folder: str) -> None:
    import tempfile

    parts = [folder, path_segment("alice@example.com"), "secret.txt"]
    pairs = zip(noise, [*parts, ""], strict=True)
    path = "/" + "/".join(part for pair in pairs for part in pair if part)

    with tempfile.TemporaryDirectory() as tmp:
        definitions, _ = _setup(Path(tmp))
        bob = _as(definitions, "bob")
        try:
            text = bob.read(path)
        except BackendError:
            return
        assert "4417" not in text


def test_a_shared_backend_shows_every_users_folder(tmp_path: Path) -> None:
    definitions, _ = _setup(tmp_path)
    definitions["files"]["conversation_files"] = "shared"
    alice = path_segment("alice@example.com")
    bob = _as(definitions, "bob")
    assert "4417" in bob.read(f"/large_tool_results/{alice}/secret.txt")
    assert alice in str(_ls(bob, "/conversation_history"))


SPEC = """\
agentspec: 1
name: desk
backends:
  work: {{type: filesystem, root: ./work{setting}}}
agents:
  lead:
    model: gemini-2.5-flash
    instruction: Read the project.
    filesystem: work
    tool_result_limit: {{tokens: 2000}}
"""


@pytest.mark.parametrize("setting", ["", ", conversation_files: shared",
                                     ", conversation_files: private"])
def test_the_setting_reaches_the_live_app_and_the_generated_package(tmp_path: Path,
                                                                     setting: str) -> None:
    import asyncio

    from agentspec.compiler import build_objects, compile_spec, emit_package

    (tmp_path / "spec.yaml").write_text(SPEC.format(setting=setting))
    compiled = compile_spec(tmp_path / "spec.yaml", environ={})
    assert compiled.ok, compiled.diagnostics
    source = "".join(emit_package(compiled, tmp_path / "out").values())
    shared = "shared" in setting
    assert ("'conversation_files': 'shared'" in source) == shared
    app, problems = build_objects(compiled)
    assert problems == []
    toolset = next(t for t in app.root_agent.tools if type(t).__name__ == "FileToolset")
    alice = path_segment("alice")
    (tmp_path / "work" / "large_tool_results" / alice).mkdir(parents=True)
    (tmp_path / "work" / "large_tool_results" / alice / "r.txt").write_text("4417\n")
    read = next(tool for tool in toolset._tools if tool.name == "read_file")
    answer = asyncio.run(read.func(file_path=f"/large_tool_results/{alice}/r.txt",
                                   tool_context=SimpleNamespace(user_id="bob", state={})))
    assert ("4417" in str(answer)) == shared, answer


def test_open_backend_keeps_another_users_history_out_of_reach(tmp_path: Path) -> None:
    """`api.open_backend` (a program moving a user's files in and out) applies the per-user
    folders as the agents' file tools do: the history directory's too, which was private only
    in a process that had built the app."""
    from agentspec.api import open_backend

    (tmp_path / "spec.yaml").write_text(
        "agentspec: 1\nname: lockers\nmodels:\n  main: {id: gemini-2.5-flash}\n"
        "backends:\n  files: {type: filesystem, root: ./workspace}\n"
        "agents:\n  scribe:\n    model: main\n    instruction: Keep notes.\n"
        "    filesystem: files\n"
        "summarization: {trigger: {tokens: 60}, history: /conversation_history}\n")
    bobs = tmp_path / "workspace" / "conversation_history" / "bob"
    bobs.mkdir(parents=True)
    (bobs / "s1.md").write_text("bob's locker code is 4417\n")
    alice = open_backend(tmp_path / "spec.yaml", "scribe", user_id="alice")
    [got] = alice.download_files(["/conversation_history/bob/s1.md"])
    assert got.content is None and "another user's" in str(got.error)
    bob = open_backend(tmp_path / "spec.yaml", "scribe", user_id="bob")
    [own] = bob.download_files(["/conversation_history/bob/s1.md"])
    assert own.content == b"bob's locker code is 4417\n"
