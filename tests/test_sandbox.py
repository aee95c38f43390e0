"""`type: sandbox`: commands under bubblewrap. Escape attempts (each must fail, checked on the
host where it can be), positive controls (so the checks can fail), limits, the per-call
timeout, and a clear error without bubblewrap."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shlex
import shutil
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentspec.cli import cli
from agentspec.runtime.backends import BackendError, ExecuteResult
from agentspec.runtime.backends import sandbox as sandbox_module
from agentspec.runtime.backends.sandbox import SandboxBackend, SandboxUnavailable
from tests.spec_defaults import spec_limits, spec_sandbox, spec_shell

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None,
                                reason="bubblewrap is not installed (.ci/run installs it)")


@dataclass
class Host:
    """What the attacks aim at, on the host side."""

    project: Path
    root: Path
    secret: str  # in a file beside the project, in /tmp and in this process's environment
    secret_file: Path
    tmp_marker: Path
    data: Path
    server_port: int
    connections: list[bytes]
    abstract: str
    abstract_hits: list[int]
    sleeper: subprocess.Popen[bytes]
    box: SandboxBackend

    def run(self, command: str, timeout: float | None = None) -> ExecuteResult:
        return self.box.execute(command, timeout)


def _tcp_server(connections: list[bytes]) -> tuple[socket.socket, int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    connections.append(conn.recv(100) or b"(connected)")
                except OSError:
                    connections.append(b"(connected)")

    threading.Thread(target=serve, daemon=True).start()
    return server, server.getsockname()[1]


def _abstract_server(name: str, hits: list[int]) -> socket.socket:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind("\0" + name)
    server.listen(4)

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            hits.append(1)
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return server


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Host]:
    secret = "s3cr3t-" + secrets.token_hex(8)
    monkeypatch.setenv("AGENTSPEC_TEST_SECRET", secret)
    project = tmp_path / "project"
    root = project / "workspace"
    data = project / "data"
    data.mkdir(parents=True)
    (data / "readme.txt").write_text("reference data\n")
    (project / "spec.yaml").write_text(f"# {secret}\n")
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(secret)
    fd, marker = __import__("tempfile").mkstemp(prefix="agentspec-host-", dir="/tmp")
    os.write(fd, secret.encode())
    os.close(fd)
    connections: list[bytes] = []
    server, port = _tcp_server(connections)
    abstract = "agentspec-test-" + secrets.token_hex(6)
    hits: list[int] = []
    unix = _abstract_server(abstract, hits)
    sleeper = subprocess.Popen(["sleep", "300"])
    box = spec_sandbox(root, timeout=20, max_output_bytes=10_000,
                         mounts=[(str(data), "/data")],
                         limits=spec_limits(processes=32, file_bytes=1_000_000))
    root.mkdir(exist_ok=True)
    (root / "planted-relative").symlink_to("../../secret.txt")
    (root / "planted-absolute").symlink_to(secret_file)
    (root / "planted-etc").symlink_to("/etc/passwd")
    try:
        yield Host(project, root, secret, secret_file, Path(marker), data, port, connections,
                   abstract, hits, sleeper, box)
    finally:
        sleeper.kill()
        sleeper.wait()
        server.close()
        unix.close()
        os.unlink(marker)


def _host_processes(word: str) -> list[int]:
    """Host processes whose command line holds `word`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if word.encode() in cmdline:
                found.append(int(entry))
    return found


def _python(code: str) -> str:
    return "python3 -c " + shlex.quote(code)


_CONNECT = ("import socket\ntry:\n    socket.create_connection((%r, %s), timeout=3)"
            ".sendall(b'escaped')\n    print('CONNECTED')\nexcept OSError as e:\n"
            "    print('refused', e)")


@dataclass(frozen=True)
class Attack:
    name: str
    command: str | Callable[[Host], str]
    failed: Callable[[Host, ExecuteResult], bool]  # True when the escape failed
    timeout: float | None = None


def _no_secret(h: Host, r: ExecuteResult) -> bool:
    return h.secret not in r.output


def _said(*words: str) -> Callable[[Host, ExecuteResult], bool]:
    return lambda h, r: all(w in r.output for w in words) and h.secret not in r.output


