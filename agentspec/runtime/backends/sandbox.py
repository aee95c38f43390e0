"""A filesystem backend whose commands run inside a bubblewrap sandbox.

The file tools work on the root exactly as the filesystem backend's do. `execute` runs
`/bin/sh -c command` under `bwrap` in fresh namespaces (user, mount, PID, IPC, UTS, cgroup,
and network unless `network` is set) with every capability dropped:

* the root is bound at `/workspace` (the working directory and HOME) and is the only
  writable place besides a private, empty `/tmp`;
* `/usr` and the top-level links or directories into it (`/bin`, `/lib`, ...) are bound
  read-only, and of `/etc` only what programs need to start (the loader cache, alternatives,
  certificates; resolver files only with `network`); nothing else of the host exists: no
  `/home`, `/root`, `/work`, `/var`, the project, the host's `/tmp`;
* `/proc` is the sandbox's own, read-only (a new PID namespace: host processes, their
  `environ` and signals are out of reach; kernel settings under `/proc/sys` cannot be
  written) and `/dev` holds only null, zero, full, random, urandom, tty;
* the environment is PATH, HOME, LANG plus `env`, nothing of this process's (handed on
  through bwrap's environment, not its command line, which every host user can read);
* a seccomp filter refuses ptrace, process_vm_readv/writev, perf_event_open, bpf,
  userfaultfd and the keyring calls (and other architectures' system calls), so a command
  cannot reach into bwrap's own init process or the kernel's key stores;
* no new user namespaces inside (bubblewrap 0.8's `--disable-userns`, where available), so
  commands cannot make themselves a root with capabilities again;
* `mounts` are extra host directories bound read-only where the spec says;
* the root and each mount source are opened from `/` one name at a time without following
  links (`roots.py`) on every call, and bwrap binds those descriptors (`--bind-fd`), so a
  directory swapped for `ln -s /` by another sandbox's command is refused, never mounted;
  a mount source inside a writable root (this one's or another backend's) is refused;
* limits: at most `max_processes` processes (RLIMIT_NPROC inside the sandbox's user
  namespace; the kernel exempts a host root from it, so when this process runs as root a
  pids cgroup with the same bound is used when one can be made) and files of at most
  `max_file_bytes` (RLIMIT_FSIZE). On timeout the whole sandbox is killed: bwrap runs with
  `--die-with-parent` as pid 1 of its namespace, and the kernel kills every process of a PID
  namespace when its pid 1 dies, `setsid` or not.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import re
import select
import shutil
import struct
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from agentspec.contract.sandbox import SYSTEM_TOP, WORKSPACE
from agentspec.runtime.backends import BackendError, ExecuteResult
from agentspec.runtime.backends.roots import inside, open_directory
from agentspec.runtime.backends.shell import (
    ShellBackend,
    call_timeout,
    check_command,
    run_captured,
)

__all__ = ["INSTALL_HINT", "WORKSPACE", "SandboxBackend", "SandboxUnavailable",
           "bubblewrap", "sandbox_argv", "sandbox_environment", "seccomp_filter"]

INSTALL_HINT = "apt-get install bubblewrap"
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
#: what of /etc programs need to start and find their libraries and certificates
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl", "ca-certificates",
        "ca-certificates.conf", "localtime", "mime.types")
_ETC_NETWORK = ("resolv.conf", "hosts", "nsswitch.conf", "host.conf", "gai.conf", "services",
                "protocols")
_SANDBOX_UID = 1000
_cgroup_names = itertools.count()


class SandboxUnavailable(BackendError):
    """bubblewrap is not installed (or not runnable)."""


def bubblewrap() -> str:
    """The path of `bwrap`, or SandboxUnavailable saying how to install it."""
    found = shutil.which("bwrap", path=os.environ.get("PATH", "") + ":/usr/bin:/bin")
    if found is None:
        raise SandboxUnavailable(
            "The sandbox backend needs bubblewrap (`bwrap`), which is not installed; install "
            f"it with `{INSTALL_HINT}`.")
    return found


@functools.cache
def _can_disable_userns(bwrap: str) -> bool:
    try:
        shown = subprocess.run([bwrap, "--help"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return b"--disable-userns" in shown.stdout + shown.stderr


def _system_binds() -> Iterator[str]:
    yield from ("--ro-bind", "/usr", "/usr")
    for name in SYSTEM_TOP:
        path = f"/{name}"
        if os.path.islink(path):
            yield from ("--symlink", os.readlink(path), path)
        elif os.path.isdir(path):
            yield from ("--ro-bind", path, path)


def _starts_programs(name: str) -> bool:
    """A variable the dynamic loader, the C library or a shell acts on when a program
    starts: it must not reach bwrap itself, on the host side."""
    return name.startswith(("LD_", "MALLOC_", "GLIBC_")) or name in _STARTUP


_STARTUP = frozenset(("GCONV_PATH", "GETCONF_DIR", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH",
                      "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TMPDIR",
                      "TZDIR", "ENV", "BASH_ENV", "PATH", "HOME", "IFS", "PS4", "SHELLOPTS"))


def sandbox_environment(env: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(what bwrap is started with and hands on, what it sets inside with `--setenv`).

    Values reach the sandbox through bwrap's own environment, readable only by its owner (a
    command line is readable by every user of the host), except variables that act on how
    a program starts (the loader's `LD_*`, the shell's `ENV`, ...): those are set inside
    only, so they never touch bwrap itself."""
    outside = {"PATH": SANDBOX_PATH, "HOME": WORKSPACE, "LANG": "C.UTF-8"}
    inside: dict[str, str] = {}
    for name, value in env.items():
        (inside if _starts_programs(name) else outside)[name] = value
    return outside, inside


