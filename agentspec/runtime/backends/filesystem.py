"""A local directory as a backend, confined to its root.

Every path is found one name at a time from directory file descriptors (`confined.py`), so
`..`, absolute paths and symbolic links (as the last name or as any parent directory) cannot
lead outside, not even when another process swaps a directory for a link meanwhile; links
that stay inside are followed. A file with more than one name (a hard link) is not read
unless the backend allows it (`hard_links=True`): its other name may lie outside the root,
and nothing can tell. Writes go to a new temporary file in the target's directory
(`O_CREAT | O_EXCL | O_NOFOLLOW`) that then replaces the target, so a failed write leaves the
old content; only regular files are read or replaced. glob and grep never descend through
symbolic links (`os.fwalk`, which holds each directory open). Names that are not valid UTF-8
cannot be addressed by a model and are left out of ls, glob and grep.
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
    GlobBudget,
    GrepMatch,
    apply_edit,
    glob_match,
    grep_glob_match,
    is_utf8,
    matching_lines,
    normalize,
    require_pattern,
)
from agentspec.runtime.backends.confined import DIR_FLAGS, Confined, Outside
from agentspec.runtime.backends.roots import open_directory
from agentspec.runtime.backends.transfer import Transfers

__all__ = ["MAX_DEPTH", "MAX_FILE_BYTES", "FilesystemBackend"]

MAX_FILE_BYTES = 10 * 1024 * 1024
"""Files larger than this are not read (read fails; grep skips them)."""

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_APPEND_FLAGS = (os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
                 | os.O_CLOEXEC)
_TEMP_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_NONBLOCK
               | os.O_CLOEXEC)


MAX_DEPTH = 256
"""Directories glob and grep descend below the path they search (each is held open on the
way down, so this also bounds the descriptors a walk holds)."""


def _listing(fd: int) -> tuple[list[tuple[str, bool]], list[str]]:
    """(files with whether each is a symbolic link, subdirectories) of an open directory,
    in name order; empty when it cannot be read."""
    files: list[tuple[str, bool]] = []
    directories: list[str] = []
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                if not is_utf8(entry.name):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    directories.append(entry.name)
                elif not entry.is_symlink():
                    files.append((entry.name, False))
                elif not entry.is_dir():  # a link to a directory is neither walked nor listed
                    files.append((entry.name, True))
    except OSError:
        return [], []
    return sorted(files), sorted(directories)


def _files(top: int, base: str) -> Iterator[tuple[str, int, str, bool]]:
    """The files under the open directory `top` (closed afterwards): its own files, then each
    subdirectory's, in name order. Subdirectories are opened from their parent's fd with
    O_NOFOLLOW, so a link is never entered, not even one swapped in for a directory
    meanwhile. A loop, not recursion: a tree thousands of levels deep (a command can make
    one) stops with an error at MAX_DEPTH instead of exhausting the stack."""
    stack: list[tuple[int, str, Iterator[str]]] = [(top, base, iter(()))]
    try:
        while stack:
            fd, path, _ = stack[-1]
            files, directories = _listing(fd)
            stack[-1] = (fd, path, iter(directories))
            for name, is_link in files:
                yield f"{path}/{name}", fd, name, is_link
            while stack:  # the next directory to enter, closing those done with
                parent, parent_path, todo = stack[-1]
                entry = next(todo, None)
                if entry is None:
                    os.close(stack.pop()[0])
                    continue
                try:
                    child = os.open(entry, DIR_FLAGS, dir_fd=parent)
                except OSError:
                    continue
                if len(stack) > MAX_DEPTH:
                    os.close(child)
                    raise BackendError(
                        f"{parent_path}/{entry} is more than {MAX_DEPTH} directories below "
                        f"{base or '/'}; glob and grep do not search that deep. Search a "
                        "narrower path, or remove the deep tree.")
                stack.append((child, f"{parent_path}/{entry}", iter(())))
                break
    finally:
        for fd, _, _ in stack:
            os.close(fd)


class FilesystemBackend(Transfers):
    """Files under `root`; the virtual path `/a/b.md` is `root/a/b.md`."""

    def __init__(self, root: Path | str, hard_links: bool = False) -> None:
        # taken literally and opened without following links (roots.py): a root whose
        # path a command turned into a link to `/` is refused, not resolved to `/`
        self.root = os.path.normpath(os.path.abspath(root))
        os.close(open_directory(self.root, create=True))
        self.hard_links = hard_links
        self._confined = Confined(self.root)

    # -- finding paths ----------------------------------------------------------------------

    @contextlib.contextmanager
    def _located(self, virtual: str, *, create: bool = False,
                 missing: str = "No such file or directory: {}") -> Iterator[tuple[int, str]]:
        """(directory fd, name) of a virtual path, or the BackendError a model can act on
        (`missing` when a directory on the way is not there)."""
        try:
            with self._confined.located(virtual, create=create) as found:
                yield found
        except Outside:
            raise BackendError(f"{virtual} leads outside the workspace (through a symbolic "
                               "link), so it cannot be used.") from None
        except (FileNotFoundError, NotADirectoryError):
            raise BackendError(missing.format(virtual)) from None

    def resolve(self, path: str) -> str:
        """The virtual path `path` leads to, its symbolic links followed inside the root (the
        path itself when it leads outside: using it fails anyway). Path permissions judge
        this path too, so a link under an allowed path cannot reach a denied one."""
        virtual = normalize(path)
        try:
            return self._confined.resolve(virtual)
        except (OSError, BackendError):
            return virtual

    def _inside(self, virtual: str) -> bool:
        """Whether a path (a symbolic link, say) resolves inside the root."""
        try:
            with self._confined.located(virtual):
                return True
        except (OSError, BackendError):
            return False

    def _open_file(self, virtual: str, parent: int, name: str) -> tuple[int, os.stat_result]:
        """An fd of a regular file this backend may read, and its status."""
        fd = os.open(name or ".", _READ_FLAGS, dir_fd=parent)
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise BackendError(f"{virtual} is a directory; use ls to list it.")
            if not stat.S_ISREG(st.st_mode):
                raise BackendError(f"{virtual} is not a regular file.")
            if st.st_nlink > 1 and not self.hard_links:
                raise BackendError(
                    f"{virtual} has {st.st_nlink} names (hard links), and another one may be "
                    "outside the workspace, so it is not read. (A backend with `hard_links: "
                    "allow` reads such files.)")
        except BaseException:
            os.close(fd)
            raise
        return fd, st

    # -- operations -------------------------------------------------------------------------

    def ls(self, path: str) -> list[FileInfo]:
        virtual = normalize(path)
        with self._located(virtual) as (parent, name):
            try:
                st = os.stat(name or ".", dir_fd=parent, follow_symlinks=False)
                if not stat.S_ISDIR(st.st_mode):
                    return [FileInfo(virtual, False, st.st_size)]
                fd = os.open(name or ".", DIR_FLAGS, dir_fd=parent)
            except OSError as exc:
                raise BackendError(f"Cannot list {virtual}: {exc.strerror}.") from None
        try:
            return self._entries(virtual, fd)
        finally:
            os.close(fd)

    def _entries(self, virtual: str, fd: int) -> list[FileInfo]:
        base = virtual.rstrip("/")
        out: list[FileInfo] = []
        try:
            with os.scandir(fd) as entries:
                for entry in entries:
                    if not is_utf8(entry.name):
                        continue
                    child = f"{base}/{entry.name}"
                    try:
                        est = self._link_status(child) if entry.is_symlink() else \
                            entry.stat(follow_symlinks=False)
                    except (OSError, BackendError):
                        continue  # a link leading out (or gone) is not listed
                    is_dir = stat.S_ISDIR(est.st_mode)
                    out.append(FileInfo(child, is_dir, 0 if is_dir else est.st_size))
        except OSError as exc:
            raise BackendError(f"Cannot list {virtual}: {exc.strerror}.") from None
        return sorted(out, key=lambda f: f.path)

    def _link_status(self, virtual: str) -> os.stat_result:
        with self._confined.located(virtual) as (parent, name):
            return os.stat(name or ".", dir_fd=parent, follow_symlinks=False)

    def _read_bytes(self, virtual: str, parent: int, name: str) -> bytes:
        try:
            fd, st = self._open_file(virtual, parent, name)
        except FileNotFoundError:
            raise BackendError(f"File not found: {virtual}") from None
        except OSError as exc:
            raise BackendError(f"Cannot read {virtual}: {exc.strerror}.") from None
        try:
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
        virtual = normalize(path)
        with self._located(virtual, missing="File not found: {}") as (parent, name):
            data = self._read_bytes(virtual, parent, name)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise BackendError(f"{virtual} is not a UTF-8 text file.") from None

    def write(self, path: str, content: str) -> None:
        virtual = normalize(path)
        if virtual == "/":
            raise BackendError(f"{virtual} is a directory; give a file path.")
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise BackendError(f"Cannot write {virtual}: the content is not valid text "
                               f"({exc.reason} at position {exc.start}); the file is "
                               "unchanged.") from None
        with self._located(virtual, create=True, missing="Cannot create the parent directories "
                           "of {}: a file is in the way.") as (parent, name):
            self._replace(virtual, parent, name, data)

    def append(self, path: str, content: str) -> None:
        """Adds `content` at the end of a regular file, made (with its parents) if missing.
        Opened from its directory's fd with `O_APPEND | O_NOFOLLOW`; a file with other
        names (hard links) is refused, as for reading."""
        virtual = normalize(path)
        data = content.encode("utf-8", "surrogatepass")
        with self._located(virtual, create=True, missing="Cannot create the parent directories "
                           "of {}: a file is in the way.") as (parent, name):
            if not name:
                raise BackendError(f"{virtual} is a directory; give a file path.")
            try:
                fd = os.open(name, _APPEND_FLAGS, 0o644, dir_fd=parent)
            except OSError as exc:
                raise BackendError(f"Cannot append to {virtual}: {exc.strerror}.") from None
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    raise BackendError(f"{virtual} is not a regular file.")
                if st.st_nlink > 1 and not self.hard_links:
                    raise BackendError(f"{virtual} has {st.st_nlink} names (hard links), so it "
                                       "is not written.")
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            except OSError as exc:
                raise BackendError(f"Cannot append to {virtual}: {exc.strerror}.") from None
            finally:
                os.close(fd)

    def _replace(self, virtual: str, parent: int, name: str, data: bytes) -> None:
        """Writes `name` in `parent` through a new temporary file that replaces it."""
        if not name:
            raise BackendError(f"{virtual} is a directory; give a file path.")
        try:
            st: os.stat_result | None = os.stat(name, dir_fd=parent, follow_symlinks=False)
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
        temp = f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(temp, _TEMP_FLAGS, 0o644, dir_fd=parent)
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
            os.replace(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=parent)
            raise BackendError(f"Cannot write {virtual}: {exc.strerror}; the file is "
                               "unchanged.") from None

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> int:
        virtual = normalize(path)
        text, count = apply_edit(self.read(virtual), virtual, old, new, replace_all)
        self.write(virtual, text)
        return count

    def _walk(self, virtual: str) -> Iterator[tuple[str, int, str, bool]]:
        """(virtual path, fd of its directory, name, is a symbolic link) of every file under
        a path (or the file itself), never descending through a link."""
        with self._located(virtual) as (parent, name):
            try:
                st = os.stat(name or ".", dir_fd=parent, follow_symlinks=False)
            except OSError:
                return
            if not stat.S_ISDIR(st.st_mode):
                yield virtual, parent, name, stat.S_ISLNK(st.st_mode)
                return
            try:
                fd = os.open(name or ".", DIR_FLAGS, dir_fd=parent)
            except OSError:
                return
        yield from _files(fd, virtual.rstrip("/"))

    def glob(self, pattern: str, path: str = "/") -> list[str]:
        virtual = normalize(path)
        base = virtual.rstrip("/")
        out = []
        budget = GlobBudget()
        for vpath, _, _, is_link in self._walk(virtual):
            rel = vpath[len(base) + 1:] if vpath != virtual else vpath.rsplit("/", 1)[-1]
            if glob_match(pattern, rel, budget) and (not is_link or self._inside(vpath)):
                out.append(vpath)
        return out

    def grep(self, pattern: str, path: str = "/", glob: str | None = None) -> list[GrepMatch]:
        require_pattern(pattern)
        out: list[GrepMatch] = []
        budget = GlobBudget()
        for vpath, parent, name, is_link in self._walk(normalize(path)):
            if is_link or not grep_glob_match(glob, vpath, budget):
                continue
            try:
                data = self._read_bytes(vpath, parent, name)
            except BackendError:
                continue
            if b"\x00" in data[:8192]:
                continue  # binary
            for number, line in matching_lines(data.decode("utf-8", "replace"), pattern):
                out.append(GrepMatch(vpath, number, line))
                if len(out) >= GREP_LIMIT:
                    return out
        return out
