"""Issue 21, round 3: the sandbox attacked by the agent's user (root here, as in the usual
container) and by an ordinary user the test makes (`useradd`), each scenario of
`tests/sandbox_driver.py` run both ways: set-uid files planted on the host (1), Unix sockets
through read-only mounts (8), the process limit as root without a pids cgroup (11), `env`
values on bwrap's command line (19), memory, `/tmp`, io_uring and workspace bounds (21)."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentspec.runtime.backends import BackendError
from agentspec.runtime.backends.seccomp import seccomp_filter
from tests.sandbox_driver import SCENARIOS
from tests.spec_defaults import spec_sandbox

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None,
                                reason="bubblewrap is not installed (.ci/run installs it)")

REPO = Path(__file__).resolve().parent.parent
MODES = ["agent-user", "ordinary-user"]


@pytest.fixture(scope="session")
def ordinary_user() -> Iterator[str]:
    """A system account made for these tests (one per xdist worker), removed afterwards."""
    if os.geteuid() != 0:
        pytest.skip("making an ordinary user needs root")
    if shutil.which("useradd") is None or shutil.which("setpriv") is None:
        pytest.skip("useradd and setpriv are needed to run as an ordinary user")
    name = f"agsbx{secrets.token_hex(4)}"
    for _ in range(100):  # other workers may hold /etc/passwd's lock for a moment
        made = subprocess.run(["useradd", "--system", "--no-create-home", "--shell",
                               "/usr/sbin/nologin", name], capture_output=True, check=False)
        if made.returncode == 0:
            break
        time.sleep(0.05)
    else:
        pytest.skip(f"useradd failed: {made.stderr.decode()}")
    try:
        yield name
    finally:
        for _ in range(100):
            if subprocess.run(["userdel", name], capture_output=True).returncode in (0, 6):
                break
            time.sleep(0.05)


def _interpreter(user: str) -> tuple[str, dict[str, str]]:
    """A Python the ordinary user can run that imports this checkout: this one, or the
    system's of the same version with the venv's packages (when this one lies under a
    directory the user cannot enter, such as /root)."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
           "PYTHONPATH": f"{REPO}:{sysconfig.get_paths()['purelib']}"}
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (sys.executable, f"/usr/bin/python{version}"):
        probe = subprocess.run(["setpriv", f"--reuid={user}", f"--regid={user}",
                                "--clear-groups", candidate, "-c",
                                "import agentspec.runtime.backends.sandbox"],
                               env=env, cwd="/", capture_output=True, check=False)
        if probe.returncode == 0:
            return candidate, env
    pytest.skip(f"the user {user} can run no Python {version} that imports agentspec")


@contextlib.contextmanager
def _base(owner: str | None) -> Iterator[Path]:
    """A directory others may enter (to run what the sandbox left there), owned by `owner`."""
    base = Path(tempfile.mkdtemp(prefix="agentspec-sbx-", dir="/tmp"))
    base.chmod(0o755)
    if owner is not None:
        shutil.chown(base, owner, owner)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _run(mode: str, request: pytest.FixtureRequest, scenario: str,
         args: dict[str, Any] | None = None) -> tuple[dict[str, Any], Path]:
    if mode == "agent-user":
        with _base(None) as base:
            return SCENARIOS[scenario](base, args or {}), base
    user = request.getfixturevalue("ordinary_user")
    python, env = _interpreter(user)
    with _base(user) as base:
        done = subprocess.run(
            ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", python, "-m",
             "tests.sandbox_driver", scenario, str(base), json.dumps(args or {})],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.splitlines()[-1]), base


