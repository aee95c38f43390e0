"""Directory backends under attack (issue 12, item 8): a parent directory swapped for a symbolic
link in the middle of an operation, hard links to files outside, and random trees of links.

The swap is simulated deterministically: a hook runs the attacker's two moves (rename the
directory away, put a link to the outside in its place) just before the k-th filesystem call
of an operation, for every k, so every gap between a check and a use is tried.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentspec.compiler import build_objects, compile_spec, emit_package
from agentspec.runtime.backends import BackendError
from agentspec.runtime.backends.filesystem import FilesystemBackend
from tests.buildkit import scripted_turn
from tests.spec_defaults import spec_shell

SECRET = "TOP-SECRET-SENTINEL"
CALLS = ("open", "stat", "lstat", "readlink", "scandir", "mkdir", "replace", "fwalk")


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "sub" / "notes.txt").write_text("fine\n")
    (root / "sub" / "deeper" / "notes.txt").write_text("fine\n")
    outside.mkdir()
    (outside / "notes.txt").write_text(SECRET + "\n")
    (outside / "deeper").mkdir()
    (outside / "deeper" / "notes.txt").write_text(SECRET + "\n")
    return {"root": root, "outside": outside}


class Attacker:
    """Swaps `root/sub` for a link to `outside` just before the k-th filesystem call."""

    def __init__(self, tree: dict[str, Path], k: int) -> None:
        self.tree, self.k, self.calls, self.done = tree, k, 0, False
        self.real = {name: getattr(os, name) for name in CALLS}

    def hook(self, name: str) -> Callable[..., Any]:
        real = self.real[name]

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.calls == self.k and not self.done:
                self.done = True
                root = self.tree["root"]
                self.real["replace"](root / "sub", root / "sub_moved")
                os.symlink(self.tree["outside"], root / "sub")
            return real(*args, **kwargs)
        return call

    def __enter__(self) -> Attacker:
        for name in CALLS:
            setattr(os, name, self.hook(name))
        return self

    def __exit__(self, *exc: Any) -> None:
        for name, real in self.real.items():
            setattr(os, name, real)


OPERATIONS: dict[str, Callable[[FilesystemBackend], Any]] = {
    "read": lambda b: b.read("/sub/notes.txt"),
    "read deeper": lambda b: b.read("/sub/deeper/notes.txt"),
    "ls": lambda b: [(f.path, f.size) for f in b.ls("/sub")],
    "glob": lambda b: b.glob("**/*.txt", "/sub"),
    "grep": lambda b: [(m.path, m.line) for m in b.grep(SECRET[:6])],
    "grep under": lambda b: [(m.path, m.line) for m in b.grep("TOP", "/sub/deeper")],
    "write": lambda b: b.write("/sub/deeper/new.txt", "pwned"),
    "edit": lambda b: b.edit("/sub/notes.txt", "fine", "pwned"),
}


def _outside(tree: dict[str, Path]) -> dict[str, str]:
    return {str(p.relative_to(tree["outside"])): p.read_text()
            for p in sorted(tree["outside"].rglob("*")) if p.is_file()}


@pytest.mark.parametrize("backend_kind", [FilesystemBackend, spec_shell],
                         ids=["FilesystemBackend", "ShellBackend"])
@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_a_parent_swapped_for_a_link_mid_operation_never_leads_out(
        tree: dict[str, Path], operation: str,
        backend_kind: Callable[[Path], FilesystemBackend]) -> None:
    before = _outside(tree)
    swapped_at = []
    for k in range(1, 40):
        for leftover in ("sub", "sub_moved"):  # the tree as it was
            path = tree["root"] / leftover
            if path.is_symlink():
                path.unlink()
        if (tree["root"] / "sub_moved").exists():
            (tree["root"] / "sub_moved").rename(tree["root"] / "sub")
        backend = backend_kind(tree["root"])
        with Attacker(tree, k) as attacker:
            try:
                result: Any = OPERATIONS[operation](backend)
            except BackendError as error:
                result = str(error)
        assert SECRET not in repr(result), (k, result)
        assert _outside(tree) == before, k  # nothing outside was written
        if not attacker.done:
            break  # k is past the operation's last call: every gap was tried
        swapped_at.append(k)
    assert swapped_at  # the attack happened at least once


@pytest.fixture
def linked(tree: dict[str, Path]) -> dict[str, Path]:
    os.link(tree["outside"] / "notes.txt", tree["root"] / "hard.txt")
    return tree


def test_a_hard_link_to_an_outside_file_is_not_read(linked: dict[str, Path]) -> None:
    backend = FilesystemBackend(linked["root"])
    with pytest.raises(BackendError, match="hard links"):
        backend.read("/hard.txt")
    with pytest.raises(BackendError, match="hard links"):
        backend.edit("/hard.txt", SECRET, "pwned")
    assert backend.grep(SECRET) == []
    assert "/hard.txt" in backend.glob("*.txt")  # its name is no secret
    backend.write("/hard.txt", "replaced")  # a new file takes the name; the outside one stays
    assert (linked["outside"] / "notes.txt").read_text() == SECRET + "\n"
    assert backend.read("/hard.txt") == "replaced"


def test_a_backend_that_allows_hard_links_reads_them(linked: dict[str, Path]) -> None:
    backend = spec_shell(linked["root"], hard_links=True)
    assert backend.read("/hard.txt") == SECRET + "\n"
    assert [m.path for m in backend.grep(SECRET)] == ["/hard.txt"]


def test_hard_links_allow_reaches_the_built_agent(linked: dict[str, Path],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    spec = linked["root"].parent / "spec.yaml"
    text = """\
        agentspec: 1
        name: reader
        backends:
          work: {type: filesystem, root: ./root%s}
        agents:
          lead: {model: gemini-2.5-flash, instruction: Read., filesystem: work}
        """
    replies = {"lead": [{"call": "read_file", "args": {"file_path": "/hard.txt"}},
                        {"text": "Read."}]}
    results = []
    for setting in ("", ", hard_links: allow"):
        spec.write_text(textwrap.dedent(text % setting))
        compiled = compile_spec(spec, environ={})
        app, problems = build_objects(compiled)
        assert problems == []
        [(_, result)] = scripted_turn(app, replies).results
        results.append(str(result))
        source = emit_package(compiled, spec.parent)[PurePosixPath("reader/agent.py")]
        assert ("'hard_links': 'allow'" in source) == bool(setting)  # the package too
    assert "hard links" in results[0] and SECRET not in results[0]
    assert SECRET in results[1]


# -- random trees of links --------------------------------------------------------------------

NAMES = ["a", "b", "c"]
targets = st.one_of(
    st.sampled_from(["..", "../..", "/", "/etc", "OUTSIDE", "OUTSIDE/notes.txt", "ROOT",
                     "ROOT/a", "ROOT/..", "a/../..", "../outside/notes.txt", "."]),
    st.lists(st.sampled_from([*NAMES, "..", ".", "notes.txt"]), min_size=1, max_size=4)
    .map("/".join))
entries = st.lists(st.tuples(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3),
                             st.sampled_from(["dir", "file", "link", "hardlink"]), targets),
                   max_size=8)
paths = st.lists(st.sampled_from([*NAMES, "..", "notes.txt", "x"]), max_size=5).map(
    lambda parts: "/" + "/".join(parts))


def _build(root: Path, outside: Path, layout: list[tuple[list[str], str, str]]) -> None:
    for parts, kind, target in layout:
        path = root.joinpath(*parts)
        if os.path.lexists(path) or not path.parent.is_dir() or path.parent.is_symlink():
            continue
        if kind == "dir":
            path.mkdir()
        elif kind == "file":
            path.write_text("inside\n")
        elif kind == "hardlink":
            os.link(outside / "notes.txt", path)
        else:
            os.symlink(target.replace("OUTSIDE", str(outside)).replace("ROOT", str(root)), path)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(layout=entries, path=paths)
def test_no_tree_of_links_leads_out(tmp_path_factory: pytest.TempPathFactory,
                                   layout: list[tuple[list[str], str, str]], path: str) -> None:
    base = tmp_path_factory.mktemp("links")
    root, outside = base / "root", base / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "notes.txt").write_text(SECRET + "\n")
    _build(root, outside, layout)
    backend = FilesystemBackend(root)
    for operation in _operations(backend, path):
        try:
            result = operation()
        except (BackendError, ValueError) as error:
            result = str(error)
        assert SECRET not in repr(result)
    assert [p.name for p in outside.iterdir()] == ["notes.txt"]
    assert (outside / "notes.txt").read_text() == SECRET + "\n"


def _operations(backend: FilesystemBackend, path: str) -> Iterator[Callable[[], Any]]:
    yield lambda: backend.read(path)
    yield lambda: [(f.path, f.size) for f in backend.ls(path)]
    yield lambda: backend.glob("**", path)
    yield lambda: [(m.path, m.line) for m in backend.grep("TOP", path)]
    yield lambda: backend.edit(path, SECRET, "pwned")
    yield lambda: backend.write(path, "pwned")
    yield lambda: backend.write(path + "/x", "pwned")


# -- issue 21, item 16: a tree deeper than the interpreter's stack ---------------------------
def _deep_tree(root: Path, levels: int) -> None:
    """`levels` nested directories `d` with a file `f` at the bottom, made from descriptors
    (the path is longer than the kernel's PATH_MAX), as a sandboxed command can."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(levels):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.close(os.open("f", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)


def _remove_deep_tree(root: Path) -> None:
    """Removes what `_deep_tree` made, bottom up (pytest's own cleanup recurses, and would
    fail on it in a later session)."""
    fds = [os.open(root, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        while "d" in os.listdir(fds[-1]):
            fds.append(os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
        for name in os.listdir(fds[-1]):
            os.unlink(name, dir_fd=fds[-1])
        while len(fds) > 1:
            os.close(fds.pop())
            os.rmdir("d", dir_fd=fds[-1])
    finally:
        for fd in fds:
            os.close(fd)


@pytest.fixture
def deep_root(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "root"
    root.mkdir()
    try:
        yield root
    finally:
        _remove_deep_tree(root)


def test_a_3000_level_tree_is_a_plain_error_not_a_recursion_error(deep_root: Path) -> None:
    root = deep_root
    (root / "top.txt").write_text("needle\n")
    _deep_tree(root, 3000)
    backend = FilesystemBackend(root)
    for call in (lambda: backend.glob("**"), lambda: backend.grep("needle"),
                 lambda: backend.glob("*.txt", "/d")):
        with pytest.raises(BackendError, match="more than 256 directories below /"):
            call()
    assert backend.ls("/") and backend.read("/top.txt") == "needle\n"  # still usable


def test_a_tree_as_deep_as_the_limit_is_searched_whole(deep_root: Path) -> None:
    from agentspec.runtime.backends.filesystem import MAX_DEPTH

    root = deep_root
    _deep_tree(root, MAX_DEPTH)
    assert FilesystemBackend(root).glob("f") == ["/d" * MAX_DEPTH + "/f"]


def _reference_walk(root: Path) -> list[str]:
    out: list[str] = []

    def visit(directory: Path, base: str) -> None:
        entries = sorted(os.listdir(directory))
        out.extend(f"{base}/{n}" for n in entries
                   if not (directory / n).is_dir() or (directory / n).is_symlink())
        for name in entries:
            if (directory / name).is_dir() and not (directory / name).is_symlink():
                visit(directory / name, f"{base}/{name}")

    visit(root, "")
    return out


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(layout=st.lists(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=6),
                       max_size=12))
def test_the_walk_finds_what_a_recursive_walk_finds_in_its_order(
        tmp_path_factory: pytest.TempPathFactory, layout: list[list[str]]) -> None:
    root = tmp_path_factory.mktemp("walk")
    for parts in layout:
        *dirs, name = parts
        directory = root.joinpath(*dirs)
        if any(p.is_file() for p in (directory, *directory.parents) if p != root):
            continue
        directory.mkdir(parents=True, exist_ok=True)
        target = directory / (name + ".txt")
        if not target.exists():
            target.write_text("x\n")
    assert FilesystemBackend(root).glob("**") == _reference_walk(root)
