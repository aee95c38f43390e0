"""A local directory as a backend, confined to its root.

Every path is resolved with `os.path.realpath` and checked with `os.path.commonpath` against
the real root, so `..`, absolute paths and symbolic links (as the final component or as any
parent directory) cannot lead outside. Writes go to a new temporary file in the target's
directory (`O_CREAT | O_EXCL | O_NOFOLLOW`) that then replaces the target, so a failed write
leaves the old content; only regular files are read or replaced. glob and grep never descend
through symbolic links. Names that are not valid UTF-8 cannot be addressed by a model and are
left out of ls, glob and grep.

"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from agentspec.runtime.backends import (
    GREP_LIMIT,
    BackendError,
    FileInfo,
    GrepMatch,
    apply_edit,
    glob_match,
    grep_glob_match,
    matching_lines,
    normalize,
    require_pattern,
)

__all__ = ["MAX_FILE_BYTES", "FilesystemBackend"]

MAX_FILE_BYTES = 10 * 1024 * 1024
"""Files larger than this are not read (read fails; grep skips them)."""

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_TEMP_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_NONBLOCK
               | os.O_CLOEXEC)


def _addressable(name: str) -> bool:
    """False for names that were not valid UTF-8 on disk (surrogate-escaped by Python)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class FilesystemBackend:
    """Files under `root`; the virtual path `/a/b.md` is `root/a/b.md`."""

    def __init__(self, root: Path | str) -> None:
        os.makedirs(root, exist_ok=True)
        self.root = os.path.realpath(root)

    # -- confinement ------------------------------------------------------------------------

    def _inside(self, real: str) -> bool:
        return real == self.root or os.path.commonpath([self.root, real]) == self.root

    def _resolve(self, path: str) -> tuple[str, str]:
        """(virtual path, real path inside the root) or BackendError."""
        virtual = normalize(path)
        real = os.path.realpath(os.path.join(self.root, virtual.lstrip("/")))
        if not self._inside(real):
            raise BackendError(f"{virtual} leads outside the workspace (through a symbolic "
                               "link), so it cannot be used.")
        return virtual, real

    # -- operations -------------------------------------------------------------------------

    def ls(self, path: str) -> list[FileInfo]:
        virtual, real = self._resolve(path)
        try:
            st = os.stat(real)
        except FileNotFoundError:
            raise BackendError(f"No such file or directory: {virtual}") from None
        except OSError as exc:
            raise BackendError(f"Cannot list {virtual}: {exc.strerror}.") from None
        if not stat.S_ISDIR(st.st_mode):
            return [FileInfo(virtual, False, st.st_size)]
        base = virtual.rstrip("/")
        out: list[FileInfo] = []
        try:
            with os.scandir(real) as entries:
                for entry in entries:
                    if not _addressable(entry.name):
                        continue
                    try:
                        if entry.is_symlink():
                            target = os.path.realpath(entry.path)
                            if not self._inside(target):
                                continue
                            est = os.stat(target)
                        else:
                            est = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    is_dir = stat.S_ISDIR(est.st_mode)
                    out.append(FileInfo(f"{base}/{entry.name}", is_dir,
                                        0 if is_dir else est.st_size))
        except OSError as exc:
            raise BackendError(f"Cannot list {virtual}: {exc.strerror}.") from None
        return sorted(out, key=lambda f: f.path)

    def _read_bytes(self, virtual: str, real: str) -> bytes:
        try:
            fd = os.open(real, _READ_FLAGS)
        except FileNotFoundError:
            raise BackendError(f"File not found: {virtual}") from None
        except OSError as exc:
            raise BackendError(f"Cannot read {virtual}: {exc.strerror}.") from None
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise BackendError(f"{virtual} is a directory; use ls to list it.")
            if not stat.S_ISREG(st.st_mode):
                raise BackendError(f"{virtual} is not a regular file.")
            if st.st_size > MAX_FILE_BYTES:
                raise BackendError(f"{virtual} is too large to read ({st.st_size} bytes; the "
                                   f"limit is {MAX_FILE_BYTES}).")
            chunks: list[bytes] = []
            size = 0
            while size <= MAX_FILE_BYTES:
                chunk = os.read(fd, MAX_FILE_BYTES + 1 - size)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        except OSError as exc:
            raise BackendError(f"Cannot read {virtual}: {exc.strerror}.") from None
        finally:
            os.close(fd)
        if size > MAX_FILE_BYTES:
            raise BackendError(f"{virtual} is too large to read (over {MAX_FILE_BYTES} "
                               "bytes).")
        return b"".join(chunks)

    def read(self, path: str) -> str:
        virtual, real = self._resolve(path)
        data = self._read_bytes(virtual, real)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise BackendError(f"{virtual} is not a UTF-8 text file.") from None

    def write(self, path: str, content: str) -> None:
        virtual, real = self._resolve(path)
        if virtual == "/" or os.path.isdir(real):
            raise BackendError(f"{virtual} is a directory; give a file path.")
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise BackendError(f"Cannot write {virtual}: the content is not valid text "
                               f"({exc.reason} at position {exc.start}); the file is "
                               "unchanged.") from None
        parent = os.path.dirname(real)
        try:
            os.makedirs(parent, exist_ok=True)
        except OSError:
            raise BackendError(f"Cannot create the parent directories of {virtual}: a "
                               "file is in the way.") from None
        if not self._inside(os.path.realpath(parent)):  # changed under us
            raise BackendError(f"{virtual} leads outside the workspace, so it cannot be used.")
        try:
            st: os.stat_result | None = os.lstat(real)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise BackendError(f"Cannot write {virtual}: {exc.strerror}.") from None
        if st is not None:
            if stat.S_ISDIR(st.st_mode):
                raise BackendError(f"{virtual} is a directory; give a file path.")
            if not stat.S_ISREG(st.st_mode):
                raise BackendError(f"{virtual} is not a regular file, so it cannot be "
                                   "written.")
        temp = os.path.join(parent, f".{os.path.basename(real)}.{secrets.token_hex(6)}.tmp")
        try:
            fd = os.open(temp, _TEMP_FLAGS, 0o644)
        except OSError as exc:
            raise BackendError(f"Cannot write {virtual}: {exc.strerror}.") from None
        try:
            try:
                if st is not None:
                    os.fchmod(fd, stat.S_IMODE(st.st_mode))
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            os.replace(temp, real)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise BackendError(f"Cannot write {virtual}: {exc.strerror}; the file is "
                               "unchanged.") from None

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> int:
        virtual = normalize(path)
        text, count = apply_edit(self.read(virtual), virtual, old, new, replace_all)
        self.write(virtual, text)
        return count

    def _walk(self, virtual: str, real: str) -> Iterator[tuple[str, str, bool]]:
        """(virtual path, real path, is symlink) for files under a directory, no link dirs."""
        if not os.path.isdir(real):
            if os.path.lexists(real):
                yield virtual, real, False
            return
        base = virtual.rstrip("/")
        for dirpath, dirnames, filenames in os.walk(real, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if _addressable(d)
                                 and not os.path.islink(os.path.join(dirpath, d)))
            rel = os.path.relpath(dirpath, real)
            vdir = base if rel == "." else f"{base}/{rel}"
            for name in sorted(filenames):
                if not _addressable(name):
                    continue
                full = os.path.join(dirpath, name)
                yield f"{vdir}/{name}", full, os.path.islink(full)

    def glob(self, pattern: str, path: str = "/") -> list[str]:
        virtual, real = self._resolve(path)
        base = virtual.rstrip("/")
        out = []
        for vpath, full, is_link in self._walk(virtual, real):
            if is_link and not self._inside(os.path.realpath(full)):
                continue
            rel = vpath[len(base) + 1:] if vpath != virtual else vpath.rsplit("/", 1)[-1]
            if glob_match(pattern, rel):
                out.append(vpath)
        return out

    def grep(self, pattern: str, path: str = "/", glob: str | None = None) -> list[GrepMatch]:
        require_pattern(pattern)
        virtual, real = self._resolve(path)
        out: list[GrepMatch] = []
        for vpath, full, is_link in self._walk(virtual, real):
            if is_link or not grep_glob_match(glob, vpath):
                continue
            try:
                data = self._read_bytes(vpath, full)
            except BackendError:
                continue
            if b"\x00" in data[:8192]:
                continue  # binary
            for number, line in matching_lines(data.decode("utf-8", "replace"), pattern):
                out.append(GrepMatch(vpath, number, line))
                if len(out) >= GREP_LIMIT:
                    return out
        return out
