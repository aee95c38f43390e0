"""A filesystem backend that can also run shell commands in its root."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from agentspec.runtime.backends import BackendError, ExecuteResult
from agentspec.runtime.backends.filesystem import FilesystemBackend

__all__ = ["BASE_PATH", "ShellBackend", "call_timeout", "check_command", "run_captured"]

BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_CHUNK = 65536
_DRAIN_AFTER_EXIT = 0.5
"""Seconds to keep reading output after the shell itself has exited."""
_POLL_SLICE = 0.05
"""How often (seconds) the reader checks whether the shell has exited."""


class ShellBackend(FilesystemBackend):
    """`execute(command)` runs `/bin/sh -c command` with cwd = root.

    The command gets its own session (process group) and a minimal environment (PATH, HOME
    = root, LANG) plus `env`: nothing of this process's environment is passed on. Output
    (stdout and stderr merged) is read until the shell exits (plus a short grace period for
    what its children still write) or until `timeout` seconds pass, whichever comes first;
    beyond `max_output_bytes` it is cut with a note. Then the command's process group is
    killed, so background processes left in it do not survive.

    This is not a sandbox: the file tools are confined to the root, the commands are not.
    They run as this process's user and can reach whatever it can: any file, the network,
    other processes of the user and their /proc entries (`/proc/$PPID/environ` is this
    process's environment, keys and all). A process that leaves the group (`setsid`) outlives
    the command; `execute` still returns on time, but such a process is not killed.
    Confinement of commands needs a sandbox around the whole process.
    """

    def __init__(self, root: Path | str, *, timeout: float, max_output_bytes: int,
                 env: Mapping[str, str] | None = None, hard_links: bool = False) -> None:
        super().__init__(root, hard_links=hard_links)
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if max_output_bytes < 1:
            raise ValueError("max_output_bytes must be at least 1")
        self.timeout = float(timeout)
        self.max_output_bytes = int(max_output_bytes)
        self.env = dict(env or {})

    def environment(self) -> dict[str, str]:
        return {"PATH": BASE_PATH, "HOME": self.root, "LANG": "C.UTF-8", **self.env}

    def execute(self, command: str, timeout: float | None = None) -> ExecuteResult:
        """Run `command`; `timeout` (seconds) may shorten the backend's own, never lengthen it."""
        check_command(command)
        limit = call_timeout(self.timeout, timeout)
        return run_captured(["/bin/sh", "-c", command], cwd=self.root, env=self.environment(),
                            timeout=limit, max_output_bytes=self.max_output_bytes)


def check_command(command: object) -> None:
    if not isinstance(command, str) or not command.strip():
        raise BackendError("The command is empty; give a shell command to run.")
    if "\x00" in command:
        raise BackendError("A command cannot contain NUL bytes.")


def call_timeout(limit: float, asked: float | None) -> float:
    """The seconds one call may run: what it asked for, capped by the backend's limit."""
    if asked is None:
        return limit
    if isinstance(asked, bool) or not isinstance(asked, int | float) or not asked > 0:
        raise BackendError("timeout must be a positive number of seconds.")
    return min(float(asked), limit)


def run_captured(argv: list[str], *, cwd: str, env: Mapping[str, str], timeout: float,
                 max_output_bytes: int, pass_fds: tuple[int, ...] = ()) -> ExecuteResult:
    """Run `argv` in its own session, output (stdout and stderr merged) read until it exits,
    `timeout` passes or the output exceeds `max_output_bytes`; then its process group is
    killed."""
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True, close_fds=True, pass_fds=pass_fds)
    except OSError as exc:
        raise BackendError(f"Cannot start the shell: {exc.strerror}.") from None
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    kept = bytearray()
    try:
        total, exited = _read_until(proc, proc.stdout.fileno(), kept, max_output_bytes,
                                    deadline)
    finally:
        _kill_group(proc.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        proc.stdout.close()  # our end only; no reader thread holds it
    timed_out = not exited
    truncated = total > max_output_bytes
    output = bytes(kept[:max_output_bytes]).decode("utf-8", "replace")
    if truncated:
        output += f"\n... [output truncated at {max_output_bytes} bytes]"
    if timed_out:
        output += f"\n... [command timed out after {timeout:g} seconds and was killed]"
    return ExecuteResult(output=output, exit_code=None if timed_out else proc.returncode,
                         truncated=truncated, timed_out=timed_out)


def _read_until(proc: subprocess.Popen[bytes], fd: int, kept: bytearray, cap: int,
                deadline: float) -> tuple[int, bool]:
    """Read `fd` in this thread until EOF, the deadline, or a grace period after the shell
    exits (children may keep the pipe open forever). Keeps `cap + 1` bytes in `kept` and
    discards the rest (so the command never blocks on a full pipe).

    Returns (bytes read in total, whether the shell exited before the deadline)."""
    os.set_blocking(fd, False)
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    total = 0
    stop_at = deadline
    exited = False
    while True:
        now = time.monotonic()
        if not exited and proc.poll() is not None:
            exited = True
            stop_at = min(deadline, now + _DRAIN_AFTER_EXIT)
        if now >= stop_at:
            break
        wait = stop_at - now if exited else min(stop_at - now, _POLL_SLICE)
        if not poller.poll(max(1, int(wait * 1000))):
            continue
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            continue
        except OSError:
            break
        if not chunk:  # EOF: everyone holding the pipe has closed it
            break
        total += len(chunk)
        room = cap + 1 - len(kept)
        if room > 0:
            kept.extend(chunk[:room])
    if not exited and proc.poll() is not None:
        exited = True  # EOF came with (or just before) the shell's exit
    if not exited:  # EOF before the shell exited (it closed its output): wait for it
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        exited = proc.returncode is not None
    return total, exited


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