ATTACKS = [
    # writes outside the root
    Attack("write into /etc", "echo x > /etc/agentspec-escape",
           lambda h, r: "Read-only file system" in r.output
           and not Path("/etc/agentspec-escape").exists()),
    Attack("write into /usr", "touch /usr/bin/agentspec-escape",
           lambda h, r: "Read-only file system" in r.output
           and not Path("/usr/bin/agentspec-escape").exists()),
    Attack("new top-level directory", "mkdir /escape",
           _said("Read-only file system")),
    Attack("write to the root's parent (`..`)", "echo x > ../escape.txt; echo x > /workspace/../e",
           lambda h, r: not (h.project / "escape.txt").exists()
           and not (h.project / "e").exists() and "Read-only file system" in r.output),
    Attack("write the host /tmp", lambda h: f"echo x > /tmp/{h.abstract}; ls /tmp",
           lambda h, r: not Path(f"/tmp/{h.abstract}").exists()),
    # reading host files
    Attack("read /etc/shadow", "cat /etc/shadow", _said("No such file")),
    Attack("read /etc/passwd", "cat /etc/passwd", _said("No such file")),
    Attack("list /root", "ls /root", _said("No such file")),
    Attack("list /home", "ls /home", _said("No such file")),
    Attack("list /work and /var", "ls /work /var", _said("No such file")),
    Attack("read the spec by its host path", lambda h: f"cat {h.project}/spec.yaml",
           _said("No such file")),
    Attack("read a host /tmp file", lambda h: f"cat {h.tmp_marker}", _said("No such file")),
    Attack("relative symlink planted in the root", "cat planted-relative",
           _said("No such file")),
    Attack("absolute symlink planted in the root", "cat planted-absolute; cat planted-etc",
           _said("No such file")),
    Attack("`..` through a read-only mount", "cat /data/../etc/passwd /data/../../secret.txt",
           _said("No such file")),
    # the parent's environment and processes
    Attack("this process's environ by pid", lambda h: f"cat /proc/{os.getpid()}/environ",
           _said("No such file")),
    Attack("every /proc/*/environ", "cat /proc/*/environ; env; echo done", _said("done")),
    Attack("the parent's environ (/proc/$PPID)", "cat /proc/$PPID/environ; echo ppid=$PPID",
           _no_secret),
    Attack("SIGKILL a host process", lambda h: f"kill -9 {h.sleeper.pid}",
           lambda h, r: h.sleeper.poll() is None and r.exit_code != 0),
    Attack("SIGKILL every process (-1)", "kill -9 -1; echo sent",
           lambda h, r: h.sleeper.poll() is None),
    Attack("SIGKILL the test process", lambda h: f"kill -9 {os.getpid()}",
           lambda h, r: r.exit_code != 0),
    Attack("ptrace bwrap's init", _python(
        "import ctypes; l=ctypes.CDLL(None, use_errno=True); "
        "print(l.ptrace(16, 1, 0, 0), ctypes.get_errno())"), _said("-1 1")),
    Attack("keyring (keyctl)", _python(
        "import ctypes; l=ctypes.CDLL(None, use_errno=True); "
        "print(l.syscall(250, 0, -3, 1), ctypes.get_errno())"), _said("-1 1")),
    # network
    Attack("loopback TCP to a host server",
           lambda h: _python(_CONNECT % ("127.0.0.1", h.server_port)),
           lambda h, r: "refused" in r.output and not h.connections),
    Attack("abstract unix socket of the host", lambda h: _python(
        "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n"
        f"    s.connect('\\0{h.abstract}')\n    print('CONNECTED')\n"
        "except OSError as e:\n    print('refused', e)"),
           lambda h, r: "refused" in r.output and not h.abstract_hits),
    Attack("outside network", _python(_CONNECT % ("1.1.1.1", "53")),
           _said("Network is unreachable")),
    Attack("host unix sockets (PostgreSQL's)", "ls /var/run/postgresql /run",
           _said("No such file")),
    # privileges
    Attack("setuid su", "su -c id root < /dev/null; mount -t tmpfs none /tmp; echo rc=$?",
           lambda h, r: "uid=0" not in r.output and "rc=0" not in r.output),
    Attack("mount a filesystem", "mount -t proc proc /tmp 2>&1; mount --bind / /tmp; ls /tmp",
           lambda h, r: "self" not in r.output and "workspace" not in r.output),
    Attack("a new user namespace (unshare -r)", "unshare -r id",
           lambda h, r: "uid=0" not in r.output and r.exit_code != 0),
    # none, a host root's sandbox's too (its workspace is given to its user instead)
    Attack("capabilities and no_new_privs", "grep -E 'Cap(Eff|Prm|Bnd)|NoNewPrivs' "
           "/proc/self/status", _said("CapEff:\t0000000000000000", "CapPrm:\t0000000000000000",
                                      "CapBnd:\t0000000000000000", "NoNewPrivs:\t1")),
    Attack("device files", "ls /dev; cat /dev/sda /dev/mem /dev/kmsg /dev/vda",
           lambda h, r: all(f"/dev/{d}: No such file" in r.output
                            for d in ("sda", "mem", "kmsg", "vda"))),
    Attack("mknod a block device", "mknod disk b 8 0; ls disk",
           lambda h, r: not (h.root / "disk").exists()),
    Attack("/sys (cgroups, kernel settings)", "ls /sys/fs/cgroup", _said("No such file")),
    Attack("write a kernel setting", "echo 3 > /proc/sys/vm/drop_caches",
           _said("Read-only file system")),
    Attack("rename the host", "hostname escaped; hostname",
           lambda h, r: socket.gethostname() != "escaped"),
    Attack("write into a read-only mount", "echo x > /data/readme.txt; touch /data/new",
           lambda h, r: (h.data / "readme.txt").read_text() == "reference data\n"
           and not (h.data / "new").exists()),
]


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_escape_fails(host: Host, attack: Attack) -> None:
    command = attack.command if isinstance(attack.command, str) else attack.command(host)
    result = host.box.execute(command, attack.timeout)
    assert attack.failed(host, result), result.output
    assert host.secret not in result.output