# -- 1: set-uid and set-gid files ------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_no_set_id_file_reaches_the_host(mode: str, request: pytest.FixtureRequest) -> None:
    if mode == "agent-user":
        with _base(None) as base:
            found = SCENARIOS["setid"](base, {})
            escalated = _run_as_nobody(base / "ws" / "py")
    else:
        found, _ = _run(mode, request, "setid")
        escalated = None
    assert found["set_id"] == [], found["output"]
    output = found["output"]
    for name in ("open", "mkdir", "mknod", "fchmod", "chmod"):
        assert f"{name} refused 1" in output, output  # EPERM from the seccomp filter
    assert "nosuid" in output.split(" /workspace ")[1]  # the bind itself is nosuid too
    assert "-rwxr-xr-x" in output  # positive control: ordinary modes are set
    assert escalated in (None, "65534"), escalated


def _run_as_nobody(path: Path) -> str | None:
    """The effective uid `path` (a python3 copy) runs with when `nobody` starts it."""
    if os.geteuid() != 0 or not path.exists():
        return None
    done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                           str(path), "-c", "import os; print(os.geteuid())"],
                          capture_output=True, text=True, check=False, cwd="/")
    return done.stdout.strip() or done.stderr


@pytest.mark.parametrize("mode", MODES)
def test_set_id_bits_in_the_workspace_are_stripped_on_the_host(
        mode: str, request: pytest.FixtureRequest) -> None:
    found, _ = _run(mode, request, "sweep")
    assert found["set_id"] == [] and found["mode"] == 0o755
    assert "set-uid/set-gid bits removed from sub, sub/planted" in found["output"]


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_checks_every_mode_call_of_the_machine(machine: str) -> None:
    program = seccomp_filter(machine)
    assert program is not None and len(program) % 8 == 0
    assert seccomp_filter("mips") is None


# -- 8: Unix sockets in mounts ---------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_a_socket_in_a_mount_is_refused_unless_allowed(
        mode: str, request: pytest.FixtureRequest) -> None:
    found, _ = _run(mode, request, "sockets")
    assert found["refused"].startswith("BackendError: "), found["refused"]
    assert "run/deep/service.sock" in found["refused"] and "allow_sockets" in found["refused"]
    assert found["hits_refused"] == 0
    # the control: allowed, the same command reaches the host service (the attack is real)
    assert "CONNECTED" in found["allowed"] and found["hits"] == ["reached"], found


# -- 11: the process limit -------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_the_process_limit_holds_or_the_command_is_refused(
        mode: str, request: pytest.FixtureRequest) -> None:
    # as root, the sandbox's user is an unprivileged host uid, whose processes the kernel
    # counts: no cgroup is needed
    found, _ = _run(mode, request, "processes", {"no_cgroup": True})
    assert 8 <= found.get("count", 0) <= 20, found  # 16 (+ bwrap's own)
    with_group, _ = _run(mode, request, "processes")
    assert 8 <= with_group["count"] <= 20, with_group


# -- 19: env values off every command line ---------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_env_values_are_on_no_command_line(mode: str, request: pytest.FixtureRequest) -> None:
    found, _ = _run(mode, request, "env_cmdline")
    assert found["started"] and found["bwrap_seen"], found
    assert found["leaked"] == [], found
    assert found["inside"], found["output"]


# -- 21: memory, /tmp, io_uring, the workspace -----------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_memory_tmp_io_uring_and_workspace_are_bounded(
        mode: str, request: pytest.FixtureRequest) -> None:
    found, _ = _run(mode, request, "limits")
    assert "MemoryError" in found["memory"] and "ALLOCATED" not in found["memory"]
    if found["memory_group"]:  # as root where one can be made: it bounds the sandbox
        assert "ALLOCATED" not in found["sandbox_memory"], found["sandbox_memory"]
    else:  # per process only, as documented
        assert "ALLOCATED" in found["sandbox_memory"], found["sandbox_memory"]
    assert found["tmp"].split()[1] == "8192", found["tmp"]  # df's 1K blocks
    assert "No space left on device" in found["tmp"]
    assert found["io_uring"].split() == ["-1", "38"]  # ENOSYS, as a kernel without it
    assert "f1\nf2\nf3" in found["fill"] and "over its `max_workspace_mb` of 4" in found["fill"]
    assert "removed" in found["full"] and "rc=0" not in found["full"]
    assert "this command could not write files" in found["full"]
    assert not found["more_exists"]
    assert "rc=0" in found["after"] and "max_workspace_mb" not in found["after"]


