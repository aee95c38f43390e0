"""Backends: behaviour, confinement (escape attempts) and the shell's limits."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentspec.runtime.backends import (
    GREP_LIMIT,
    Backend,
    BackendError,
    ShellCapable,
    glob_match,
    normalize,
)
from agentspec.runtime.backends.composite import CompositeBackend
from agentspec.runtime.backends.filesystem import FilesystemBackend
from agentspec.runtime.backends.state import StateBackend
from tests.spec_defaults import spec_shell

SECRET = "TOP-SECRET-SENTINEL"


# -- normalize ------------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "clean"), [
    ("a.md", "/a.md"), ("/a//b/./c.md", "/a/b/c.md"), ("/a/b/../c", "/a/c"), ("", "/"),
    ("/", "/"), ("//x/", "/x"), ("%2e%2e/x", "/%2e%2e/x"), ("..\\x", "/..\\x"),
])
def test_normalize(raw: str, clean: str) -> None:
    assert normalize(raw) == clean


@pytest.mark.parametrize("raw", ["..", "/../x", "a/../../x", "a\x00b", "x" * 5000,
                                 "/" + "d/" * 3000])
def test_normalize_refuses(raw: str) -> None:
    with pytest.raises(BackendError):
        normalize(raw)


def test_glob_match() -> None:
    assert glob_match("**/*.py", "a.py") and glob_match("**/*.py", "x/y/a.py")
    assert glob_match("*.md", "a.md") and glob_match("*.md", "x/a.md")  # by name, any depth
    assert glob_match("x/*.md", "x/a.md") and not glob_match("x/*.md", "x/y/a.md")
    assert glob_match("n?tes/{a,b}.md", "notes/b.md") and glob_match("[ab].txt", "a.txt")


# -- shared behaviour, for every backend ----------------------------------------------------

def _state(tmp_path: Path) -> Backend:
    return StateBackend({})


def _fs(tmp_path: Path) -> Backend:
    return FilesystemBackend(tmp_path / "root")


def _composite(tmp_path: Path) -> Backend:
    return CompositeBackend(StateBackend({}), {"/mem/": FilesystemBackend(tmp_path / "mem")})


KINDS: list[Callable[[Path], Backend]] = [_state, _fs, _composite]


@pytest.fixture(params=KINDS, ids=["state", "filesystem", "composite"])
def backend(request: Any, tmp_path: Path) -> Backend:
    factory: Callable[[Path], Backend] = request.param
    return factory(tmp_path)


def test_write_read_overwrite(backend: Backend) -> None:
    backend.write("/notes/a.md", "one\n")
    assert backend.read("notes/a.md") == "one\n"
    backend.write("/notes/a.md", "two")
    assert backend.read("/notes/a.md") == "two"
    with pytest.raises(BackendError, match="not found"):
        backend.read("/notes/missing.md")


def test_ls(backend: Backend) -> None:
    backend.write("/a.txt", "abc")
    backend.write("/d/b.txt", "x")
    backend.write("/d/e/c.txt", "y")
    got = {(f.path, f.is_dir) for f in backend.ls("/")}
    assert {("/a.txt", False), ("/d", True)} <= got
    assert [(f.path, f.is_dir, f.size) for f in backend.ls("/d")] == [
        ("/d/b.txt", False, 1), ("/d/e", True, 0)]
    with pytest.raises(BackendError):
        backend.ls("/nope")


def test_edit(backend: Backend) -> None:
    backend.write("/f.txt", "a b a")
    with pytest.raises(BackendError, match="2 times"):
        backend.edit("/f.txt", "a", "c")
    with pytest.raises(BackendError, match="not found"):
        backend.edit("/f.txt", "zzz", "c")
    assert backend.edit("/f.txt", "b", "B") == 1
    assert backend.edit("/f.txt", "a", "c", replace_all=True) == 2
    assert backend.read("/f.txt") == "c B c"


def test_glob_and_grep(backend: Backend) -> None:
    backend.write("/src/a.py", "def f():\n    return 1\n")
    backend.write("/src/sub/b.py", "x = 1\ndef g():\n")
    backend.write("/readme.md", "def not code\n")
    assert backend.glob("**/*.py") == ["/src/a.py", "/src/sub/b.py"]
    assert backend.glob("*.py", "/src") == ["/src/a.py", "/src/sub/b.py"]
    assert backend.glob("sub/*.py", "/src") == ["/src/sub/b.py"]
    matches = backend.grep("def ", "/", "*.py")
    assert [(m.path, m.line_number) for m in matches] == [("/src/a.py", 1), ("/src/sub/b.py", 2)]
    assert [m.path for m in backend.grep("def", "/src/sub")] == ["/src/sub/b.py"]
    assert backend.grep("^def \\w+") == []  # literal text, not a regular expression
    assert [m.path for m in backend.grep("f()")] == ["/src/a.py"]
    with pytest.raises(BackendError, match="empty"):
        backend.grep("")


def test_grep_cannot_be_made_to_backtrack(backend: Backend) -> None:
    """A pattern that would take exponential time as a regular expression is plain text."""
    backend.write("/a.txt", "a" * 64 + "!\n(a+)+$ appears here\n")
    assert [(m.path, m.line_number) for m in backend.grep("(a+)+$")] == [("/a.txt", 2)]


def test_state_backend_is_json_and_reassigned() -> None:
    class Recording(dict[str, Any]):
        sets: list[str] = []

        def __setitem__(self, key: str, value: Any) -> None:
            self.sets.append(key)
            super().__setitem__(key, value)

    state = Recording()
    backend = StateBackend(state)
    backend.write("/a.md", "hi")
    first = state["agentspec:files"]
    backend.edit("/a.md", "hi", "ho")
    assert state["agentspec:files"] is not first and state.sets == ["agentspec:files"] * 2
    again = StateBackend(json.loads(json.dumps(state)))
    assert again.read("/a.md") == "ho"
    assert set(state["agentspec:files"]["/a.md"]) == {"content", "modified"}
    with pytest.raises(BackendError, match="is a file"):
        backend.write("/a.md/x", "no")


def test_composite_routes(tmp_path: Path) -> None:
    default = StateBackend({})
    mem = FilesystemBackend(tmp_path / "mem")
    deep = StateBackend({})
    comp = CompositeBackend(default, {"/mem/": mem, "/mem/deep/": deep})
    comp.write("/top.md", "t")
    comp.write("/mem/m.md", "needle")
    comp.write("/mem/deep/d.md", "needle")
    assert (tmp_path / "mem" / "m.md").read_text() == "needle"
    assert deep.read("/d.md") == "needle" and default.ls("/")[0].path == "/top.md"
    assert [(f.path, f.is_dir) for f in comp.ls("/")] == [("/mem", True), ("/top.md", False)]
    assert [f.path for f in comp.ls("/mem")] == ["/mem/deep", "/mem/m.md"]
    assert comp.glob("**/*.md") == ["/mem/deep/d.md", "/mem/m.md", "/top.md"]
    assert comp.glob("*.md", "/mem") == ["/mem/deep/d.md", "/mem/m.md"]
    assert comp.glob("deep/*.md", "/mem") == ["/mem/deep/d.md"]
    assert [m.path for m in comp.grep("needle")] == ["/mem/deep/d.md", "/mem/m.md"]
    assert comp.edit("/mem/deep/d.md", "needle", "pin") == 1
    assert comp.read("/mem/deep/d.md") == "pin"
    with pytest.raises(BackendError, match="cannot run commands"):
        comp.execute("echo hi")


def test_composite_execute_uses_shell_default(tmp_path: Path) -> None:
    comp = CompositeBackend(spec_shell(tmp_path / "ws", timeout=10), {"/m/": StateBackend({})})
    assert isinstance(comp, ShellCapable)
    assert comp.execute("echo hi").output.strip() == "hi"


# -- confinement ----------------------------------------------------------------------------

@pytest.fixture
def jail(tmp_path: Path) -> dict[str, Any]:
    """A root with traps inside, and sentinel files outside it."""
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    (root / "inside").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    (tmp_path / "secret.txt").write_text(SECRET)
    (root / "inside" / "ok.txt").write_text("fine")
    os.symlink("/etc", root / "etc_link")
    os.symlink(outside, root / "out_dir")
    os.symlink(outside / "secret.txt", root / "secret_link.txt")
    os.symlink(outside / "new.txt", root / "dangling_out.txt")
    os.symlink(root / "inside", root / "in_link")  # a link that stays inside is fine
    before = {p: p.read_bytes() for p in outside.rglob("*")} | {
        tmp_path / "secret.txt": (tmp_path / "secret.txt").read_bytes()}
    return {"root": root, "outside": outside, "tmp": tmp_path, "before": before}


def _untouched(jail: dict[str, Any]) -> None:
    outside: Path = jail["outside"]
    now = {p: p.read_bytes() for p in outside.rglob("*")} | {
        jail["tmp"] / "secret.txt": (jail["tmp"] / "secret.txt").read_bytes()}
    assert now == jail["before"]
    assert not (jail["tmp"] / "pwned").exists() and not Path("/pwned").exists()


def _no_secret(value: Any) -> None:
    assert SECRET not in repr(value) and "root:x:0" not in repr(value)


ESCAPE_READS = ["../secret.txt", "../../etc/passwd", "/../secret.txt", "inside/../../secret.txt",
                "etc_link/passwd", "out_dir/secret.txt", "secret_link.txt",
                "%2e%2e/secret.txt", "..%2fsecret.txt", "..\\secret.txt",
                "in_link/../../secret.txt",
                "\u2024\u2024/secret.txt", "\uff0e\uff0e/secret.txt", "inside/\x00../secret.txt",
                "a" * 5000, "/" + "x/" * 2100 + "secret.txt", "//secret.txt",
                "out_dir/../secret.txt",
                "dangling_out.txt", "in_link/../out_dir/secret.txt"]

ESCAPE_WRITES = ["../pwned", "../../pwned", "/../pwned", "out_dir/pwned", "out_dir/secret.txt",
                 "secret_link.txt", "dangling_out.txt", "etc_link/pwned", "%2e%2e/pwned",
                 "..\\pwned", "\uff0e\uff0e/pwned", "x\x00/../../pwned", "b" * 5000,
                 "out_dir/sub/dir/pwned", "in_link/../../pwned"]


@pytest.mark.parametrize("backend_kind", ["filesystem", "shell"])
@pytest.mark.parametrize("path", ESCAPE_READS)
def test_escape_read(jail: dict[str, Any], backend_kind: str, path: str) -> None:
    backend = spec_shell(jail["root"]) if backend_kind == "shell" \
        else FilesystemBackend(jail["root"])
    for op in (lambda: backend.read(path), lambda: backend.ls(path),
               lambda: backend.glob("**/*", path), lambda: backend.grep(".", path)):
        try:
            _no_secret(op())
        except BackendError as exc:
            _no_secret(str(exc))
    _untouched(jail)


@pytest.mark.parametrize("backend_kind", ["filesystem", "shell"])
@pytest.mark.parametrize("path", ESCAPE_WRITES)
def test_escape_write(jail: dict[str, Any], backend_kind: str, path: str) -> None:
    backend = spec_shell(jail["root"]) if backend_kind == "shell" \
        else FilesystemBackend(jail["root"])
    for op in (lambda: backend.write(path, "pwned"),
               lambda: backend.edit(path, SECRET, "pwned")):
        try:
            op()
        except BackendError as exc:
            _no_secret(str(exc))
    _untouched(jail)
    # whatever was written landed inside the root
    for p in jail["root"].rglob("*"):
        if p.is_file() and not p.is_symlink() and p.read_text() == "pwned":
            assert os.path.commonpath([os.path.realpath(p), os.path.realpath(jail["root"])]) \
                == os.path.realpath(jail["root"])


def test_absolute_path_maps_inside(jail: dict[str, Any]) -> None:
    backend = FilesystemBackend(jail["root"])
    with pytest.raises(BackendError, match="not found"):
        backend.read("/etc/passwd")
    backend.write("/etc/passwd", "virtual")
    assert (jail["root"] / "etc" / "passwd").read_text() == "virtual"
    assert backend.read("/etc/passwd") == "virtual"
    assert "root:x:0" not in Path("/etc/passwd").read_text() or \
        Path("/etc/passwd").read_text() != "virtual"


def test_literal_odd_names_stay_inside(jail: dict[str, Any]) -> None:
    backend = FilesystemBackend(jail["root"])
    for name in ["%2e%2e/x.txt", "..\\x.txt", "\uff0e\uff0e/x.txt", "a b/ü.txt"]:
        backend.write(name, "odd")
        assert backend.read(name) == "odd"
    assert (jail["root"] / "%2e%2e" / "x.txt").exists()
    assert (jail["root"] / "..\\x.txt").exists()
    _untouched(jail)


def test_symlinks_refused_or_hidden(jail: dict[str, Any]) -> None:
    backend = FilesystemBackend(jail["root"])
    for path in ["/secret_link.txt", "/out_dir/secret.txt", "/etc_link/passwd"]:
        with pytest.raises(BackendError, match="outside the workspace"):
            backend.read(path)
    with pytest.raises(BackendError, match="outside the workspace"):
        backend.write("/dangling_out.txt", "x")
    assert not (jail["outside"] / "new.txt").exists()
    listed = {f.path for f in backend.ls("/")}
    assert listed == {"/in_link", "/inside"}  # links leading out are not listed
    everything = backend.glob("**/*")
    assert everything == ["/inside/ok.txt"]  # no descent into out_dir / etc_link
    assert backend.glob("**", "/in_link") == ["/in_link/ok.txt"]
    assert backend.grep(SECRET) == [] and backend.grep("root") == []
    assert backend.read("/in_link/ok.txt") == "fine"
    _untouched(jail)


def test_write_final_component_symlink_inside_is_followed_safely(jail: dict[str, Any]) -> None:
    root: Path = jail["root"]
    os.symlink(root / "inside" / "ok.txt", root / "alias.txt")
    backend = FilesystemBackend(root)
    backend.write("/alias.txt", "changed")
    assert (root / "inside" / "ok.txt").read_text() == "changed"
    _untouched(jail)


def test_grep_skips_binary_and_caps(tmp_path: Path) -> None:
    backend = FilesystemBackend(tmp_path)
    (tmp_path / "bin.dat").write_bytes(b"match\x00\x01\x02")
    backend.write("/many.txt", "match\n" * (GREP_LIMIT + 50))
    matches = backend.grep("match")
    assert len(matches) == GREP_LIMIT and {m.path for m in matches} == {"/many.txt"}


def test_fifo_is_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    backend = FilesystemBackend(tmp_path)
    with pytest.raises(BackendError, match="not a regular file"):
        backend.read("/pipe")
    assert backend.grep("x") == []


# -- shell ----------------------------------------------------------------------------------

def test_shell_runs_in_root_with_minimal_env(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("AGENTSPEC_PARENT_SECRET", "leak")
    shell = spec_shell(tmp_path, timeout=10, env={"GREETING": "hello"})
    shell.write("/f.txt", "content")
    result = shell.execute("pwd; cat f.txt; echo; echo $GREETING; env; echo err >&2; exit 3")
    assert result.exit_code == 3 and not result.truncated and not result.timed_out
    lines = result.output.splitlines()
    assert lines[0] == os.path.realpath(tmp_path)
    assert "content" in lines and "hello" in lines and "err" in lines
    assert "leak" not in result.output
    assert f"HOME={os.path.realpath(tmp_path)}" in lines


def test_shell_output_cap(tmp_path: Path) -> None:
    shell = spec_shell(tmp_path, timeout=10, max_output_bytes=1000)
    result = shell.execute("yes abcdefghij | head -c 500000")
    assert result.truncated and result.exit_code == 0
    body, note = result.output.split("\n... ", 1)
    assert len(body.encode()) == 1000 and note == "[output truncated at 1000 bytes]"
    small = shell.execute("printf 12345")
    assert small.output == "12345" and not small.truncated


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a killed child waiting for init to reap it is a zombie: dead
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


def _until(check: Callable[[], bool], seconds: float = 60) -> bool:
    """Polls `check` until it holds; the deadline only catches a real failure."""
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        time.sleep(0.05)
    return check()


# The children below sleep far longer than the tests' timeouts (pytest-timeout): an execute
# that waited for them instead of ending at its own timeout fails as a hang, never by luck.

@pytest.mark.timeout(120)
def test_shell_timeout_kills_children(tmp_path: Path) -> None:
    shell = spec_shell(tmp_path, timeout=1)
    result = shell.execute("sleep 600 & echo $! > pids; sleep 600 & echo $! >> pids; wait")
    assert result.timed_out and result.exit_code is None and "timed out" in result.output
    pids = [int(p) for p in (tmp_path / "pids").read_text().split()]
    assert len(pids) == 2
    assert _until(lambda: all(_gone(p) for p in pids))


def test_shell_background_leftovers_are_killed(tmp_path: Path) -> None:
    shell = spec_shell(tmp_path, timeout=60)
    result = shell.execute("sleep 600 >/dev/null 2>&1 & echo $! > pid; echo started")
    assert result.output.strip() == "started" and not result.timed_out
    pid = int((tmp_path / "pid").read_text())
    assert _until(lambda: _gone(pid))


def test_shell_refuses_empty_and_nul(tmp_path: Path) -> None:
    shell = spec_shell(tmp_path)
    for command in ["", "   ", "echo a\x00b"]:
        with pytest.raises(BackendError):
            shell.execute(command)


# -- regressions ----------------------------------------------------------------------------

@pytest.mark.timeout(120)
def test_shell_setsid_child_cannot_hold_execute_past_timeout(tmp_path: Path) -> None:
    shell = spec_shell(tmp_path, timeout=1)
    result = shell.execute("setsid sleep 600 & echo $! > pid; echo hi")
    assert result.output.startswith("hi") and result.exit_code == 0
    with_timeout = shell.execute("setsid sleep 600 & echo $! >> pid; echo hi; sleep 600")
    assert with_timeout.timed_out and with_timeout.output.startswith("hi")
    for pid in (tmp_path / "pid").read_text().split():  # clean up what setsid left behind
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), 9)


def test_failed_write_leaves_old_content(tmp_path: Path, monkeypatch: Any) -> None:
    backend = FilesystemBackend(tmp_path)
    backend.write("/f.txt", "old")
    with pytest.raises(BackendError, match="unchanged"):
        backend.write("/f.txt", "bad \ud800")
    assert (tmp_path / "f.txt").read_text() == "old"

    def no_space(fd: int, data: Any) -> int:
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "write", no_space)
    with pytest.raises(BackendError, match="No space left"):
        backend.write("/f.txt", "new")
    monkeypatch.undo()
    assert (tmp_path / "f.txt").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]  # no temp files left


def test_read_directory_does_not_leak_fds(tmp_path: Path) -> None:
    backend = FilesystemBackend(tmp_path)
    (tmp_path / "d").mkdir()
    before = len(os.listdir("/proc/self/fd"))
    for path in ["/", "/d"] * 50:
        with pytest.raises(BackendError, match="is a directory"):
            backend.read(path)
    assert len(os.listdir("/proc/self/fd")) <= before


def test_write_refuses_fifo(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    backend = FilesystemBackend(tmp_path)
    with pytest.raises(BackendError, match="not a regular file"):
        backend.write("/pipe", "x")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe").st_mode)


def test_non_utf8_names_are_skipped(tmp_path: Path) -> None:
    raw = os.fsencode(tmp_path)
    os.close(os.open(raw + b"/caf\xe9.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    os.mkdir(raw + b"/d\xff")
    os.close(os.open(raw + b"/d\xff/x.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    backend = FilesystemBackend(tmp_path)
    backend.write("/ok.txt", "needle")
    with open(raw + b"/caf\xe9.txt", "w") as handle:
        handle.write("needle")
    assert [f.path for f in backend.ls("/")] == ["/ok.txt"]
    assert backend.glob("**/*") == ["/ok.txt"]
    assert [m.path for m in backend.grep("needle")] == ["/ok.txt"]
    json.dumps([f.path for f in backend.ls("/")] + backend.glob("**/*"))


# -- what `shell` isolates and what it does not (issue 12, item 16): the docs say it --------

def test_a_command_gets_only_the_documented_environment_in_a_session_of_its_own(
        tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("AGENTSPEC_PARENT_SECRET", "leak")
    shell = spec_shell(tmp_path, timeout=10, env={"GREETING": "hello"})
    result = shell.execute("env; echo SID $(ps -o sid= -p $$)")
    names = {line.split("=", 1)[0] for line in result.output.splitlines() if "=" in line}
    shell_own = {"PWD", "SHLVL", "_", "OLDPWD"}  # what /bin/sh sets for itself
    assert names - shell_own == {"PATH", "HOME", "LANG", "GREETING"}
    sid = int(result.output.split("SID", 1)[1].split()[0])
    assert sid != os.getsid(0)  # not the session of agentspec (or its terminal)


def test_what_a_command_can_still_reach_is_what_the_readme_says(tmp_path: Path) -> None:
    """Not a sandbox: a command reads the environment agentspec started with through /proc.
    The backends page says so in as many words; real confinement is a sandbox backend's job."""
    script = ("from agentspec.runtime.backends.shell import ShellBackend; print(ShellBackend("
              f"{str(tmp_path)!r}, timeout=10, max_output_bytes=100_000)"
              ".execute(\"tr '\\\\0' '\\\\n' < "
              "/proc/$PPID/environ\").output)")
    env = {**os.environ, "AGENTSPEC_PARENT_SECRET": "reachable"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=60, check=True)
    readme = " ".join((Path(__file__).parent.parent / "docs" / "language" / "backends.md")
                      .read_text().split())
    assert "`shell` is not a sandbox." in readme and "`/proc/$PPID/environ`" in readme
    if "AGENTSPEC_PARENT_SECRET=reachable" in done.stdout:  # unless /proc hides it (hidepid)
        assert "the environment of the agentspec process itself" in readme
    else:
        assert "No such file" in done.stdout or "denied" in done.stdout, done.stdout
