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
* every capability dropped, a host root's sandbox's too (`userns.py`): mounts are read with
  the permissions of a user who owns none of their files; the workspace's directories and
  single-named files are given to uid 2000000000 before each command (`trees.sweep`), so the
  file tools' files stay writable;
* a seccomp filter (`seccomp.py`) refuses ptrace, process_vm_readv/writev, perf_event_open,
  bpf, userfaultfd, the keyring calls, any mode with set-uid or set-gid, new user
  namespaces, io_uring and other architectures' system calls;
* no new user namespaces inside (the seccomp filter, and bubblewrap 0.8's `--disable-userns`), so
  commands cannot make themselves a root with capabilities again;
* `mounts` are extra host directories bound read-only where the spec says; one holding a
  Unix socket or a FIFO (a channel to the host process at its other end) is refused unless
  `allow_sockets` (looked for before each command); device files are inert (`nodev`);
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
is compared with `max_workspace_mb`; while it is over, or holds a directory the walk cannot
enter (too deep, unreadable: of unknown size), commands run with RLIMIT_FSIZE 0 (they may
delete files, not write any). A command the memory cgroup killed says so.
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

from agentspec.contract.backends import SandboxDef
from agentspec.contract.sandbox import SYSTEM_TOP, WORKSPACE
from agentspec.runtime.backends import BackendError, ExecuteResult
from agentspec.runtime.backends.bwrap_fds import (
    args_fd,
    filter_fd,
    info_pipe,
    root_namespace,
    wait_for_namespace,
)
from agentspec.runtime.backends.cgroups import Groups, sandbox_groups
from agentspec.runtime.backends.roots import inside, open_directory
from agentspec.runtime.backends.seccomp import seccomp_filter
from agentspec.runtime.backends.shell import (
    ShellBackend,
    call_timeout,
    check_command,
    run_captured,
)
from agentspec.runtime.backends.trees import MAX_DEPTH, Sweep, channels_in, sweep
from agentspec.runtime.backends.userns import HOST_ID, INSIDE_ID, SETUP_CAPS, enter

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


def _parents(paths: Sequence[str]) -> list[str]:
    """The directories above each of `paths` (absolute), outermost first, each once."""
    found: dict[str, None] = {}
    for path in paths:
        parts = path.strip("/").split("/")[:-1]
        for end in range(1, len(parts) + 1):
            found["/" + "/".join(parts[:end])] = None
    return list(found)


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

    processes: int
    file_bytes: int
    memory_bytes: int
    tmp_bytes: int
    workspace_bytes: int

    def __post_init__(self) -> None:
        if min(self.processes, self.file_bytes, self.memory_bytes, self.tmp_bytes,
               self.workspace_bytes) < 1:
            raise ValueError("sandbox limits must be at least 1")


def sandbox_limits(definition: SandboxDef) -> Limits:
    """The limits of a spec's sandbox definition."""
    return Limits(processes=definition.max_processes, file_bytes=definition.max_file_bytes,
                  memory_bytes=definition.max_memory_mb << 20,
                  tmp_bytes=definition.tmp_size_mb << 20,
                  workspace_bytes=definition.max_workspace_mb << 20)


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
    namespace of a host root's sandbox (`userns.py`), which `nsenter` enters."""
    if userns_fd is None:  # bwrap maps the sandbox's user to this process's
        argv = [bwrap, "--unshare-all", "--unshare-user", "--uid", str(INSIDE_ID),
                "--gid", str(INSIDE_ID), "--cap-drop", "ALL"]
        if _can_disable_userns(bwrap):  # bubblewrap 0.8: no namespaces of its own inside
            argv.append("--disable-userns")
        if network:
            argv.append("--share-net")
    else:  # a host root's: bwrap is the namespace's root, setpriv makes the command 1000
        argv = [*enter(userns_fd), bwrap, "--unshare-pid", "--unshare-ipc", "--unshare-uts",
                "--unshare-cgroup-try", "--cap-drop", "ALL"]
        for cap in SETUP_CAPS:
            argv += ["--cap-add", f"CAP_{cap.upper()}"]
        if not network:
            argv.append("--unshare-net")
    argv += ["--hostname", "sandbox", "--die-with-parent", "--new-session"]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    if info_fd is not None:  # bwrap writes the host pid of the sandbox's pid 1 there
        argv += ["--info-fd", str(info_fd)]
    argv += _system_binds()
    # bwrap makes the directories above a bound file 0700 (its uid's only): those of /etc
    # and of the mounts are made first, 0755, for a host root's sandbox, whose uid is not
    # the one bwrap runs as
    for parent in _parents(["/etc/ld.so.cache", *(target for _, target in mounts)]):
        argv += ["--perms", "0755", "--dir", parent]
    for name in _ETC + (_ETC_NETWORK if network else ()):
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    hidden = [path for path in _HIDDEN if os.path.isdir(path)]
    for path in hidden:  # an empty, read-only directory instead
        argv += ["--size", "4096", "--tmpfs", path, "--remount-ro", path]
    # bwrap mounts every bind nosuid and nodev: nothing set-uid runs from the workspace
    # /tmp as everywhere (1777): a host root's bwrap makes it as the namespace's root
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", str(limits.tmp_bytes),
             "--perms", "1777", "--tmpfs", "/tmp", "--bind-fd", str(root_fd), WORKSPACE]
    for source_fd, target in mounts:
        argv += ["--ro-bind-fd", str(source_fd), target]
    # the sandbox's own top directory: nothing new in it; /proc: no kernel settings
    # (/proc/sys), whatever the uid the sandbox's user stands for on the host
    argv += ["--remount-ro", "/", "--remount-ro", "/proc"]
    if args_fd is not None:
        argv += ["--args", str(args_fd)]
    file_bytes = 0 if full else min(limits.file_bytes, limits.workspace_bytes)
    argv += ["--chdir", WORKSPACE, "--"]
    if userns_fd is not None:  # every uid, gid and capability of the namespace's root gone
        argv += ["setpriv", f"--reuid={INSIDE_ID}", f"--regid={INSIDE_ID}", "--clear-groups",
                 "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all", "--"]
    argv += ["prlimit", f"--nproc={limits.processes}", f"--fsize={file_bytes}",
             f"--data={limits.memory_bytes}", "--", "/bin/sh", "-c", command]
    return argv


