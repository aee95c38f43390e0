"""A filesystem backend whose commands run inside a bubblewrap sandbox.

The file tools work on the root exactly as the filesystem backend's do. `execute` runs
`/bin/sh -c command` under `bwrap` in fresh namespaces (user, mount, PID, IPC, UTS, cgroup,
and network unless `network` is set) as uid 1000 inside, which is this process's user on the
host, or, when this process is root, uid 2000000000 (`userns.py`: never the host's root):

* the root is bound at `/workspace` (the working directory and HOME) and is the only
  writable place besides a private, empty `/tmp` (a tmpfs of `tmp_size_mb`);
* `/usr` and the top-level links or directories into it (`/bin`, `/lib`, ...) are bound
  read-only, and of `/etc` only what programs need to start (the loader cache, alternatives,
  certificates; resolver files only with `network`); nothing else of the host exists: no
  `/home`, `/root`, `/work`, `/var`, the project, the host's `/tmp`;
* `/proc` is the sandbox's own, read-only (a new PID namespace: host processes, their
  `environ` and signals are out of reach; kernel settings under `/proc/sys` cannot be
  written) and `/dev` holds only null, zero, full, random, urandom, tty;
* the environment is PATH, HOME, LANG plus `env`, nothing of this process's; `env` is set
  inside through `bwrap --args` from a memory file, never on a command line (which every
  host user can read) nor in bwrap's own environment;
* every capability dropped, except, for a host root's sandbox, CAP_DAC_OVERRIDE and
  CAP_FOWNER in its own user namespace (the workspace's root-owned files stay readable,
  writable and chmod-able);
* a seccomp filter (`seccomp.py`) refuses ptrace, process_vm_readv/writev, perf_event_open,
  bpf, userfaultfd, the keyring calls, any mode with set-uid or set-gid, new user
  namespaces, io_uring and other architectures' system calls;
* no new user namespaces inside (the seccomp filter, and bubblewrap 0.8's `--disable-userns`), so
  commands cannot make themselves a root with capabilities again;
* `mounts` are extra host directories bound read-only where the spec says; one holding a
  Unix socket is refused unless `allow_sockets` (looked for before each command);
* the root and each mount source are opened from `/` one name at a time without following
  links (`roots.py`) on every call, and bwrap binds those descriptors (`--bind-fd`), so a
  directory swapped for `ln -s /` by another sandbox's command is refused, never mounted;
  a mount source inside a writable root (this one's or another backend's) is refused;
* limits: at most `max_processes` processes (RLIMIT_NPROC in the sandbox's own user
  namespace, which the kernel enforces since the sandbox's host user is never root; as root
  a pids cgroup too, where one can be made), files of at most `max_file_bytes`
  (RLIMIT_FSIZE), `max_memory_mb` of data per process (RLIMIT_DATA) and, as root where a
  memory cgroup can be made, for the whole sandbox. On timeout the whole sandbox is killed:
  bwrap runs with `--die-with-parent` as pid 1 of its namespace, and the kernel kills every
  process of a PID namespace when its pid 1 dies, `setsid` or not.

After each command, once nothing of it runs, the workspace is walked on the host side
(`trees.py`): set-uid and set-gid bits are removed wherever they are, and the space it uses
is compared with `max_workspace_mb`; while it is over, commands run with RLIMIT_FSIZE 0 (they
may delete files, not write any).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentspec.contract.sandbox import SYSTEM_TOP, WORKSPACE
from agentspec.runtime.backends import BackendError, ExecuteResult
from agentspec.runtime.backends.bwrap_fds import (
    args_fd,
    filter_fd,
    info_pipe,
    root_namespace,
    wait_for_namespace,
)
from agentspec.runtime.backends.cgroups import sandbox_groups
from agentspec.runtime.backends.roots import inside, open_directory
from agentspec.runtime.backends.seccomp import seccomp_filter
from agentspec.runtime.backends.shell import (
    ShellBackend,
    call_timeout,
    check_command,
    run_captured,
)
from agentspec.runtime.backends.trees import sockets_in, sweep
from agentspec.runtime.backends.userns import INSIDE_ID, KEPT_CAPS

__all__ = ["INSTALL_HINT", "WORKSPACE", "Limits", "SandboxBackend", "SandboxUnavailable",
           "bubblewrap", "sandbox_argv", "sandbox_limits", "sandbox_environment", "seccomp_filter"]

INSTALL_HINT = "apt-get install bubblewrap"
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
#: what of /etc programs need to start and find their libraries and certificates
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl", "ca-certificates",
        "ca-certificates.conf", "localtime", "mime.types")
_ETC_NETWORK = ("resolv.conf", "hosts", "nsswitch.conf", "host.conf", "gai.conf", "services",
                "protocols")
#: directories of the bound /etc that only root reads: a host root's sandbox could
_HIDDEN = ("/etc/ssl/private",)


class SandboxUnavailable(BackendError):
    """bubblewrap is not installed (or not runnable)."""


def bubblewrap() -> str:
    """The path of `bwrap`, or SandboxUnavailable saying how to install it."""
    found = shutil.which("bwrap", path=os.environ.get("PATH", "") + ":/usr/bin:/bin")
    if found is None:
        raise SandboxUnavailable(
            "The sandbox backend needs bubblewrap (`bwrap`), which is not installed; install "
            f"it with `{INSTALL_HINT}`.")
    check_bubblewrap(found)
    return found


@functools.cache
def _options(bwrap: str) -> bytes:
    """What `bwrap --help` says (the options this bubblewrap knows)."""
    try:
        shown = subprocess.run([bwrap, "--help"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return b""
    return shown.stdout + shown.stderr


def _can_disable_userns(bwrap: str) -> bool:
    return b"--disable-userns" in _options(bwrap)


def check_bubblewrap(bwrap: str) -> None:
    """SandboxUnavailable when this bubblewrap cannot bound `/tmp` (`--size`, 0.8 and
    later): the sandbox would run with a `/tmp` as large as the host's memory."""
    if b"--size" not in _options(bwrap):
        raise SandboxUnavailable(
            "The sandbox needs bubblewrap 0.8 or later (`bwrap --size` bounds its `/tmp` to "
            "`tmp_size_mb`); this one is older. Install a newer bubblewrap.")


