"""The user namespace a host root's sandbox runs in: its commands are an unprivileged host
user, never uid 0, and hold no capability.

bubblewrap run by root maps the sandbox's user to uid 0 on the host: its files would be
root's (a set-uid one a root shell for every local account), the kernel would not count its
processes against RLIMIT_NPROC, and it would read every root-only file it can see. Here the
namespace maps the sandbox's user (uid and gid 1000 inside) to HOST_ID, which no account
holds, and inside 0 to the host's 0 for bubblewrap alone: it enters the namespace as its
root (`nsenter`, which closes the namespace's descriptor: the command never holds one),
sets the sandbox up with the capabilities it has there (reaching root-owned host
directories on the way to the workspace and the mounts), and `setpriv` then makes the
command uid 1000 with every capability dropped. So mounts are read with the permissions of
a user who owns none of their files (a root-only file stays unreadable), and the files
commands make are HOST_ID's on the host.

The workspace's own root-owned files, those the file tools wrote, would then be read-only
inside: before each command its directories and single-named regular files are given to
HOST_ID (`trees.sweep`). A file with other names (hard links) keeps its owner, since another
of its names may lie outside; so do links, sockets, FIFOs and devices.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
from collections.abc import Iterator

from agentspec.runtime.backends import BackendError

__all__ = ["HOST_ID", "INSIDE_ID", "SETUP_CAPS", "enter", "host_user_namespace"]

HOST_ID = 2_000_000_000
"""The host uid and gid of a host root's sandbox (no account may hold it)."""
INSIDE_ID = 1000
SETUP_CAPS = ("setuid", "setgid", "setpcap", "dac_override")
"""What bubblewrap keeps in the namespace for `setpriv` (becoming uid 1000) and its own `chdir`
into the workspace; `setpriv` drops them all."""


@contextlib.contextmanager
def host_user_namespace() -> Iterator[int]:
    """A descriptor of a new user namespace mapping INSIDE_ID to HOST_ID and 0 to 0, for
    `enter`; close-on-exec, closed afterwards."""
    with contextlib.suppress(KeyError):
        holder = pwd.getpwuid(HOST_ID).pw_name
        raise BackendError(
            f"The sandbox runs a host root's commands as uid {HOST_ID}, which the account "
            f"`{holder}` holds here: its files and processes would be theirs. Remove that "
            "account's uid, or run the agent as an ordinary user.")
    unshare = shutil.which("unshare", path="/usr/bin:/bin")
    if unshare is None:
        raise BackendError("The sandbox of a host root needs `unshare` (util-linux).")
    helper = subprocess.Popen([unshare, "--user", "/bin/sh", "-c", "echo; read line"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, close_fds=True)
    assert helper.stdin is not None and helper.stdout is not None
    try:
        if helper.stdout.readline() != b"\n":  # in its namespace by now
            raise BackendError("Cannot make a user namespace for the sandbox.")
        for kind in ("uid", "gid"):
            with open(f"/proc/{helper.pid}/{kind}_map", "w") as mapping:
                mapping.write(f"0 0 1\n{INSIDE_ID} {HOST_ID} 1\n")
        fd = _open_namespace(helper.pid)
    except OSError as error:
        raise BackendError(f"Cannot make a user namespace for the sandbox: "
                           f"{error.strerror}.") from None
    finally:
        helper.stdin.close()
        helper.wait()
        helper.stdout.close()
    try:
        yield fd
    finally:
        os.close(fd)


def enter(namespace_fd: int) -> list[str]:
    """The command prefix running what follows in the namespace `namespace_fd` (a
    close-on-exec descriptor of this process: nothing started inherits it) as its root."""
    nsenter = shutil.which("nsenter", path="/usr/bin:/bin")
    if nsenter is None:
        raise BackendError("The sandbox of a host root needs `nsenter` (util-linux).")
    return [nsenter, f"--user=/proc/{os.getpid()}/fd/{namespace_fd}", "--"]


def _open_namespace(pid: int) -> int:
    return os.open(f"/proc/{pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
