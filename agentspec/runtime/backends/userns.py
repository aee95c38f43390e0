"""The user namespace a host root's sandbox runs in: its commands are an unprivileged host
user, never uid 0.

bubblewrap run by root maps the sandbox's user to uid 0 on the host: its files would be
root's (a set-uid one a root shell for every local account), the kernel would not count its
processes against RLIMIT_NPROC, and every root-only file it can see would be its own. Here
the namespace maps the sandbox's user (uid and gid 1000 inside) to HOST_ID, which no account
holds, and inside 0 to the host's 0 only so that the root-owned files of the workspace stay
reachable: commands keep CAP_DAC_OVERRIDE and CAP_FOWNER in the namespace (they read, write
and chmod the workspace's root-owned files; the seccomp filter still refuses set-id modes),
and nothing else; files they make are HOST_ID's on the host.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
from collections.abc import Iterator

from agentspec.runtime.backends import BackendError

__all__ = ["HOST_ID", "INSIDE_ID", "KEPT_CAPS", "host_user_namespace"]

HOST_ID = 2_000_000_000
"""The host uid and gid of a host root's sandbox (no account may hold it)."""
INSIDE_ID = 1000
KEPT_CAPS = ("dac_override", "fowner")


@contextlib.contextmanager
def host_user_namespace() -> Iterator[int]:
    """A descriptor of a new user namespace mapping INSIDE_ID to HOST_ID and 0 to 0, for
    `bwrap --userns`; closed afterwards."""
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


def _open_namespace(pid: int) -> int:
    return os.open(f"/proc/{pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