def _system_binds() -> Iterator[str]:
    yield from ("--ro-bind", "/usr", "/usr")
    for name in SYSTEM_TOP:
        path = f"/{name}"
        if os.path.islink(path):
            yield from ("--symlink", os.readlink(path), path)
        elif os.path.isdir(path):
            yield from ("--ro-bind", path, path)


def sandbox_environment(env: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """(what bwrap itself is started with, the `--setenv` arguments it reads from a file
    descriptor). Every value of `env` is set inside only: none reaches bwrap's command line
    (which every user of the host can read) or acts on bwrap itself (the loader's `LD_*`)."""
    outside = {"PATH": SANDBOX_PATH, "HOME": WORKSPACE, "LANG": "C.UTF-8"}
    inside: list[str] = []
    for name, value in env.items():
        # the arguments are NUL-separated: a NUL would smuggle in options of bwrap's own
        if not name or "=" in name or "\x00" in name or "\x00" in value:
            raise BackendError(f"The sandbox's environment variable {name!r} has an empty "
                               "name, `=` in its name or a NUL byte; it cannot be set.")
        inside += ["--setenv", name, value]
    return outside, inside


@dataclass(frozen=True)
class Limits:
    """What one sandbox may use (see the module's documentation for how each is enforced)."""

    processes: int = 256
    file_bytes: int = 1 << 30
    memory_bytes: int = 4096 << 20
    tmp_bytes: int = 1024 << 20
    workspace_bytes: int = 10240 << 20

    def __post_init__(self) -> None:
        if min(self.processes, self.file_bytes, self.memory_bytes, self.tmp_bytes,
               self.workspace_bytes) < 1:
            raise ValueError("sandbox limits must be at least 1")


def sandbox_limits(definition: Mapping[str, Any]) -> Limits:
    """The limits of a spec's sandbox definition (its fields, defaults where missing)."""
    return Limits(processes=definition.get("max_processes", 256),
                  file_bytes=definition.get("max_file_bytes", 1 << 30),
                  memory_bytes=definition.get("max_memory_mb", 4096) << 20,
                  tmp_bytes=definition.get("tmp_size_mb", 1024) << 20,
                  workspace_bytes=definition.get("max_workspace_mb", 10240) << 20)


def sandbox_argv(bwrap: str, command: str, *, root_fd: int, network: bool,
                 mounts: Sequence[tuple[int, str]], limits: Limits,
                 seccomp_fd: int | None = None, info_fd: int | None = None,
                 args_fd: int | None = None, full: bool = False,
                 userns_fd: int | None = None) -> list[str]:
    """The bwrap command line running `command`; every value is one argument (no shell
    sees the spec's strings except the command itself, inside the sandbox). The root and
    the mounts' sources are open descriptors (each used once: bwrap closes it), inherited by
    bwrap. `args_fd` holds more options (the environment's `--setenv`), kept off the command
    line. `full`: the workspace is over its quota, no file may grow. `userns_fd`: the
    namespace of a host root's sandbox (`userns.py`)."""
    if userns_fd is None:  # bwrap maps the sandbox's user to this process's
        argv = [bwrap, "--unshare-all", "--unshare-user", "--uid", str(INSIDE_ID),
                "--gid", str(INSIDE_ID), "--cap-drop", "ALL"]
        if _can_disable_userns(bwrap):  # bubblewrap 0.8: no namespaces of its own inside
            argv.append("--disable-userns")
        if network:
            argv.append("--share-net")
    else:  # a host root's: setpriv becomes the inside user, keeping only KEPT_CAPS
        argv = [bwrap, "--userns", str(userns_fd), "--unshare-pid", "--unshare-ipc",
                "--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL"]
        for cap in ("setuid", "setgid", "setpcap", *KEPT_CAPS):
            argv += ["--cap-add", f"CAP_{cap.upper()}"]
        if not network:
            argv.append("--unshare-net")
    argv += ["--hostname", "sandbox", "--die-with-parent", "--new-session"]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    if info_fd is not None:  # bwrap writes the host pid of the sandbox's pid 1 there
        argv += ["--info-fd", str(info_fd)]
    argv += _system_binds()
    for name in _ETC + (_ETC_NETWORK if network else ()):
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    hidden = [path for path in _HIDDEN if os.path.isdir(path)]
    for path in hidden:  # an empty, read-only directory instead
        argv += ["--size", "4096", "--tmpfs", path, "--remount-ro", path]
    # bwrap mounts every bind nosuid and nodev: nothing set-uid runs from the workspace
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", str(limits.tmp_bytes),
             "--tmpfs", "/tmp", "--bind-fd", str(root_fd), WORKSPACE]
    for source_fd, target in mounts:
        argv += ["--ro-bind-fd", str(source_fd), target]
    # the sandbox's own top directory: nothing new in it; /proc: no kernel settings
    # (/proc/sys), whatever the uid the sandbox's user stands for on the host
    argv += ["--remount-ro", "/", "--remount-ro", "/proc"]
    if args_fd is not None:
        argv += ["--args", str(args_fd)]
    file_bytes = 0 if full else min(limits.file_bytes, limits.workspace_bytes)
    argv += ["--chdir", WORKSPACE, "--"]
    if userns_fd is not None:
        kept = ",".join(f"+{cap}" for cap in KEPT_CAPS)
        argv += ["setpriv", f"--reuid={INSIDE_ID}", f"--regid={INSIDE_ID}", "--clear-groups",
                 f"--inh-caps=-all,{kept}", f"--ambient-caps=-all,{kept}",
                 f"--bounding-set=-all,{kept}", "--"]
    argv += ["prlimit", f"--nproc={limits.processes}", f"--fsize={file_bytes}",
             f"--data={limits.memory_bytes}", "--", "/bin/sh", "-c", command]
    return argv