def test_there_are_at_least_30_attacks() -> None:
    assert len(ATTACKS) >= 30


# -- positive controls: the same probes succeed where they should -----------------------------

def test_the_root_is_writable_and_seen_on_the_host(host: Host) -> None:
    result = host.run("echo made > made.txt && mkdir -p sub && echo deep > sub/f && pwd && "
                      "cat /data/readme.txt && echo $HOME && ls /tmp")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[:3] == ["/workspace", "reference data", "/workspace"]
    assert (host.root / "made.txt").read_text() == "made\n"
    assert host.box.read("/sub/f") == "deep\n"  # the file tools see the same directory


def test_a_link_made_inside_is_refused_by_the_file_tools(host: Host) -> None:
    assert host.run("ln -s /etc/passwd pw && ln -s ../../secret.txt up").exit_code == 0
    for path in ("/pw", "/up"):
        with pytest.raises(BackendError):
            host.box.read(path)


def test_network_true_reaches_loopback_and_the_environment_is_minimal(
        host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    box = spec_sandbox(host.root, timeout=20, network=True, env={"GREETING": "hi"})
    result = box.execute(_python(_CONNECT % ("127.0.0.1", host.server_port)) + "; " + _python(
        "import socket; s=socket.socket(socket.AF_UNIX); s.connect('\\0" + host.abstract
        + "'); print('UNIX')") + "; env | sort")
    assert "CONNECTED" in result.output and "UNIX" in result.output, result.output
    assert host.connections == [b"escaped"]
    names = {line.split("=", 1)[0] for line in result.output.splitlines() if "=" in line}
    assert names == {"GREETING", "HOME", "LANG", "PATH", "PWD"}


# -- limits ----------------------------------------------------------------------------------

def test_processes_are_bounded(host: Host) -> None:
    result = host.run("(for i in $(seq 100); do sleep 30 & done) 2>/dev/null; "
                      "set -- /proc/[0-9]*; echo count=$#")  # a glob: no fork needed
    count = int(result.output.split("count=")[1])
    assert 20 <= count <= 36, result.output  # max_processes (+ bwrap's own under a host root)


def test_a_fork_bomb_is_bounded_and_leaves_nothing(host: Host) -> None:
    result = host.run("bomb() { bomb | bomb & }; bomb; sleep 1; echo survived", timeout=5)
    assert result.exit_code is not None or result.timed_out
    assert not _host_processes("bomb"), "fork bomb processes outlived execute"


def test_a_timeout_kills_the_whole_sandbox(host: Host) -> None:
    tag = str(900000 + secrets.randbelow(99999))
    result = host.run(f"trap '' TERM; (trap '' TERM; setsid sleep {tag}1 & sleep {tag}2) & "
                      f"nohup sleep {tag}3 >/dev/null 2>&1 & sleep {tag}4", timeout=1)
    assert result.timed_out and result.exit_code is None
    assert "timed out after 1 seconds" in result.output
    assert not _host_processes(tag), "a sandboxed process outlived its timeout"


def test_a_detached_process_dies_with_the_command(host: Host) -> None:
    tag = str(800000 + secrets.randbelow(99999))
    result = host.run(f"setsid sleep {tag} > /dev/null 2>&1 & echo started")
    assert result.exit_code == 0 and "started" in result.output
    assert not _host_processes(tag)


def test_huge_output_is_cut(host: Host) -> None:
    result = host.run("head -c 50000000 /dev/zero | tr '\\0' a")
    assert result.truncated and result.exit_code == 0
    assert result.output.startswith("a" * 10_000)
    assert "[output truncated at 10000 bytes]" in result.output


def test_file_size_is_bounded(host: Host) -> None:
    host.run("head -c 3000000 /dev/zero > big")
    assert (host.root / "big").stat().st_size <= 1_000_000


def test_per_call_timeout_is_capped_by_the_backends(host: Host, tmp_path: Path) -> None:
    short = host.run("sleep 5", timeout=0.5)
    assert short.timed_out and "after 0.5 seconds" in short.output
    capped = spec_sandbox(host.root, timeout=0.5).execute("sleep 5", 100)
    assert capped.timed_out and "after 0.5 seconds" in capped.output
    shell = spec_shell(tmp_path / "shell", timeout=0.5).execute("sleep 5", 100)
    assert shell.timed_out and "after 0.5 seconds" in shell.output
    for wrong in (0, -1, True, "5"):
        with pytest.raises(BackendError, match="timeout must be"):
            host.box.execute("true", wrong)  # type: ignore[arg-type]


def test_without_bubblewrap_execute_names_the_install_command(
        host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox_module.shutil, "which", lambda *a, **k: None)
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        host.box.execute("true")
    host.box.write("/note.md", "still works")
    assert host.box.read("/note.md") == "still works"


def test_a_mount_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="does not exist"):
        spec_sandbox(tmp_path / "root", mounts=[(str(tmp_path / "missing"), "/data")])


