"""Paths found inside a root one name at a time, from directory file descriptors.

Checking a path and then opening it by name leaves a gap: a parent directory swapped for a
symbolic link in between leads the open outside. Here every step opens the next name relative
to the directory already open (`openat` with `O_NOFOLLOW`), so nothing is looked up twice. A
symbolic link met on the way is read and followed by hand, as more names to walk from where it
sits (an absolute target must lie under the root); `..` never climbs above the root. Whatever
another process renames meanwhile, a name is resolved inside the directory this code holds,
and a link swapped in where a directory was is read as a link, never followed by the kernel.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator

from agentspec.runtime.backends import BackendError
from agentspec.runtime.backends.roots import open_directory

__all__ = ["DIR_FLAGS", "MAX_LINKS", "Confined", "Outside"]

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
MAX_LINKS = 40
"""Symbolic links followed while finding one path, as the kernel allows."""


class Outside(BackendError):
    """The path leads outside the root (through a symbolic link)."""


class Confined:
    """A root directory whose paths are found by `located`."""

    def __init__(self, root: str) -> None:
        self.root = root  # absolute, normalized; a path through a link is refused

    def open_root(self) -> int:
        """The root, found from `/` without following links (a directory of its path
        swapped for one is refused, not followed)."""
        held = open_directory(self.root)
        try:
            return os.open(".", DIR_FLAGS, dir_fd=held)
        finally:
            os.close(held)

    @contextlib.contextmanager
    def located(self, virtual: str, *, create: bool = False) -> Iterator[tuple[int, str]]:
        """(directory fd, name in it) of a normalized virtual path, every symbolic link on
        the way (the last name included) followed inside the root; the name is "" for the
        root itself, whose fd is then given. `create` makes missing parent directories. The
        fd is closed afterwards. Raises Outside, FileNotFoundError or NotADirectoryError."""
        stack = [self.open_root()]
        try:
            name = self._walk(stack, [part for part in virtual.split("/") if part], create)
            yield stack[-1], name
        finally:
            for fd in stack:
                os.close(fd)

    def resolve(self, virtual: str) -> str:
        """The virtual path a normalized virtual path leads to, its symbolic links followed
        inside the root as `located` follows them (a missing name and what follows it are
        kept as written). Raises Outside."""
        stack = [self.open_root()]
        trail: list[str] = []
        todo = [part for part in virtual.split("/") if part]
        try:
            name = self._walk(stack, todo, False, trail)
            return "/" + "/".join([*trail, name] if name else trail)
        except (FileNotFoundError, NotADirectoryError):
            return "/" + "/".join([*trail, *todo])
        finally:
            for fd in stack:
                os.close(fd)

    def _walk(self, stack: list[int], todo: list[str], create: bool,
              trail: list[str] | None = None) -> str:
        """Opens the directories of `todo` (consumed as they are walked); `trail` gets the
        names of the directories held, from the root."""
        trail = [] if trail is None else trail
        links = 0
        while todo:
            if links > MAX_LINKS:
                raise BackendError("Too many levels of symbolic links.")
            name = todo.pop(0)
            if name in ("", "."):
                continue
            if name == "..":
                if len(stack) == 1:
                    raise Outside("climbs above the root")
                os.close(stack.pop())
                trail.pop()
                continue
            target = _link(stack[-1], name)
            if target is not None:
                links += 1
                todo[:0] = self._target_names(stack, target)
                if target.startswith("/"):
                    trail.clear()
                continue
            if not todo:
                return name
            try:
                stack.append(self._open_dir(stack[-1], name, create))
                trail.append(name)
            except OSError as error:
                if error.errno != errno.ELOOP:
                    todo.insert(0, name)  # what `resolve` keeps as written
                    raise
                links += 1  # made a link since it was read: read it again
                todo.insert(0, name)
        return ""

    def _target_names(self, stack: list[int], target: str) -> list[str]:
        """The names a link's target adds; an absolute target restarts from the root."""
        if not target.startswith("/"):
            return target.split("/")
        if target != self.root and not target.startswith(self.root + "/"):
            raise Outside("a symbolic link leads outside the root")
        while len(stack) > 1:
            os.close(stack.pop())
        return target[len(self.root):].split("/")

    @staticmethod
    def _open_dir(parent: int, name: str, create: bool) -> int:
        try:
            return os.open(name, DIR_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                raise
        with contextlib.suppress(FileExistsError):  # made meanwhile by someone else: fine
            os.mkdir(name, 0o777, dir_fd=parent)
        return os.open(name, DIR_FLAGS, dir_fd=parent)


def _link(parent: int, name: str) -> str | None:
    """The target of `name` in `parent` when it is a symbolic link, else None."""
    try:
        return os.readlink(name, dir_fd=parent)
    except OSError as error:
        if error.errno in (errno.EINVAL, errno.ENOENT, errno.ENOTDIR):
            return None
        raise