@pytest.mark.parametrize("env", [{"A": "x\0--bind\0/\0/host"}, {"A\0B": "x"}, {"A=B": "x"},
                                 {"": "x"}])
def test_env_cannot_smuggle_bwrap_options(tmp_path: Path, env: dict[str, str]) -> None:
    # the values travel NUL-separated through `bwrap --args`
    with pytest.raises(BackendError, match="cannot be set"):
        spec_sandbox(tmp_path / "ws", env=env).execute("true")


def test_the_sweep_leaves_a_hard_linked_set_id_file_alone(tmp_path: Path) -> None:
    # the same inode may be a system's set-uid program: stripping it would break that
    program = tmp_path / "program"
    program.write_bytes(b"#!/bin/sh\n")
    program.chmod(0o4755)
    (tmp_path / "ws").mkdir()
    os.link(program, tmp_path / "ws" / "link")
    result = spec_sandbox(tmp_path / "ws").execute("true")
    assert program.stat().st_mode & 0o7777 == 0o4755
    assert "with other names (hard links) left as they are: link" in result.output


@pytest.mark.skipif(not Path("/etc/ssl/private").is_dir(), reason="no /etc/ssl/private here")
def test_private_keys_are_hidden(tmp_path: Path) -> None:
    # root-only on the host, yet the sandbox of a host root is their owner
    result = spec_sandbox(tmp_path / "ws").execute(
        "ls -A /etc/ssl/private; echo listed; touch /etc/ssl/private/k; "
        "grep ' /etc/ssl/private ' /proc/self/mountinfo")
    assert result.output.startswith("listed\n"), result.output
    assert "Read-only file system" in result.output and " - tmpfs " in result.output


def test_a_bubblewrap_that_cannot_bound_tmp_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentspec.runtime.backends import sandbox

    old = tmp_path / "bwrap"  # a bubblewrap 0.6 knows no --size
    old.write_text("#!/bin/sh\necho 'usage: bwrap [OPTIONS...] [--] COMMAND [ARGS...]'\n")
    old.chmod(0o755)
    monkeypatch.setattr(sandbox.shutil, "which", lambda *a, **k: str(old))
    with pytest.raises(sandbox.SandboxUnavailable, match="bubblewrap 0.8 or later"):
        spec_sandbox(tmp_path / "ws").execute("true")


def test_a_host_roots_sandbox_is_an_unprivileged_host_user(tmp_path: Path) -> None:
    from agentspec.runtime.backends.userns import HOST_ID

    root = tmp_path / "ws"
    root.mkdir()
    (root / "agents.txt").write_text("by the file tools\n")  # this process's, root's as root
    (root / "agents.txt").chmod(0o644)
    result = spec_sandbox(root).execute(
        "echo made > made.txt; echo more >> agents.txt && chmod 600 agents.txt && echo ok; "
        "grep -E '^(Uid|Gid)' /proc/self/status")
    assert "ok" in result.output, result.output  # the file tools' files stay writable
    assert (root / "agents.txt").read_text() == "by the file tools\nmore\n"
    expected = HOST_ID if os.getuid() == 0 else os.getuid()
    assert (root / "made.txt").stat().st_uid == expected
    assert (root / "made.txt").stat().st_gid == (HOST_ID if os.getuid() == 0 else os.getgid())


def test_an_account_holding_the_sandbox_uid_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentspec.runtime.backends import userns

    if os.getuid() != 0:
        pytest.skip("only a host root's sandbox runs as that uid")

    class Account:
        pw_name = "squatter"

    monkeypatch.setattr(userns.pwd, "getpwuid", lambda uid: Account())
    with pytest.raises(BackendError, match="which the account `squatter` holds"):
        spec_sandbox(tmp_path / "ws").execute("true")
