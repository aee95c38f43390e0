"""A filesystem backend that can also run shell commands in its root."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from agentspec.runtime.backends import BackendError, ExecuteResult
from agentspec.runtime.backends.filesystem import FilesystemBackend

__all__ = ["BASE_PATH", "ShellBackend"]

BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_CHUNK = 65536


class ShellBackend(FilesystemBackend):
    """`execute(command)` runs `/bin/sh -c command` with cwd = root.

    The command gets its own session (process group) and a minimal environment (PATH, HOME
    = root, LANG) plus `env`. After `timeout` seconds the whole group is killed; output
    (stdout and stderr merged) beyond `max_output_bytes` is cut with a note. Processes the
    command leaves behind are killed when it finishes: nothing outlives a command.
    Commands are not confined the way file operations are: they can reach anything the
    process user can; confinement of commands needs a sandbox around the whole process.
    """

    def __init__(self, root: Path | str, timeout: float = 120, max_output_bytes: int = 100_000,
                 env: Mapping[str, str] | None = None) -> None:
        super().__init__(root)
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if max_output_bytes < 1:
            raise ValueError("max_output_bytes must be at least 1")
        self.timeout = float(timeout)
        self.max_output_bytes = int(max_output_bytes)
        self.env = dict(env or {})

    def environment(self) -> dict[str, str]:
        return {"PATH": BASE_PATH, "HOME": self.root, "LANG": "C.UTF-8", **self.env}

    def execute(self, command: str) -> ExecuteResult:
        if not isinstance(command, str) or not command.strip():
            raise BackendError("The command is empty; give a shell command to run.")
        if "\x00" in command:
            raise BackendError("A command cannot contain NUL bytes.")
        try:
            proc = subprocess.Popen(["/bin/sh", "-c", command], cwd=self.root,
                                    env=self.environment(), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    start_new_session=True, close_fds=True)
        except OSError as exc:
            raise BackendError(f"Cannot start the shell: {exc.strerror}.") from None
        assert proc.stdout is not None
        kept = bytearray()
        total = [0]
        reader = threading.Thread(target=_drain, args=(proc.stdout, kept, total,
                                                       self.max_output_bytes), daemon=True)
        reader.start()
        deadline = time.monotonic() + self.timeout
        timed_out = False
        try:
            proc.wait(timeout=self.timeout)
            # the shell is done; background children may still hold the output open
            reader.join(max(0.0, deadline - time.monotonic()))
            timed_out = reader.is_alive()
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            _kill_group(proc.pid)
            proc.wait()
            reader.join(5)
            proc.stdout.close()
        truncated = total[0] > self.max_output_bytes
        output = bytes(kept[:self.max_output_bytes]).decode("utf-8", "replace")
        if truncated:
            output += f"\n... [output truncated at {self.max_output_bytes} bytes]"
        if timed_out:
            output += (f"\n... [command timed out after {self.timeout:g} seconds and was "
                       "killed]")
        return ExecuteResult(output=output, exit_code=None if timed_out else proc.returncode,
                             truncated=truncated, timed_out=timed_out)


def _drain(stream: IO[bytes], kept: bytearray, total: list[int], cap: int) -> None:
    """Read everything (so the command never blocks on a full pipe); keep `cap + 1` bytes."""
    try:
        while chunk := stream.read1(_CHUNK) if hasattr(stream, "read1") else stream.read(_CHUNK):
            total[0] += len(chunk)
            room = cap + 1 - len(kept)
            if room > 0:
                kept.extend(chunk[:room])
    except (OSError, ValueError):
        pass


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