def sandbox_argv(bwrap: str, command: str, *, root_fd: int, network: bool,
                 mounts: Sequence[tuple[int, str]], max_processes: int, max_file_bytes: int,
                 seccomp_fd: int | None = None, info_fd: int | None = None,
                 setenv: Mapping[str, str] | None = None) -> list[str]:
    """The bwrap command line running `command`; every value is one argument (no shell
    sees the spec's strings except the command itself, inside the sandbox). The root and
    the mounts' sources are open descriptors (each used once: bwrap closes it), inherited
    by bwrap."""
    argv = [bwrap, "--unshare-all", "--unshare-user", "--uid", str(_SANDBOX_UID),
            "--gid", str(_SANDBOX_UID), "--hostname", "sandbox", "--die-with-parent",
            "--new-session", "--cap-drop", "ALL"]
    if _can_disable_userns(bwrap):  # bubblewrap 0.8: no namespaces of its own inside
        argv.append("--disable-userns")
    if network:
        argv.append("--share-net")
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    if info_fd is not None:  # bwrap writes the host pid of the sandbox's pid 1 there
        argv += ["--info-fd", str(info_fd)]
    argv += _system_binds()
    for name in _ETC + (_ETC_NETWORK if network else ()):
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
             "--bind-fd", str(root_fd), WORKSPACE]
    for source_fd, target in mounts:
        argv += ["--ro-bind-fd", str(source_fd), target]
    # the sandbox's own top directory: nothing new in it; /proc: no kernel settings
    # (/proc/sys), whatever the uid the sandbox's user stands for on the host
    argv += ["--remount-ro", "/", "--remount-ro", "/proc"]
    for name, value in (setenv or {}).items():
        argv += ["--setenv", name, value]
    argv += ["--chdir", WORKSPACE, "--",
             "prlimit", f"--nproc={max_processes}", f"--fsize={max_file_bytes}", "--",
             "/bin/sh", "-c", command]
    return argv


# -- a seccomp filter: system calls that reach other processes or the kernel's keyrings -----
#: (audit architecture, the x32 bit or 0, {name: number}) per machine
_SYSCALLS = {
    "x86_64": (0xC000003E, 0x40000000, {
        "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
        "perf_event_open": 298, "add_key": 248, "request_key": 249, "keyctl": 250,
        "bpf": 321, "userfaultfd": 323}),
    "aarch64": (0xC00000B7, 0, {
        "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
        "perf_event_open": 241, "add_key": 217, "request_key": 218, "keyctl": 219,
        "bpf": 280, "userfaultfd": 282}),
}
_LOAD, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06
_ALLOW, _EPERM = 0x7FFF0000, 0x00050000 | 1


