"""Sandbox scenarios of tests/test_sandbox_attacks.py, run in the test process (as root) or
as `python -m tests.sandbox_driver SCENARIO BASE [JSON]` under an ordinary user made by the
test; each prints (returns) plain data the test checks on the host side. Secrets are made
here, never passed on a command line."""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import socket
import stat
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentspec.runtime.backends import BackendError
from agentspec.runtime.backends import cgroups as cgroups_module
from agentspec.runtime.backends.sandbox import Limits, SandboxBackend

Result = dict[str, Any]

#: this driver's sandboxes (it runs as another user, without the spec models: its own values)
_LIMITS = Limits(processes=256, file_bytes=1 << 30, memory_bytes=4096 << 20,
                 tmp_bytes=1024 << 20, workspace_bytes=10240 << 20)


def _box(root: Path, **given: Any) -> SandboxBackend:
    return SandboxBackend(root, **{"timeout": 60, "max_output_bytes": 100_000,
                                   "limits": _LIMITS, **given})


def _set_id_files(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in [root, *root.rglob("*")]
                  if not path.is_symlink() and path.lstat().st_mode & 0o6000)


def setid(base: Path, args: Result) -> Result:
    """Item 1: a set-uid copy of python3, made every way a command can."""
    box = _box(base / "ws")
    (base / "ws").mkdir(exist_ok=True)
    (base / "ws" / "tries.py").write_text(
        "import os, stat\n"
        "for name, make in [('open', lambda: os.close(os.open('o', os.O_CREAT | os.O_WRONLY,"
        " 0o4755))), ('mkdir', lambda: os.mkdir('d', 0o2755)),"
        " ('mknod', lambda: os.mknod('n', stat.S_IFREG | 0o4755)),"
        " ('fchmod', lambda: os.fchmod(os.open('py', os.O_RDONLY), 0o6755)),"
        " ('chmod', lambda: os.chmod('py', 0o4755))]:\n"
        "    try:\n        make(); print(name, 'made')\n"
        "    except OSError as e:\n        print(name, 'refused', e.errno)\n")
    result = box.execute(
        "cp /usr/bin/python3 py && chmod 4755 py; chmod u+s,g+s py; install -m 4755 py py2;"
        " python3 tries.py; chmod 1777 .; chmod 755 .; chmod 700 py; chmod 755 py; ls -l py;"
        " grep ' /workspace ' /proc/self/mountinfo")
    return {"output": result.output, "set_id": _set_id_files(base / "ws")}


def sweep(base: Path, args: Result) -> Result:
    """Item 1, the host side: a set-id file already in the workspace loses its bits."""
    root = base / "ws"
    root.mkdir(exist_ok=True)
    planted = root / "sub" / "planted"
    planted.parent.mkdir()
    planted.write_bytes(b"#!/bin/sh\n")
    os.chmod(planted, 0o6755)
    os.chmod(planted.parent, 0o2755)
    result = _box(root).execute("true")
    return {"output": result.output, "set_id": _set_id_files(root),
            "mode": stat.S_IMODE(planted.stat().st_mode)}


def sockets(base: Path, args: Result) -> Result:
    """Item 8: a Unix socket deep in a read-only mount."""
    data = base / "data"
    (data / "run" / "deep").mkdir(parents=True, exist_ok=True)
    (base / "ws").mkdir(exist_ok=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(data / "run" / "deep" / "service.sock"))
    # connectable by any user: a host root's sandbox is an unprivileged one (userns.py)
    os.chmod(data / "run" / "deep" / "service.sock", 0o777)
    server.listen(4)
    hits: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                hits.append(conn.recv(100))

    threading.Thread(target=serve, daemon=True).start()
    command = ("python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); "
               "s.connect('/data/run/deep/service.sock'); s.sendall(b'reached'); "
               "print('CONNECTED')\"")
    found: Result = {}
    try:
        box = _box(base / "ws", mounts=[(str(data), "/data")])
        try:
            found["refused"] = box.execute(command).output
        except BackendError as error:
            found["refused"] = f"BackendError: {error}"
        found["hits_refused"] = len(hits)
        allowed = _box(base / "ws", mounts=[(str(data), "/data")],
                                 allow_sockets=True)
        found["allowed"] = allowed.execute(command).output
        found["hits"] = [hit.decode() for hit in hits]
    finally:
        server.close()
    return found


def _cmdlines() -> list[bytes]:
    seen = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                seen.append(Path(f"/proc/{entry}/cmdline").read_bytes())
            except OSError:
                continue
    return seen


