"""Path permissions and symbolic links: a link inside a backend's root, under a path the
`read` / `write` lists allow, whose target is a path they deny, is refused (the path is
judged as given and as its links resolve), on filesystem, shell and sandbox backends and
through a composite route; links to allowed paths still work (issue 23 item 2)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from agentspec.contract.backends import CompositeDef, from_data, to_data
from agentspec.contract.frozen import FrozenMap
from agentspec.runtime.backends import BackendError
from agentspec.runtime.backends.filesystem import FilesystemBackend
from agentspec.runtime.backends.permissions import Permitted
from agentspec.runtime.harness.filesystem import backend_factory
from tests.spec_defaults import spec_sandbox_data

READ = ("/docs/**",)
WRITE = ("/docs/**",)


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "a.md").write_text("public")
    (root / "secret.txt").write_text("the secret")
    (root / "docs" / "other.md").write_text("also public")
    return root


def _links(root: Path) -> None:
    os.symlink("../secret.txt", root / "docs" / "leak.md")  # relative, to a denied file
    os.symlink(str(root / "secret.txt"), root / "docs" / "abs.md")  # absolute, inside
    os.symlink("..", root / "docs" / "up")  # a directory link: /docs/up/secret.txt
    os.symlink("other.md", root / "docs" / "fine.md")  # to an allowed file


def _guarded(root: Path) -> Permitted:
    return Permitted(FilesystemBackend(root), "ws", READ, WRITE)


def test_a_link_under_an_allowed_path_to_a_denied_one_is_refused(tmp_path: Path) -> None:
    root = _root(tmp_path)
    _links(root)
    guarded = _guarded(root)
    for path in ("/docs/leak.md", "/docs/abs.md", "/docs/up/secret.txt"):
        with pytest.raises(BackendError, match="symbolic link to /secret.txt"):
            guarded.read(path)
        with pytest.raises(BackendError, match="symbolic link to /secret.txt"):
            guarded.write(path, "overwritten")
        with pytest.raises(BackendError, match="symbolic link to /secret.txt"):
            guarded.edit(path, "secret", "SECRET")
    assert (root / "secret.txt").read_text() == "the secret"
    assert guarded.read("/docs/fine.md") == "also public"  # a link to an allowed file
    listed = {entry.path for entry in guarded.ls("/docs")}
    assert "/docs/leak.md" not in listed and "/docs/abs.md" not in listed
    assert "/docs/fine.md" in listed
    assert "the secret" not in str(guarded.grep("secret"))
    assert "/docs/leak.md" not in guarded.glob("**")


def test_unguarded_the_same_links_are_followed(tmp_path: Path) -> None:
    """Without lists, a link inside the root is followed as before (the check is the lists')."""
    root = _root(tmp_path)
    _links(root)
    assert FilesystemBackend(root).read("/docs/leak.md") == "the secret"


def test_a_link_made_by_a_sandboxed_command_is_refused(tmp_path: Path) -> None:
    """The agent's own `execute` makes the link (on a sandbox whose file tools have lists;
    validate warns that commands are not bound, AS317): the file tools still refuse it."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    root = _root(tmp_path)
    data = {**spec_sandbox_data(root), "read": list(READ), "write": list(WRITE)}
    files = backend_factory("box", {"box": data})(SimpleNamespace(state={}, user_id="u"))
    done = files.execute("ln -s ../secret.txt docs/made.md && echo linked")  # type: ignore[attr-defined]
    assert "linked" in done.output, done.output
    with pytest.raises(BackendError, match="symbolic link to /secret.txt"):
        files.read("/docs/made.md")


def test_a_link_made_by_a_shell_command_is_refused(tmp_path: Path) -> None:
    from agentspec.language.backends import ShellBackend as ShellSpec

    root = _root(tmp_path)
    data = ShellSpec.model_validate({"type": "shell", "root": str(root), "read": list(READ),
                                     "write": list(WRITE)}).model_dump(exclude_none=True)
    files = backend_factory("sh", {"sh": data})(SimpleNamespace(state={}, user_id="u"))
    done = files.execute("ln -s ../secret.txt docs/made.md && echo linked")  # type: ignore[attr-defined]
    assert "linked" in done.output, done.output
    with pytest.raises(BackendError, match="symbolic link to /secret.txt"):
        files.read("/docs/made.md")


def test_through_a_composite_route_both_lists_judge_the_resolved_path(tmp_path: Path) -> None:
    root = _root(tmp_path)
    _links(root)
    definitions = {
        "front": to_data(CompositeDef(default="scratch", routes=FrozenMap({"/project/": "ws"}),
                                      conversation_files=None, read=("/project/docs/**",),
                                      write=None)),
        "scratch": {"type": "state"},
        "ws": {"type": "filesystem", "root": str(root)}}
    files = backend_factory("front", definitions)(SimpleNamespace(state={}, user_id="u"))
    assert files.read("/project/docs/a.md") == "public"
    with pytest.raises(BackendError, match="symbolic link to /project/secret.txt"):
        files.read("/project/docs/leak.md")
    # the route's own lists judge the path inside the route's backend
    definitions["ws"] = {**definitions["ws"], "read": list(READ)}
    definitions["front"] = {**definitions["front"]}
    definitions["front"].pop("read")
    files = backend_factory("front", definitions)(SimpleNamespace(state={}, user_id="u"))
    with pytest.raises(BackendError, match="symbolic link to /secret.txt"):
        files.read("/project/docs/leak.md")
    assert from_data(definitions["ws"]).read == READ  # type: ignore[union-attr]


def test_a_link_into_another_users_folder_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "large_tool_results" / "bob").mkdir(parents=True)
    (root / "large_tool_results" / "ann").mkdir(parents=True)
    (root / "large_tool_results" / "bob" / "r1").write_text("bob's result")
    os.symlink("../bob/r1", root / "large_tool_results" / "ann" / "peek")
    files = backend_factory("ws", {"ws": {"type": "filesystem", "root": str(root)}})(
        SimpleNamespace(state={}, user_id="ann"))
    with pytest.raises(BackendError, match="another user's"):
        files.read("/large_tool_results/ann/peek")