def seccomp_filter(machine: str | None = None) -> bytes | None:
    """A classic BPF program for `bwrap --seccomp`: the calls above (and any other
    architecture's, and x32's) fail with EPERM; None on a machine not listed."""
    found = _SYSCALLS.get(machine or os.uname().machine)
    if found is None:
        return None
    arch, x32, numbers = found
    tests = [(_JGE, x32)] if x32 else []
    tests += [(_JEQ, number) for number in sorted(numbers.values())]
    deny = 4 + len(tests) + 1  # index of the last instruction
    program = [(_LOAD, 0, 0, 4), (_JEQ, 1, 0, arch), (_RET, 0, 0, _EPERM),  # arch, then nr
               (_LOAD, 0, 0, 0)]
    for code, value in tests:
        program.append((code, deny - (len(program) + 1), 0, value))
    program += [(_RET, 0, 0, _ALLOW), (_RET, 0, 0, _EPERM)]
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in program)


def _pids_hierarchy() -> Path | None:
    """The pids cgroup directory this process is in (v1 `pids` or the v2 unified tree)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            candidate = Path("/sys/fs/cgroup/pids") / path.lstrip("/")
            if candidate.is_dir():
                return candidate
    for line in lines:
        if line.startswith("0::"):
            for base in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")):
                candidate = base / line[3:].lstrip("/")
                with contextlib.suppress(OSError):
                    if "pids" in (candidate / "cgroup.controllers").read_text().split():
                        return candidate
    return None


@contextlib.contextmanager
def _pids_cgroup(limit: int) -> Iterator[Path | None]:
    """A new pids cgroup bounded to `limit` processes (None when none can be made), removed
    afterwards with anything still in it killed."""
    parent = _pids_hierarchy() if os.geteuid() == 0 else None
    group: Path | None = None
    if parent is not None:
        candidate = parent / f"agentspec-sandbox-{os.getpid()}-{next(_cgroup_names)}"
        try:
            candidate.mkdir()
            (candidate / "pids.max").write_text(str(limit))
            group = candidate
        except OSError:
            with contextlib.suppress(OSError):
                candidate.rmdir()
    try:
        yield group
    finally:
        if group is not None:
            _remove_cgroup(group)


def _remove_cgroup(group: Path) -> None:
    """Kill what is left in `group` and remove it (trying for up to two seconds)."""
    for _ in range(200):
        with contextlib.suppress(OSError):
            kill = group / "cgroup.kill"
            if kill.exists():
                kill.write_text("1")
            else:
                for pid in (group / "cgroup.procs").read_text().split():
                    with contextlib.suppress(OSError):
                        os.kill(int(pid), 9)
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.01)


class SandboxBackend(ShellBackend):
    """`execute(command)` runs `/bin/sh -c command` inside bubblewrap, in `/workspace` (the
    root). See the module's documentation for what the sandbox allows."""

    def __init__(self, root: Path | str, timeout: float = 120, max_output_bytes: int = 100_000,
                 env: Mapping[str, str] | None = None, hard_links: bool = False,
                 network: bool = False, mounts: Sequence[tuple[str, str]] = (),
                 max_processes: int = 256, max_file_bytes: int = 1 << 30,
                 writable_roots: Sequence[str] = ()) -> None:
        super().__init__(root, timeout=timeout, max_output_bytes=max_output_bytes, env=env,
                         hard_links=hard_links)
        if max_processes < 1 or max_file_bytes < 1:
            raise ValueError("max_processes and max_file_bytes must be at least 1")
        self.network = network
        # the app's other writable roots: a mount source there could be swapped for a link
        writable = [self.root, *(os.path.normpath(os.path.abspath(r)) for r in writable_roots)]
        self.mounts = [(_mount_source(source, writable), target) for source, target in mounts]
        self.max_processes = int(max_processes)
        self.max_file_bytes = int(max_file_bytes)

    def execute(self, command: str, timeout: float | None = None) -> ExecuteResult:
        check_command(command)
        limit = call_timeout(self.timeout, timeout)
        bwrap = bubblewrap()
        outside, inside = sandbox_environment(self.env)
        with _held_directories(self.root, self.mounts) as (root_fd, mounts), \
                _pids_cgroup(self.max_processes + 4) as group, \
                _filter_fd() as seccomp_fd, _info_pipe() as (info_read, info_write):
            # + 4: bwrap's own two processes, with room
            argv = sandbox_argv(bwrap, command, root_fd=root_fd, network=self.network,
                                mounts=mounts, max_processes=self.max_processes,
                                max_file_bytes=self.max_file_bytes, seccomp_fd=seccomp_fd,
                                info_fd=info_write, setenv=inside)
            if group is not None:  # join it before bwrap starts, so every child is counted
                argv = ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"',
                        str(group / "cgroup.procs"), *argv]
            fds = (info_write, root_fd, *(fd for fd, _ in mounts))
            fds += () if seccomp_fd is None else (seccomp_fd,)
            try:
                return run_captured(argv, cwd="/", env=outside, timeout=limit,
                                    max_output_bytes=self.max_output_bytes, pass_fds=fds)
            finally:
                _wait_for_namespace(info_read)