class SandboxBackend(ShellBackend):
    """`execute(command)` runs `/bin/sh -c command` inside bubblewrap, in `/workspace` (the
    root). See the module's documentation for what the sandbox allows."""

    def __init__(self, root: Path | str, timeout: float = 120, max_output_bytes: int = 100_000,
                 env: Mapping[str, str] | None = None, hard_links: bool = False,
                 network: bool = False, mounts: Sequence[tuple[str, str]] = (),
                 limits: Limits | None = None, allow_sockets: bool = False,
                 writable_roots: Sequence[str] = ()) -> None:
        super().__init__(root, timeout=timeout, max_output_bytes=max_output_bytes, env=env,
                         hard_links=hard_links)
        self.network = network
        # the app's other writable roots: a mount source there could be swapped for a link
        writable = [self.root, *(os.path.normpath(os.path.abspath(r)) for r in writable_roots)]
        self.mounts = [(_mount_source(source, writable), target) for source, target in mounts]
        self.limits = limits or Limits()
        self.allow_sockets = allow_sockets
        self._full = False  # the last sweep found the workspace over its quota

    def execute(self, command: str, timeout: float | None = None) -> ExecuteResult:
        check_command(command)
        limit = call_timeout(self.timeout, timeout)
        bwrap = bubblewrap()
        outside, inside = sandbox_environment(self.env)
        # the root and mounts as held descriptors: what is checked, bound and swept is one
        # directory each, whatever a command (of this sandbox or another) renames meanwhile
        with _held_directories(self.root, self.mounts) as (root_fd, mounts):
            self._check_mounts(mounts)
            full = self._over_quota(root_fd)
            result = self._run(bwrap, command, limit, outside, inside, root_fd, mounts, full)
            return self._after(root_fd, result, [full] if full else [])

    def _run(self, bwrap: str, command: str, limit: float, outside: Mapping[str, str],
             inside: list[str], root_fd: int, mounts: list[tuple[int, str]],
             full: str | None) -> ExecuteResult:
        # + 4: bwrap's own two processes, with room
        with sandbox_groups(self.limits.processes + 4, self.limits.memory_bytes) as groups, \
                filter_fd() as seccomp_fd, info_pipe() as (info_read, info_write), \
                args_fd(inside) as env_fd, root_namespace() as userns_fd:
            argv = sandbox_argv(bwrap, command, root_fd=root_fd, network=self.network,
                                mounts=mounts, limits=self.limits, seccomp_fd=seccomp_fd,
                                info_fd=info_write, args_fd=env_fd, full=full is not None,
                                userns_fd=userns_fd)
            if groups.procs:  # join them before bwrap starts, so every child is counted
                joins = "".join(f'echo $$ > "${index + 1}" && '
                                for index in range(len(groups.procs)))
                argv = ["/bin/sh", "-c", f'{joins}shift {len(groups.procs)} && exec "$@"',
                        "agentspec-sandbox", *map(str, groups.procs), *argv]
            fds = tuple(fd for fd in (seccomp_fd, info_write, env_fd, userns_fd, root_fd,
                                      *(fd for fd, _ in mounts)) if fd is not None)
            try:
                return run_captured(argv, cwd="/", env=outside, timeout=limit,
                                    max_output_bytes=self.max_output_bytes, pass_fds=fds)
            finally:
                wait_for_namespace(info_read)

    def _over_quota(self, root_fd: int) -> str | None:
        """While the workspace is over its quota, a note saying so: such a command may
        delete files but not write any (RLIMIT_FSIZE 0). Measured again first, since files
        may have been removed."""
        quota = self.limits.workspace_bytes
        if not self._full:
            return None
        used = sweep(root_fd).used_bytes
        self._full = used > quota
        return _full_note(used, quota, "this command could not write files") \
            if self._full else None

    def _check_mounts(self, held: list[tuple[int, str]]) -> None:
        if self.allow_sockets:
            return
        for (source, target), (source_fd, _) in zip(self.mounts, held, strict=True):
            sockets, unchecked = sockets_in(source_fd)
            if sockets or unchecked:
                what = f"the Unix socket `{sockets[0]}`" if sockets else \
                    f"a directory it cannot look into for sockets (`{unchecked[0]}`: " \
                    "unreadable, or nested too deep)"
                raise BackendError(
                    f"The sandbox mount {source!r} (at `{target}`) holds {what}: through it "
                    "commands could talk to the host service behind it, network or not. "
                    "Mount a directory without sockets, or set `allow_sockets: true`.")

    def _after(self, root_fd: int, result: ExecuteResult, notes: list[str]) -> ExecuteResult:
        """The host-side sweep of the workspace once nothing of the sandbox runs: set-id
        bits removed, the space it uses checked against the quota."""
        found = sweep(root_fd)
        if found.stripped:
            notes.append("set-uid/set-gid bits removed from " + ", ".join(found.stripped[:5]))
        if found.shared:
            notes.append("set-uid/set-gid files with other names (hard links) left as they are: "
                         + ", ".join(found.shared[:5]))
        if found.unchecked:
            notes.append(f"`{found.unchecked[0]}` could not be checked for set-id bits and "
                         "space (unreadable, or nested too deep)")
        quota = self.limits.workspace_bytes
        self._full = found.used_bytes > quota
        if self._full and not notes:
            notes.append(_full_note(found.used_bytes, quota, "further commands may delete "
                                    "files but not write any until it is back under"))
        if not notes:
            return result
        return dataclasses.replace(
            result, output=result.output + "".join(f"\n... [{note}]" for note in notes))


def _full_note(used: int, quota: int, then: str) -> str:
    return (f"the workspace uses {used >> 20} MB, over its `max_workspace_mb` of "
            f"{quota >> 20}: {then}")


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