class SandboxBackend(ShellBackend):
    """`execute(command)` runs `/bin/sh -c command` inside bubblewrap, in `/workspace` (the
    root). See the module's documentation for what the sandbox allows."""

    def __init__(self, root: Path | str, *, timeout: float, max_output_bytes: int,
                 limits: Limits, env: Mapping[str, str] | None = None,
                 hard_links: bool = False, network: bool = False,
                 mounts: Sequence[tuple[str, str]] = (), allow_sockets: bool = False,
                 writable_roots: Sequence[str] = ()) -> None:
        super().__init__(root, timeout=timeout, max_output_bytes=max_output_bytes, env=env,
                         hard_links=hard_links)
        self.network = network
        # the app's other writable roots: a mount source there could be swapped for a link
        writable = [self.root, *(os.path.normpath(os.path.abspath(r)) for r in writable_roots)]
        self.mounts = [(_mount_source(source, writable), target) for source, target in mounts]
        self.limits = limits
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
            # a host root's: the file tools' files given to the sandbox's user (userns.py)
            before = sweep(root_fd, owner=HOST_ID) if 0 in (os.getuid(), os.geteuid()) \
                else None
            full = self._over_quota(root_fd, before)
            result = self._run(bwrap, command, limit, outside, inside, root_fd, mounts, full)
            return self._after(root_fd, result, full, before)

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
            fds = tuple(fd for fd in (seccomp_fd, info_write, env_fd, root_fd,
                                      *(fd for fd, _ in mounts)) if fd is not None)
            try:
                result = run_captured(argv, cwd="/", env=outside, timeout=limit,
                                      max_output_bytes=self.max_output_bytes, pass_fds=fds)
            finally:
                wait_for_namespace(info_read)
            return _noted(result, self._memory_notes(result, groups))

    def _memory_notes(self, result: ExecuteResult, groups: Groups) -> list[str]:
        """What is known of a kill for memory: the cgroup's count, or, without one, that
        `max_memory_mb` kills nothing (RLIMIT_DATA makes an allocation past it fail)."""
        mb = self.limits.memory_bytes >> 20
        killed = groups.oom_kills()
        if killed:
            return [f"the sandbox used up its `max_memory_mb` of {mb} (its `/tmp` included): "
                    f"the kernel killed {killed} of its processes"]
        if groups.memory is None and not result.timed_out and result.exit_code in (-9, 137):
            return [f"the command was killed (SIGKILL), not by `max_memory_mb` ({mb}): with no "
                    "memory cgroup here it bounds each process's data, where an allocation "
                    "past it fails; the host's out-of-memory killer or the command itself "
                    "sent the signal"]
        return []

    def _over_quota(self, root_fd: int, before: Sweep | None) -> str | None:
        """While the workspace is over its quota, a note saying so: such a command may
        delete files but not write any (RLIMIT_FSIZE 0). Measured again first (`before`, a
        walk just made), since files may have been removed."""
        if not self._full:
            return None
        found = before or sweep(root_fd)
        self._full = self._is_full(found)
        return self._full_note(found, "this command could not write files") \
            if self._full else None

    def _is_full(self, found: Sweep) -> bool:
        """Over the quota, or holding what the walk could not measure (too deep or
        unreadable), which may be any size."""
        return found.used_bytes > self.limits.workspace_bytes or bool(found.unchecked)

    def _full_note(self, found: Sweep, then: str) -> str:
        quota = f"its `max_workspace_mb` of {self.limits.workspace_bytes >> 20}"
        if found.unchecked:
            return (f"`{_short(found.unchecked[0])}` could not be measured (unreadable, or "
                    f"more than {MAX_DEPTH} levels deep), so the workspace counts as over "
                    f"{quota}: {then}")
        return f"the workspace uses {found.used_bytes >> 20} MB, over {quota}: {then}"

    def _check_mounts(self, held: list[tuple[int, str]]) -> None:
        if self.allow_sockets:
            return
        for (source, target), (source_fd, _) in zip(self.mounts, held, strict=True):
            channels, unchecked = channels_in(source_fd)
            if channels or unchecked:
                what = f"the Unix socket or FIFO `{_short(channels[0])}`" if channels else \
                    "a directory it cannot look into for sockets and FIFOs " \
                    f"(`{_short(unchecked[0])}`: unreadable, or nested too deep)"
                raise BackendError(
                    f"The sandbox mount {source!r} (at `{target}`) holds {what}: through it "
                    "commands could talk to the host process behind it, network or not. "
                    "Mount a directory without sockets and FIFOs, or set "
                    "`allow_sockets: true`.")

    def _after(self, root_fd: int, result: ExecuteResult, full: str | None,
               before: Sweep | None) -> ExecuteResult:
        """The host-side sweep of the workspace once nothing of the sandbox runs: set-id
        bits removed, the space it uses checked against the quota. `full`: the note of a
        command run over it; `before`: the walk made before it (a host root's)."""
        notes = [full] if full else []
        found = sweep(root_fd)
        stripped = list(dict.fromkeys((before.stripped if before else []) + found.stripped))
        if stripped:
            notes.append("set-uid/set-gid bits removed from "
                         + ", ".join(map(_short, stripped[:5])))
        if before and before.unowned:
            notes.append(f"`{_short(before.unowned[0])}` could not be given to the sandbox's "
                         f"user ({len(before.unowned)} in all): commands may not write them")
        if found.shared:
            notes.append("set-uid/set-gid files with other names (hard links) left as they are: "
                         + ", ".join(map(_short, found.shared[:5])))
        self._full = self._is_full(found)
        if self._full and full is None:
            notes.append(self._full_note(found, "further commands may delete files but not "
                                         "write any until it is back under"))
        return _noted(result, notes)


def _noted(result: ExecuteResult, notes: list[str]) -> ExecuteResult:
    if not notes:
        return result
    return dataclasses.replace(
        result, output=result.output + "".join(f"\n... [{note}]" for note in notes))


def _short(path: str, most: int = 80) -> str:
    """`path` cut in its middle to at most about `most` characters (a tree 400 levels deep
    makes paths of 800)."""
    return path if len(path) <= most else f"{path[:most // 2]}/.../{path[-most // 2:]}"


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
