"""Per-user folders: what agentspec keeps for a conversation (the evicted large tool results,
`summarization.history`) sits under `<folder>/<user>/` (`userpaths.path_segment`), and the file
tools of one user neither reach nor list another user's folder there.

`UserScope` wraps the backend of each file tool call, knowing the call's user: a path inside
another user's folder is refused, and listings, globs and greps leave those folders out. The
private folders are `contract.backends.LARGE_RESULTS` on every backend, and the history directories
`compaction` registers (`register_private`) for the directory backend they are on.

`execute` cannot be confined this way: a shell command reads whatever the backend's root
holds, so on a `shell` or `sandbox` backend another user's command can still read them."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping

from agentspec.contract.backends import LARGE_RESULTS, routed
from agentspec.runtime.backends import (
    Backend,
    BackendError,
    ExecuteResult,
    FileInfo,
    GrepMatch,
    ShellCapable,
    normalize,
)
from agentspec.runtime.backends.transfer import Transfers
from agentspec.runtime.user_folders import path_segment

__all__ = ["UserScope", "private_folders", "register_history", "register_private", "scoped"]

_PRIVATE: set[tuple[str, str]] = set()
_LOCK = threading.Lock()


def register_private(root: str, folder: str) -> None:
    """Marks `folder` (a path inside the directory backend with root `root`) as per-user."""
    with _LOCK:
        _PRIVATE.add((os.path.realpath(root), normalize(folder)))


def register_history(history: str, backend: str, backends: Mapping[str, object]) -> None:
    """Marks `summarization.history`, a directory of backend `backend`'s file tools, per-user
    on the directory backend that holds it (`backends`: definitions, roots absolute). Done
    wherever the spec's backends are opened: the app, `api.open_backend`."""
    holder, folder = routed(backend, history, backends)
    register_private(str(getattr(backends[holder], "root", None)), folder)


def private_folders(root: str | None) -> tuple[str, ...]:
    """The per-user folders of a backend: the large results', and those registered for its
    root (a directory backend's)."""
    if root is None:
        return (LARGE_RESULTS,)
    real = os.path.realpath(root)
    with _LOCK:
        extra = sorted(folder for where, folder in _PRIVATE if where == real)
    return (LARGE_RESULTS, *extra)


class UserScope(Transfers):
    """`inner` as user `user` may see it (see the module docstring)."""

    def __init__(self, inner: Backend, user: str, folders: tuple[str, ...]) -> None:
        self.inner, self.folders = inner, tuple(normalize(f) for f in folders)
        self.own = path_segment(user)

    def _foreign(self, path: str) -> bool:
        """Whether `path` is inside another user's folder. Compared without case: on a
        case-insensitive file system `/LARGE_TOOL_RESULTS/<user>` is the same folder (and
        `path_segment` keeps users apart whatever the case)."""
        clean = normalize(path).casefold()
        for folder in self.folders:
            prefix = folder.rstrip("/").casefold() + "/"
            if clean.startswith(prefix) and \
                    clean[len(prefix):].split("/", 1)[0] != self.own.casefold():
                return True
        return False

    def _check(self, path: str) -> None:
        if self._foreign(path) or self._foreign(self.resolve(path)):  # a link to theirs too
            raise BackendError(f"{path} is another user's: each user sees only their own "
                               "conversations' files there")

    def resolve(self, path: str) -> str:
        resolve = getattr(self.inner, "resolve", None)
        return str(resolve(path)) if resolve is not None else normalize(path)

    def ls(self, path: str) -> list[FileInfo]:
        self._check(path)
        return [entry for entry in self.inner.ls(path) if not self._foreign(entry.path)]

    def read(self, path: str) -> str:
        self._check(path)
        return self.inner.read(path)

    def write(self, path: str, content: str) -> None:
        self._check(path)
        self.inner.write(path, content)

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> int:
        self._check(path)
        return self.inner.edit(path, old, new, replace_all)

    def glob(self, pattern: str, path: str = "/") -> list[str]:
        self._check(path)
        return [found for found in self.inner.glob(pattern, path) if not self._foreign(found)]

    def grep(self, pattern: str, path: str = "/", glob: str | None = None) -> list[GrepMatch]:
        self._check(path)
        return [match for match in self.inner.grep(pattern, path, glob)
                if not self._foreign(match.path)]


class ShellUserScope(UserScope):
    """A `UserScope` over a backend that runs commands (which it cannot confine)."""

    inner: ShellCapable

    def execute(self, command: str, timeout: float | None = None) -> ExecuteResult:
        return self.inner.execute(command, timeout)


def scoped(inner: Backend, user: str | None, folders: tuple[str, ...]) -> Backend:
    """`inner` scoped to `user`; unscoped when no user is known (a call outside ADK)."""
    if user is None:
        return inner
    if isinstance(inner, ShellCapable):
        return ShellUserScope(inner, user, folders)
    return UserScope(inner, user, folders)
