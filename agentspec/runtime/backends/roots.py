"""Backend roots and sandbox mount sources, opened without following symbolic links.

A directory opened by name is looked up by the kernel, which follows every link on the way:
once a command of one sandbox replaces a directory of its root with `ln -s /`, a root or a
mount source whose path runs through that directory is the host's `/`. Here a path is
opened one name at a time from `/`, each name with `O_NOFOLLOW`, so a link anywhere on it
is refused rather than followed. The descriptor (`O_PATH`) is what a backend then works
from, and what bubblewrap binds (`--bind-fd`): what is mounted is the directory checked, not
whatever the name leads to a moment later.

Paths are taken literally (absolute and normalized): a link written into a root's path on
purpose is refused too; the spec's own directory is resolved once where the app is loaded,
so only the part the spec wrote is walked this way.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable

from agentspec.contract.virtual_paths import BackendError

__all__ = ["PATH_FLAGS", "RootError", "inside", "open_directory"]

PATH_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class RootError(BackendError):
    """A root or mount source that is missing, not a directory, or reached through a link."""


def open_directory(path: str, *, what: str = "backend root", create: bool = False) -> int:
    """An `O_PATH` descriptor of the directory `path` (absolute), found from `/` one name at
    a time without following any link; `create` makes missing directories on the way.
    RootError names the link, the missing name or the file in the way."""
    if not os.path.isabs(path) or "\x00" in path:
        raise RootError(f"The {what} {path!r} is not an absolute path without NUL bytes.")
    fd = os.open("/", PATH_FLAGS)
    walked = ""
    try:
        for name in (part for part in os.path.normpath(path).split("/") if part):
            walked += "/" + name
            child = _open_child(fd, name, walked, path, what, create)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_child(parent: int, name: str, walked: str, path: str, what: str,
                create: bool) -> int:
    try:
        return os.open(name, PATH_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise RootError(f"The {what} {path} does not exist ({walked} is missing).") \
                from None
    except OSError as error:
        if error.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise RootError(f"The {what} {path} cannot be opened: {error.strerror}.") from None
        raise RootError(_not_a_directory(parent, name, walked, path, what)) from None
    with contextlib.suppress(FileExistsError):  # made meanwhile by someone else: fine
        os.mkdir(name, 0o777, dir_fd=parent)
    try:
        return os.open(name, PATH_FLAGS, dir_fd=parent)
    except OSError:
        raise RootError(_not_a_directory(parent, name, walked, path, what)) from None


def _not_a_directory(parent: int, name: str, walked: str, path: str, what: str) -> str:
    try:
        mode = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
    except OSError:
        mode = 0
    if stat.S_ISLNK(mode):
        return (f"The {what} {path} runs through the symbolic link {walked}, which is not "
                "followed (a command may have swapped a directory for it); use the real "
                "path of a directory.")
    return f"The {what} {path} is not a directory ({walked} is not one)."


def inside(path: str, roots: Iterable[str]) -> str | None:
    """The first of `roots` that `path` is or lies inside (all absolute, normalized)."""
    for root in roots:
        if path == root or path.startswith(root.rstrip("/") + "/"):
            return root
    return None
