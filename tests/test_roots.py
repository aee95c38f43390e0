"""Backend roots and sandbox mount sources are opened without following links (issue 21,
items 2 and 3): a directory one sandbox's command swaps for `ln -s /` must never become
another backend's root or mount. Each attack runs as root and as an ordinary user, in a
process of its own; the property tests pin `open_directory` against the kernel."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentspec.runtime.backends import BackendError
from agentspec.runtime.backends.roots import RootError, inside, open_directory
from tests.asuser import run_as, user_dir
from tests.spec_defaults import spec_sandbox

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None,
                                 reason="bubblewrap is not installed (.ci/run installs it)")

ATTACK = r"""
import json, os, sys
from agentspec.contract.virtual_paths import BackendError
from agentspec.runtime.backends.filesystem import FilesystemBackend
from agentspec.runtime.backends.sandbox import Limits, SandboxBackend

def spec_sandbox(root, **given):  # run as another user, without the spec models: own values
    limits = Limits(processes=256, file_bytes=1 << 30, memory_bytes=4096 << 20,
                    tmp_bytes=1024 << 20, workspace_bytes=10240 << 20)
    return SandboxBackend(root, max_output_bytes=100_000, limits=limits, **given)

base, token, secret = sys.argv[1:4]
out = {}

def attempt(name, call):
    try:
        out[name] = ["done", str(call())]
    except BackendError as error:
        out[name] = ["refused", str(error)]

for name in ("outer/inner", "outer/files", "outer/deep/etc", "a/shared", "b"):
    os.makedirs(f"{base}/{name}", exist_ok=True)
outer = spec_sandbox(f"{base}/outer", timeout=60)
inner = spec_sandbox(f"{base}/outer/inner", timeout=60)
deep = FilesystemBackend(f"{base}/outer/deep/etc")
a = spec_sandbox(f"{base}/a", timeout=60)
b = spec_sandbox(f"{base}/b", timeout=60, mounts=[(f"{base}/a/shared", "/data")])
# the outer sandbox's command turns directories of its root into links to the host's `/`
out["swap"] = outer.execute("for d in inner files deep; do mv $d $d.old && ln -s / $d; done; "
                            "ls -l").output
out["swap_a"] = a.execute("mv shared shared.old && ln -s / shared && echo ok").output
# item 3: the inner sandbox's root, a filesystem root made after a restart, a live one
attempt("inner", lambda: inner.execute(
    f"echo x > /workspace/tmp/ESCAPED_WRITE_{token}; cat /workspace{secret}").output)
attempt("restart", lambda: FilesystemBackend(f"{base}/outer/files").write(
    f"/tmp/ESCAPED_FILES_{token}", "x"))
