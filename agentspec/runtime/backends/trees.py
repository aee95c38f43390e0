"""Walks over the sandbox's host directories, from directory file descriptors (never a
path looked up twice, never a symbolic link followed): the workspace after each command
(set-uid and set-gid bits stripped, the disk space it uses summed), and before it (given to
a host root's sandbox user), and the mounts before it (Unix sockets and FIFOs found)."""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from agentspec.runtime.backends.confined import DIR_FLAGS
from agentspec.runtime.backends.seccomp import SET_ID_BITS

__all__ = ["MAX_DEPTH", "Sweep", "channels_in", "sweep"]

MAX_DEPTH = 400
"""Directory levels walked (one file descriptor open per level)."""


@dataclass
class Sweep:
    """What a walk of the workspace found."""

    used_bytes: int = 0  # disk blocks of every file and directory, each inode once
    stripped: list[str] = field(default_factory=list)  # paths whose set-id bits it removed
    shared: list[str] = field(default_factory=list)  # set-id files with other names: kept
    unchecked: list[str] = field(default_factory=list)  # directories it could not enter
    unowned: list[str] = field(default_factory=list)  # not given to `owner` (chown failed)


def _walk(root: int, sweep: Sweep) -> Iterator[tuple[int, str, os.stat_result, str]]:
    """(directory fd, name, lstat, relative path) of everything under the directory `root`
    (a descriptor the caller opened without following links, and keeps; an O_PATH one
    will do), the root's own entry first (fd of the root, name ".")."""
    top = os.open(".", DIR_FLAGS, dir_fd=root)
    stack: list[tuple[int, str, Iterator[str]]] = []
    try:
        yield top, ".", os.fstat(top), "."
        stack.append((top, "", iter(_names(top))))
        while stack:
            fd, prefix, names = stack[-1]
            name = next(names, None)
            if name is None:
                stack.pop()
                if fd != top:
                    os.close(fd)
                continue
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            path = prefix + name
            yield fd, name, info, path
            if not stat.S_ISDIR(info.st_mode):
                continue
            if len(stack) >= MAX_DEPTH:
                sweep.unchecked.append(path)
                continue
            try:
                child = os.open(name, DIR_FLAGS, dir_fd=fd)
            except (FileNotFoundError, NotADirectoryError):
                continue  # gone meanwhile: nothing under it to walk
            except OSError:  # unreadable (names under it may still be reachable) or a link
                sweep.unchecked.append(path)
                continue
            try:
                listed = _names(child)
            except OSError:
                os.close(child)
                sweep.unchecked.append(path)
                continue
            stack.append((child, path + "/", iter(listed)))
    finally:
        for fd, _, _ in stack:
            if fd != top:
                os.close(fd)
        os.close(top)


def _names(fd: int) -> list[str]:
    with os.scandir(fd) as entries:
        return [entry.name for entry in entries]


def sweep(root: int, owner: int | None = None) -> Sweep:
    """Strip set-uid and set-gid bits from everything in the directory `root` (a held
    descriptor) and sum what it uses; with `owner`, give its directories and regular files
    to that uid and gid too (a file with other names keeps its owner: another of its names
    may lie outside; so do links, sockets, FIFOs and devices)."""
    found = Sweep()
    seen: set[tuple[int, int]] = set()
    for fd, name, info, path in _walk(root, found):
        if (info.st_dev, info.st_ino) not in seen:
            seen.add((info.st_dev, info.st_ino))
            found.used_bytes += info.st_blocks * 512
        single = stat.S_ISDIR(info.st_mode) or (stat.S_ISREG(info.st_mode)
                                                 and info.st_nlink == 1)
        if info.st_mode & SET_ID_BITS and not stat.S_ISLNK(info.st_mode):
            if not single and stat.S_ISREG(info.st_mode):
                # a hard link (which no command can make to a file outside): the same inode
                # may be a system's set-uid program, which stripping would break
                found.shared.append(path)
                continue
            _through(fd, name, info, _strip)
            found.stripped.append(path)
        if owner is not None and single and (info.st_uid, info.st_gid) != (owner, owner):
            try:
                _through(fd, name, info, functools.partial(_chown, uid=owner))
            except OSError:  # a filesystem without owners, or root squashed (NFS)
                found.unowned.append(path)
    return found


def _strip(target: str, now: os.stat_result) -> None:
    os.chmod(target, stat.S_IMODE(now.st_mode) & ~SET_ID_BITS)


def _chown(target: str, now: os.stat_result, uid: int) -> None:
    if stat.S_ISDIR(now.st_mode) or now.st_nlink == 1:  # no other name made meanwhile
        os.chown(target, uid, uid)


def _through(parent: int, name: str, seen: os.stat_result,
             change: Callable[[str, os.stat_result], None]) -> None:
    """`change(path, status)` on `name` through an O_PATH descriptor (nothing of the file is
    opened or run), when it is still the inode that was seen and not a link."""
    try:
        target = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent) \
            if name != "." else os.open(".", os.O_PATH | os.O_CLOEXEC, dir_fd=parent)
    except FileNotFoundError:
        return  # gone meanwhile
    try:
        now = os.fstat(target)
        if (now.st_dev, now.st_ino) == (seen.st_dev, seen.st_ino) and \
                not stat.S_ISLNK(now.st_mode):
            change(f"/proc/self/fd/{target}", now)
    finally:
        os.close(target)


def channels_in(source: int) -> tuple[list[str], list[str]]:
    """(paths of the Unix sockets and FIFOs under the directory `source` (a held
    descriptor): channels to whatever host process listens on them, directories it could
    not look into: too deep, or unreadable to this process), each relative to `source`.
    Device files need no check: bwrap binds mounts `nodev`."""
    found = Sweep()
    channels = [path for _, _, info, path in _walk(source, found)
                if stat.S_ISSOCK(info.st_mode) or stat.S_ISFIFO(info.st_mode)]
    return channels, found.unchecked