@contextlib.contextmanager
def _info_pipe() -> Iterator[tuple[int, int]]:
    read, write = os.pipe()
    os.set_blocking(read, False)
    try:
        yield read, write
    finally:
        os.close(read)
        os.close(write)


def _wait_for_namespace(info_read: int, limit: float = 10) -> None:
    """Wait until the sandbox's pid 1 is gone. bwrap has exited (or been killed) by now; the
    kernel then kills every process of the namespace, and pid 1's exit completes only once
    they are all gone, so afterwards nothing the command started is left."""
    try:
        info = os.read(info_read, 65536)
    except BlockingIOError:
        return  # bwrap died before making the sandbox
    found = re.search(rb'"child-pid"\s*:\s*(\d+)', info)
    if found is None:
        return
    try:
        pidfd = os.pidfd_open(int(found.group(1)))
    except OSError:
        return  # already gone
    try:
        select.select([pidfd], [], [], limit)  # readable when the process has exited
    finally:
        os.close(pidfd)


@contextlib.contextmanager
def _filter_fd() -> Iterator[int | None]:
    """A pipe's read end holding the seccomp program (it fits the pipe's buffer)."""
    program = seccomp_filter()
    if program is None:
        yield None
        return
    read, write = os.pipe()
    try:
        os.write(write, program)
        os.close(write)
        write = -1
        yield read
    finally:
        os.close(read)
        if write != -1:
            os.close(write)


def _mount_source(source: str, writable: Sequence[str]) -> str:
    """A mount's host directory, absolute: it must be a directory reached without links,
    and not be or lie in a writable root, where a command (of this sandbox or another) could
    swap it for a link that a later call would follow."""
    path = os.path.normpath(os.path.abspath(source))
    found = inside(path, writable)
    if found is not None:
        whose = "the sandbox's root" if found == writable[0] else f"the writable root {found}"
        raise BackendError(f"The sandbox mount {source!r} is inside {whose}.")
    os.close(open_directory(path, what="sandbox mount"))
    return path


@contextlib.contextmanager
def _held_directories(root: str, mounts: Sequence[tuple[str, str]]
                      ) -> Iterator[tuple[int, list[tuple[int, str]]]]:
    """The root's and each mount source's descriptors, opened now without following links
    (roots.py), for bwrap to bind; closed afterwards."""
    held: list[int] = []
    try:
        held.append(open_directory(root))
        for source, _ in mounts:
            held.append(open_directory(source, what="sandbox mount"))
        yield held[0], [(fd, target) for fd, (_, target) in zip(held[1:], mounts, strict=True)]
    finally:
        for fd in held:
            os.close(fd)