attempt("deep", lambda: deep.read("/hostname"))
# item 2: a mount source in another sandbox's root
attempt("mount", lambda: b.execute(f"cat /data{secret}").output)
print(json.dumps(out))
"""


@needs_bwrap
@pytest.mark.parametrize("as_user", [False, True], ids=["root", "user"])
def test_a_directory_swapped_for_a_link_to_root_is_never_a_root_or_a_mount(
        tmp_path: Path, as_user: bool) -> None:
    base = user_dir() if as_user else tmp_path
    try:
        token = secrets.token_hex(6)
        secret_value = "s3cr3t-" + token
        secret = base / "secret.txt"
        secret.write_text(secret_value)
        if as_user:
            os.chown(secret, base.stat().st_uid, base.stat().st_gid)
        done = run_as(ATTACK, str(base / "project"), token, str(secret), user=as_user)
        assert done.returncode == 0, done.stderr
        found = json.loads(done.stdout.splitlines()[-1])
        assert "inner.old" in found["swap"] and found["swap_a"].strip() == "ok"  # it happened
        for name in ("inner", "restart", "deep", "mount"):
            outcome, message = found[name]
            assert outcome == "refused", (name, message)
            assert "symbolic link" in message, (name, message)
            assert secret_value not in message
        assert not list(Path("/tmp").glob(f"ESCAPED_*_{token}"))
    finally:
        for left in Path("/tmp").glob("ESCAPED_*"):
            left.unlink()
        if as_user:
            shutil.rmtree(base, ignore_errors=True)


@needs_bwrap
def test_the_sandbox_binds_the_directory_it_checked(tmp_path: Path) -> None:
    """Swapped after the check (between the walk and bwrap's bind, here by hand): bwrap
    binds the held descriptor, so the command still sees the checked directory."""
    from agentspec.runtime.backends import sandbox

    root = tmp_path / "root"
    root.mkdir()
    (root / "mine.txt").write_text("checked\n")
    box = spec_sandbox(root, timeout=60)
    real = sandbox._held_directories

    def swap_after_opening(*args: object) -> object:
        held = real(*args)  # type: ignore[arg-type]
        opened = held.__enter__()
        root.rename(tmp_path / "moved")
        root.symlink_to("/")
        return _Entered(held, opened)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sandbox, "_held_directories", swap_after_opening)
        result = box.execute("cat mine.txt; ls /workspace/etc/hostname")
    assert "checked" in result.output
    assert "No such file" in result.output


class _Entered:
    def __init__(self, manager: object, value: object) -> None:
        self.manager, self.value = manager, value

    def __enter__(self) -> object:
        return self.value

    def __exit__(self, *exc: object) -> None:
        self.manager.__exit__(*exc)  # type: ignore[attr-defined]


def test_a_mount_source_in_another_backends_root_is_refused(tmp_path: Path) -> None:

    (tmp_path / "other/shared").mkdir(parents=True)
    with pytest.raises(BackendError, match="inside the writable root"):
        spec_sandbox(tmp_path / "box", mounts=[(str(tmp_path / "other/shared"), "/d")],
                       writable_roots=[str(tmp_path / "other")])
    (tmp_path / "ref").symlink_to(tmp_path / "other/shared")
    with pytest.raises(RootError, match="symbolic link"):
        spec_sandbox(tmp_path / "box", mounts=[(str(tmp_path / "ref"), "/d")])


# -- open_directory against the kernel ------------------------------------------------------
PARTS = st.lists(st.sampled_from(["a", "b", "l", "f", ".", ".."]), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=PARTS)
def test_open_directory_opens_what_the_kernel_finds_exactly_when_no_link_is_on_the_way(
        tmp_path_factory: pytest.TempPathFactory, parts: list[str]) -> None:
    """In a tree with directories `a`, `a/b`, a file `a/f` and links `l` (to `a`) at each
    level: a path is opened iff lexically normalized it names a directory and none of its
    names is a link; then it is the directory the kernel finds; else RootError."""
    base = tmp_path_factory.mktemp("roots")
    (base / "a/b").mkdir(parents=True)
    (base / "a/f").write_text("x")
    (base / "l").symlink_to("a")
    (base / "a/l").symlink_to("b")
    path = os.path.normpath(os.path.join(base, *parts))
    names = Path(path).relative_to("/").parts
    through_link = any(Path("/", *names[:i + 1]).is_symlink() for i in range(len(names)))
    try:
        fd = open_directory(path)
    except RootError as error:
        assert through_link or not Path(path).is_dir(), error
        return
    try:
        assert not through_link and Path(path).is_dir()
        assert os.path.samestat(os.fstat(fd), os.stat(path))
        assert stat.S_ISDIR(os.fstat(fd).st_mode)
    finally:
        os.close(fd)


@given(path=st.lists(st.sampled_from(["x", "y", "xy"]), max_size=4).map(
    lambda p: "/" + "/".join(p)),
    roots=st.lists(st.lists(st.sampled_from(["x", "y", "xy"]), min_size=1, max_size=3).map(
        lambda p: "/" + "/".join(p)), max_size=3))
def test_inside_is_a_prefix_of_whole_names(path: str, roots: list[str]) -> None:
    found = inside(path, roots)
    expected = [r for r in roots if Path(path).is_relative_to(r)]
    assert found == (expected[0] if expected else None)


# -- validate: roots and mount sources compared where they lead (items 2, 3, 4) --------------
def _check(project: Path, backends: str, *, agent_backend: str = "box",
           extra: str = "") -> list[tuple[str, str]]:
    """(code, the spec text it points at) of each error of a spec with these backends."""
    from agentspec.validate.check import check

    (project / ".git").mkdir(parents=True, exist_ok=True)
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    path = project / "spec.yaml"
    path.write_text(f"agentspec: 1\nname: box_app\n{extra}backends:\n{backends}agents:\n"
                    "  helper:\n    model: gemini-2.5-flash\n    instruction: Work.\n"
                    f"    filesystem: {agent_backend}\n")
    lines = path.read_text().splitlines()
    return [(d.code, lines[d.span.start.line - 1][d.span.start.col - 1:].split(",")[0]
             .split("}")[0]) for d in check(path, environ={}).diagnostics if d.is_error]


def test_a_mount_source_written_absolute_or_through_a_link_is_still_in_the_root(
        tmp_path: Path) -> None:
    """Item 2: compared as written, `/abs/.../other/shared` and `./ref -> other/shared`
    passed AS260; the other sandbox swaps `shared` for `ln -s /`."""
    project = tmp_path / "project"
    (project / "other/shared").mkdir(parents=True)
    (project / "work").mkdir()
    (project / "ref").symlink_to("other/shared")
    other = "  other: {type: sandbox, root: ./other}\n"
    absolute = _check(project, other + "  box:\n    type: sandbox\n    root: ./work\n"
                      f"    mounts: [{{source: {project}/other/shared, target: /d}}]\n")
    assert absolute == [("AS260", f"{project}/other/shared")]
    linked = _check(project, other + "  box:\n    type: sandbox\n    root: ./work\n"
                    "    mounts: [{source: ./ref, target: /d}]\n")
    assert linked == [("AS260", "./ref"), ("AS292", "./ref")]


@pytest.mark.parametrize(("backends", "expected"), [
    # item 3: a sandbox inside a sandbox, a filesystem root inside a sandbox's
    ("  box: {type: sandbox, root: ./outer}\n  in: {type: sandbox, root: ./outer/inner}\n",
     [("AS290", "./outer/inner")]),
    ("  box: {type: sandbox, root: ./outer}\n  fs: {type: filesystem, root: outer/x/../in}\n",
     [("AS290", "outer/x/../in")]),
    ("  box: {type: sandbox, root: ./outer}\n  sh: {type: shell, root: ./outer/sh}\n",
     [("AS290", "./outer/sh")]),
    # a filesystem backend never makes links; two backends may share a root
    ("  box: {type: sandbox, root: ./outer/inner}\n  fs: {type: filesystem, root: ./outer}\n",
     []),
    ("  box: {type: sandbox, root: ./outer}\n  two: {type: sandbox, root: outer}\n", []),
    ("  box: {type: sandbox, root: ./outer}\n  fs: {type: filesystem, root: ./outerx}\n", []),
])
def test_a_root_inside_a_sandboxs_root_is_an_error(
        tmp_path: Path, backends: str, expected: list[tuple[str, str]]) -> None:
    assert _check(tmp_path / "project", backends) == expected


def test_a_root_inside_a_sandboxs_root_through_an_absolute_path_or_a_link(
        tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "outer/inner").mkdir(parents=True)
    (project / "alias").symlink_to("outer/inner")
    found = _check(project, "  box: {type: sandbox, root: ./outer}\n"
                   f"  fs: {{type: filesystem, root: {project}/outer/inner}}\n"
                   "  ln: {type: filesystem, root: ./alias}\n", agent_backend="fs")
    assert found == [("AS290", f"{project}/outer/inner"), ("AS290", "./alias"),
                     ("AS292", "./alias")]


@pytest.mark.parametrize(("root", "setup", "extra", "expected"), [
    (".", "", "", [("AS291", ".")]),  # the spec itself
    ("./tools", "tools/__init__.py", "", [("AS291", "./tools")]),  # a python module
    ("./box_app", "", "", [("AS291", "./box_app")]),  # the generated package
    ("./state", "", "sessions: sqlite:///state/sessions.db\n", [("AS291", "./state")]),
    ("./workspace", "", "", []),
])
def test_a_sandbox_root_holding_the_projects_files_is_an_error_unless_allowed(
        tmp_path: Path, root: str, setup: str, extra: str,
        expected: list[tuple[str, str]]) -> None:
    """Item 4: a command edits the tools module (or the spec, the package, a store) and the
    next load on the host runs it unsandboxed."""
    project = tmp_path / "project"
    project.mkdir()
    if setup:
        (project / setup).parent.mkdir(parents=True, exist_ok=True)
        (project / setup).write_text("def tool():\n    return 1\n")
    tools = ("tools:\n  t: {python: tools:tool}\n" if setup else "") + extra
    box = f"  box:\n    type: sandbox\n    root: {root}\n"
    assert _check(project, box, extra=tools) == expected
    assert _check(project, box + "    allow_project_files: true\n", extra=tools) == []


@pytest.mark.parametrize("path", ["relative/dir", "/tmp/a\x00b", "/tmp/" + "x" * 300,
                                  "/etc/hostname/below"])
def test_a_path_that_cannot_be_a_root_is_a_root_error_not_a_crash(path: str) -> None:
    with pytest.raises(RootError):
        open_directory(path)
