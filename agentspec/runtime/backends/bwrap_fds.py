"""The file descriptors `execute` hands to bwrap: the seccomp program, the `--args` memory
file (the environment, off every command line), the `--info-fd` pipe (to wait for the
sandbox's pid 1), and a host root's user namespace (which `nsenter` opens by name: no
process started inherits it)."""

from __future__ import annotations

import contextlib
import os
import re
import select
from collections.abc import Iterator, Sequence

from agentspec.runtime.backends.seccomp import seccomp_filter
from agentspec.runtime.backends.userns import host_user_namespace

__all__ = ["args_fd", "filter_fd", "info_pipe", "root_namespace", "wait_for_namespace"]


@contextlib.contextmanager
def root_namespace() -> Iterator[int | None]:
    """The user namespace of a host root's sandbox (None for anyone else: bwrap maps the
    sandbox's user to theirs)."""
    if 0 not in (os.getuid(), os.geteuid()):
        yield None
        return
    with host_user_namespace() as fd:
        yield fd


@contextlib.contextmanager
def args_fd(arguments: Sequence[str]) -> Iterator[int | None]:
    """A memory file holding `arguments` NUL-separated, for `bwrap --args`: readable only
    by its owner, unlike a command line."""
    if not arguments:
        yield None
        return
    fd = os.memfd_create("agentspec-sandbox-args", os.MFD_CLOEXEC)
    try:
        os.write(fd, b"".join(argument.encode() + b"\0" for argument in arguments))
        os.lseek(fd, 0, os.SEEK_SET)
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def info_pipe() -> Iterator[tuple[int, int]]:
    read, write = os.pipe()
    os.set_blocking(read, False)
    try:
        yield read, write
    finally:
        os.close(read)
        os.close(write)


def wait_for_namespace(info_read: int, limit: float = 10) -> None:
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
def filter_fd() -> Iterator[int | None]:
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