def env_cmdline(base: Path, args: Result) -> Result:
    """Item 19: `env` values (startup ones included) on no host command line while the
    command runs."""
    root = base / "ws"
    root.mkdir(exist_ok=True)
    os.mkfifo(root / "gate")
    values = {name: f"v{secrets.token_hex(8)}" for name in
              ("API_TOKEN", "MALLOC_ARENA_TEST", "GCONV_PATH", "TZDIR")}
    values["LD_LIBRARY_PATH"] = f"/workspace/lib{secrets.token_hex(8)}"
    box = _box(root, env=values)
    done: list[str] = []
    echo = " ".join(f"${name}" for name in values)
    runner = threading.Thread(target=lambda: done.append(box.execute(
        f"echo started > started; read line < gate; echo {echo}").output))
    runner.start()
    deadline = time.monotonic() + 60
    while not (root / "started").exists() and time.monotonic() < deadline:
        time.sleep(0.01)  # polling for the command to be running, not ordering by time
    lines = _cmdlines()
    with open(root / "gate", "w") as gate:
        gate.write("go\n")
    runner.join()
    return {"started": (root / "started").exists(), "bwrap_seen": any(
        b"bwrap" in line for line in lines),
            "leaked": sorted(name for name, value in values.items()
                             if any(value.encode() in line for line in lines)),
            "inside": done[0].split() == list(values.values()), "output": done[0]}


def processes(base: Path, args: Result) -> Result:
    """Item 11: `max_processes` holds; `no_cgroup` makes every cgroup unavailable (as in
    the usual container)."""
    real = cgroups_module.hierarchy
    if args.get("no_cgroup"):
        cgroups_module.hierarchy = lambda controller: None  # type: ignore[assignment]
    (base / "ws").mkdir(exist_ok=True)
    box = _box(base / "ws", limits=dataclasses.replace(_LIMITS, processes=16))
    try:
        result = box.execute("(for i in $(seq 100); do sleep 30 & done) 2>/dev/null; "
                             "set -- /proc/[0-9]*; echo count=$#")
    except BackendError as error:
        return {"refused": str(error)}
    finally:
        cgroups_module.hierarchy = real  # type: ignore[assignment]
    return {"count": int(result.output.split("count=")[1].split()[0])}


def limits(base: Path, args: Result) -> Result:
    """Item 21: memory, /tmp, io_uring and the workspace quota."""
    root = base / "ws"
    root.mkdir(exist_ok=True)
    box = _box(root, limits=dataclasses.replace(
        _LIMITS, memory_bytes=64 << 20, tmp_bytes=8 << 20, workspace_bytes=4 << 20))
    found: Result = {}
    found["memory"] = box.execute(
        "python3 -c \"b = bytearray(200 << 20); print('ALLOCATED')\"").output
    whole = _box(root, limits=dataclasses.replace(
        _LIMITS, memory_bytes=64 << 20, tmp_bytes=100 << 20, file_bytes=100 << 20))
    with cgroups_module.sandbox_groups(64, 64 << 20) as groups:
        found["memory_group"] = "memory" in groups.bounded
    found["sandbox_memory"] = whole.execute(  # 50 MB in /tmp (memory), then 40 MB of data
        "head -c 50000000 /dev/zero > /tmp/f; python3 -c \"b = bytearray(40 << 20); "
        "print('ALLOCATED')\"").output
    found["tmp"] = box.execute("df -k /tmp | tail -1; for i in 1 2 3; do "
                               "head -c 3000000 /dev/zero > /tmp/f$i; done").output
    found["io_uring"] = box.execute(
        "python3 -c \"import ctypes; l = ctypes.CDLL(None, use_errno=True); "
        "print(l.syscall(425, 8, ctypes.create_string_buffer(120)), ctypes.get_errno())\"")\
        .output
    found["fill"] = box.execute("for i in 1 2 3; do head -c 2000000 /dev/urandom > f$i; done; "
                                "ls").output
    found["full"] = box.execute("head -c 1000 /dev/zero > more; echo rc=$?; rm f1 f2 f3; "
                                "echo removed").output
    found["more_exists"] = (root / "more").exists() and (root / "more").stat().st_size > 0
    found["after"] = box.execute("head -c 1000 /dev/zero > more; echo rc=$?").output
    return found


SCENARIOS: dict[str, Callable[[Path, Result], Result]] = {
    function.__name__: function for function in (setid, sweep, sockets, env_cmdline,
                                                  processes, limits)}

if __name__ == "__main__":
    name, directory = sys.argv[1], Path(sys.argv[2])
    print(json.dumps(SCENARIOS[name](directory, json.loads(sys.argv[3]) if sys.argv[3:]
                                     else {})))
