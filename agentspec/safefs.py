"""Reading and writing inside a directory without following a link out of it, and without
opening anything that is not a regular file (a FIFO would block, a device never ends).

The directory itself is the caller's choice (links in its path are followed); below it, every
step is taken from a directory descriptor with `O_NOFOLLOW`, so a link planted inside, even
in a race, is never followed. Files are replaced by renaming a new file over them, which
replaces a link rather than writing through it. Problems are `UnsafePath` (an `OSError`)
with a message for people.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

__all__ = ["UnsafePath", "directory", "kind", "names", "open_file", "read_file",
           "remove_file", "subdirectory", "write_file"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


class UnsafePath(OSError):
    """A path that cannot be used safely (a link, not a directory, not a regular file, ...)."""


def kind(parent: int, name: str) -> str:
    """What `name` is in the directory `parent`, without following a link: `missing`,
    `file` (regular), `directory`, `link` or `other` (a FIFO, a socket, a device)."""
    try:
        mode = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return "missing"
    if stat.S_ISLNK(mode):
        return "link"
    return "file" if stat.S_ISREG(mode) else "directory" if stat.S_ISDIR(mode) else "other"


_WHAT = {"link": "a symbolic link", "other": "a FIFO, socket or device",
         "file": "a regular file", "directory": "a directory"}


def _require(parent: int, name: str, shown: str, want: str) -> None:
    found = kind(parent, name)
    if found == want:
        return
    if found == "missing":
        raise UnsafePath(f"`{shown}` does not exist")
    raise UnsafePath(f"`{shown}` is {_WHAT[found]}, not {_WHAT[want]}: agentspec neither "
                     "follows links there nor opens anything but regular files")


@contextmanager
def directory(path: Path, *, create: bool) -> Iterator[int]:
    """A descriptor of the directory `path` (created with its parents when `create`)."""
    try:
        if create:
            path.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, _DIRECTORY)
    except FileExistsError:
        raise UnsafePath(f"`{path}` is not a directory") from None
    except NotADirectoryError:
        raise UnsafePath(f"`{path}` is not a directory (or a part of its path is a file)") \
            from None
    except FileNotFoundError:
        raise UnsafePath(f"`{path}` does not exist") from None
    try:
        yield fd
    finally:
        os.close(fd)


@contextmanager
def subdirectory(parent: int, name: str, *, create: bool, shown: str) -> Iterator[int]:
    """A descriptor of the directory `name` inside `parent`, never through a link."""
    if create:
        with suppress(FileExistsError):
            os.mkdir(name, dir_fd=parent)
    _require(parent, name, shown, "directory")
    try:
        fd = os.open(name, _DIRECTORY | _NOFOLLOW, dir_fd=parent)
    except OSError as exc:  # swapped for a link since the check
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UnsafePath(f"`{shown}` became a symbolic link") from None
        raise
    try:
        yield fd
    finally:
        os.close(fd)


def names(parent: int) -> list[str]:
    return sorted(os.listdir(parent))


def read_file(parent: int, name: str, *, shown: str, limit: int = 16 * 1024 * 1024) -> bytes:
    """The bytes of the regular file `name` (at most `limit`); never through a link, never
    waiting on a FIFO."""
    with open_file(parent, name, shown=shown) as handle:
        return handle.read(limit)


def open_file(parent: int, name: str, *, shown: str) -> BinaryIO:
    """The regular file `name`, open for reading; never through a link, never waiting on a
    FIFO."""
    _require(parent, name, shown, "file")
    try:
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK, dir_fd=parent)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePath(f"`{shown}` became a symbolic link") from None
        raise
    handle = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # swapped since the check
        handle.close()
        raise UnsafePath(f"`{shown}` became something else than a regular file")
    return handle


def write_file(parent: int, name: str, data: bytes, *, shown: str, replace: bool) -> None:
    """Write `name` in `parent`: a new file (refused when `name` exists, unless `replace`
    and it is a regular file), renamed into place so a link is replaced, never followed."""
    if replace and kind(parent, name) != "missing":
        _require(parent, name, shown, "file")
    elif not replace and kind(parent, name) != "missing":
        raise UnsafePath(f"`{shown}` exists")
    temporary = f".{name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666,
                 dir_fd=parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if replace:
            os.replace(temporary, name, src_dir_fd=parent, dst_dir_fd=parent)
        else:  # a link never replaces an existing name: it fails if `name` appeared
            os.link(temporary, name, src_dir_fd=parent, dst_dir_fd=parent,
                    follow_symlinks=False)
            os.unlink(temporary, dir_fd=parent)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(temporary, dir_fd=parent)
        raise


def remove_file(parent: int, name: str) -> None:
    os.unlink(name, dir_fd=parent)
