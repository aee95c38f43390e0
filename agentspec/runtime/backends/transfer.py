"""Files in and out of a backend in batches, for the program around an agent (deepagents'
`upload_files` / `download_files`): each file succeeds or fails on its own, and a failure is
a value (the path and why), never an exception that loses the rest of the batch.

Every backend type has both, through its file operations, so a batch obeys what a file tool
call would: a composite's routes, the user's private folders, `read` / `write` permissions,
a directory backend's confinement. Backends hold text: content must be UTF-8.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from agentspec.contract.virtual_paths import BackendError

__all__ = ["Downloaded", "Transferable", "Transfers", "Uploaded"]


@dataclass(frozen=True)
class Uploaded:
    """One file of an upload: `error` says why it was not written (None: written)."""

    path: str
    error: str | None


@dataclass(frozen=True)
class Downloaded:
    """One file of a download: its content, or None with `error` saying why."""

    path: str
    content: bytes | None
    error: str | None


class _Files(Protocol):
    def read(self, path: str) -> str: ...

    def write(self, path: str, content: str) -> None: ...


class Transfers:
    """`upload_files` and `download_files` over a backend's own `read` and `write`."""

    def upload_files(self: _Files, files: Iterable[tuple[str, bytes]]) -> list[Uploaded]:
        """Write each `(path, content)`; one result per file, in order."""
        done: list[Uploaded] = []
        for path, content in files:
            try:
                self.write(path, bytes(content).decode("utf-8"))
            except UnicodeDecodeError as error:
                done.append(Uploaded(path, f"{path} is not UTF-8 text (byte {error.start}); "
                                     "backends hold text files only"))
            except (BackendError, OSError) as error:
                done.append(Uploaded(path, str(error)))
            else:
                done.append(Uploaded(path, None))
        return done

    def download_files(self: _Files, paths: Iterable[str]) -> list[Downloaded]:
        """Read each path as UTF-8 bytes; one result per path, in order."""
        done: list[Downloaded] = []
        for path in paths:
            try:
                done.append(Downloaded(path, self.read(path).encode("utf-8"), None))
            except (BackendError, OSError) as error:
                done.append(Downloaded(path, None, str(error)))
        return done


@runtime_checkable
class Transferable(Protocol):
    """A backend with `upload_files` and `download_files` (every backend type)."""

    def upload_files(self, files: Iterable[tuple[str, bytes]]) -> list[Uploaded]: ...

    def download_files(self, paths: Iterable[str]) -> list[Downloaded]: ...