# -- the language: validate, build (objects and generated source), run -----------------------

SPEC = """\
agentspec: 1
name: box_app
backends:
  box:
    type: sandbox
    root: ./work
    timeout: 20
    env: {GREETING: hello}
    mounts:
      - {source: ./data, target: /data}
agents:
  helper:
    model: gemini-2.5-flash
    instruction: Use the sandbox.
    filesystem: box
"""
BOX_REPLIES = {"helper": [
    {"call": "write_file", "args": {"file_path": "/notes.md", "content": "alpha\n"}},
    {"call": "execute", "args": {"command": "cat notes.md /data/readme.txt; echo $GREETING; "
                                 "pwd; cat /etc/passwd", "timeout": 10}},
    {"call": "execute", "args": {"command": "sleep 5", "timeout": 0.5}},
    {"text": "Done."}]}


@pytest.fixture
def box_spec(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "readme.txt").write_text("reference data\n")
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC)
    return path


@pytest.mark.parametrize("through", ["memory", "package"])
def test_a_sandbox_spec_runs_through_both_emitters(
        box_spec: Path, monkeypatch: pytest.MonkeyPatch, through: str) -> None:
    from agentspec.compiler import build_objects, compile_spec, emit_package, write_package
    from tests.buildkit import package_loader
    from tests.test_harness_build import _turn

    compiled = compile_spec(box_spec, environ={})
    assert compiled.ok, compiled.diagnostics
    if through == "memory":
        app, problems = build_objects(compiled)
        assert problems == []
        turn = asyncio.run(_turn(app, BOX_REPLIES, "Go"))
    else:
        out = box_spec.parent / "out"
        files = emit_package(compiled, out)
        source = "\n".join(files.values())
        assert "'sandbox'" in source and "'/data'" in source
        assert str(box_spec.parent) not in source  # paths stay relative to the spec
        assert write_package(files, out) == []
        with package_loader(monkeypatch) as load:
            turn = asyncio.run(_turn(load(out, "box_app"), BOX_REPLIES, "Go"))
    ran, slow = turn.results[1], turn.results[2]
    assert ran["exit_code"] != 0  # cat /etc/passwd fails: there is none
    assert ran["output"].splitlines()[:4] == ["alpha", "reference data", "hello", "/workspace"]
    assert "No such file" in ran["output"]
    assert slow["timed_out"] is True and "after 0.5 seconds" in slow["output"]
    assert (box_spec.parent / "work" / "notes.md").read_text() == "alpha\n"


def test_build_without_bubblewrap_is_a_diagnostic(box_spec: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from agentspec.compiler import compile_spec

    monkeypatch.setattr(sandbox_module.shutil, "which", lambda *a, **k: None)
    compiled = compile_spec(box_spec, environ={})
    assert not compiled.ok
    (problem,) = [d for d in compiled.diagnostics if d.is_error]
    assert problem.code == "AS409" and "apt-get install bubblewrap" in str(problem)
    result = CliRunner().invoke(cli, ["build", str(box_spec)], prog_name="agentspec")
    assert result.exit_code != 0 and "AS409" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("mounts", "codes"), [
    ("[{source: ./data, target: /workspace/data}]", ["AS260"]),
    ("[{source: ./data, target: /usr/share/x}]", ["AS260"]),
    ("[{source: ./data, target: /}]", ["AS104"]),
    ("[{source: ./data, target: /a/../etc}]", ["AS260"]),
    ("[{source: ./data, target: /d}, {source: ./data, target: /d/e}]", ["AS260"]),
    ("[{source: ./missing, target: /d}]", ["AS218"]),
    ("[{source: ../outside, target: /d}]", ["AS242"]),
    ("[{source: ./link-out, target: /d}]", ["AS242"]),
    ("[{source: ./data, target: relative}]", ["AS104"]),
    ("[{source: ./work/data, target: /d}]", ["AS260"]),  # a command could make it a link
    ("[{source: work, target: /d}]", ["AS260"]),
    ("[{source: ./other/data, target: /d}]", ["AS260"]),  # another backend's root
    ("[{source: ./data, target: /d, mode: rw}]", ["AS101"]),
])
def test_validate_sandbox_mounts(tmp_path: Path, mounts: str, codes: list[str]) -> None:
    from agentspec.validate.check import check

    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "other/data").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / "outside").mkdir()
    (project / "link-out").symlink_to(tmp_path / "outside")
    path = project / "spec.yaml"
    path.write_text(SPEC.replace("[{source: ./data, target: /data}]", mounts).replace(
        "    mounts:\n      - {source: ./data, target: /data}\n", f"    mounts: {mounts}\n")
        .replace("backends:\n", "backends:\n  other: {type: filesystem, root: ./other}\n"))
    found = [d.code for d in check(path, environ={}).diagnostics if d.is_error]
    assert found == codes


def test_network_true_is_pointed_out(box_spec: Path) -> None:
    from agentspec.validate.check import check

    box_spec.write_text(SPEC.replace("    timeout: 20\n", "    timeout: 20\n    network: true\n"))
    found = [(d.code, d.span.start.line if d.span else 0)
             for d in check(box_spec, environ={}).diagnostics]
    assert found == [("AS261", 8)]


def test_env_values_stay_off_the_host_command_line(host: Host) -> None:
    token = "tok-" + secrets.token_hex(6)
    box = spec_sandbox(host.root, timeout=20, env={"API_TOKEN": token,
                                                     "LD_PRELOAD": "/workspace/none.so"})
    seen: list[bytes] = []
    done = threading.Event()

    def watch() -> None:  # every command line on the host while the command runs
        while not done.is_set():
            for pid in _host_processes("bwrap"):
                with contextlib.suppress(OSError):
                    seen.append(Path(f"/proc/{pid}/cmdline").read_bytes())

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = box.execute("sleep 1; echo token=$API_TOKEN preload=$LD_PRELOAD")
    finally:
        done.set()
        watcher.join()
    assert f"token={token} preload=/workspace/none.so" in result.output
    assert seen and not any(token.encode() in line or b"none.so" in line for line in seen)


def test_agentspec_run_executes_in_the_sandbox(box_spec: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(box_spec.parent)
    (box_spec.parent / "script.yaml").write_text(
        "replies:\n  helper:\n"
        "    - call: execute\n"
        "      args: {command: 'echo made > m.txt; ls /; cat /data/readme.txt'}\n"
        "    - text: Done.\n")
    done = CliRunner().invoke(cli, ["run", "spec.yaml", "Go", "--script", "script.yaml"],
                              prog_name="agentspec")
    assert done.exit_code == 0, done.output
    assert "reference data" in done.output and "workspace" in done.output
    assert "home" not in done.output.split("[helper] execute returned")[1].split("[helper]")[0]
    assert (box_spec.parent / "work" / "m.txt").read_text() == "made\n"
    assert done.output.splitlines()[-1] == "[helper] Done."
    monkeypatch.setattr(sandbox_module.shutil, "which", lambda *a, **k: None)
    missing = CliRunner().invoke(cli, ["run", "spec.yaml", "Go", "--script", "script.yaml"],
                                 prog_name="agentspec")
    assert missing.exit_code != 0 and "AS409" in missing.output
    assert "apt-get install bubblewrap" in missing.output and "Traceback" not in missing.output


def test_a_mount_inside_the_root_is_refused(tmp_path: Path) -> None:
    # a command could replace it by a link to any host directory, which the next sandbox
    # (another process, a restarted worker) would have mounted
    (tmp_path / "root/data").mkdir(parents=True)
    with pytest.raises(BackendError, match="inside the sandbox's root"):
        spec_sandbox(tmp_path / "root", mounts=[(str(tmp_path / "root/data"), "/data")])
