"""The texts the language server reads, each read again only when it changed: an open
buffer when the editor sent another text, a file on disk when its `os.stat` stamp (size,
modification and change times, inode, device) differs from the one it had when last read.
A file whose modification time is as recent as the read is not trusted by its stamp (a
write in the same tick of the file system's clock keeps it): it is read again, and judged
by its content, until it is older. Requests re-use these texts and their digests, so an
unchanged tree is not read again on every hover or completion."""

from __future__ import annotations

import hashlib
import os
import stat
import time
from pathlib import Path

from agentspec.parse import MAX_BYTES

__all__ = ["Texts", "digest"]

#: how much later than a file's modification time its read must start for the stamp to be
#: trusted (file system clocks tick coarsely: a write in the same tick keeps the stamp)
_SETTLED_NS = 50_000_000
_Stamp = tuple[int, int, int, int, int]


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


class Texts:
    """The open buffers' texts (set by the server) and the files on disk as last read."""

    def __init__(self) -> None:
        self.buffers: dict[Path, str] = {}
        #: path -> (stamp when read, or None: read again next time; text; digest)
        self._disk: dict[Path, tuple[_Stamp | None, str | None, str]] = {}
        #: path -> (the buffer's text, its digest): the same object is not hashed twice
        self._hashed: dict[Path, tuple[str, str]] = {}

    def text(self, path: Path) -> str | None:
        """The open buffer of `path`, else its file's UTF-8 text (None: not a readable
        regular file of at most MAX_BYTES, or not UTF-8)."""
        if path in self.buffers:
            return self.buffers[path]
        return self._read(path)[0]

    def digest(self, path: Path) -> str:
        """The digest of `text(path)` (of "" when there is none)."""
        if path in self.buffers:
            text = self.buffers[path]
            last = self._hashed.get(path)
            if last is None or last[0] is not text:
                last = self._hashed[path] = (text, digest(text))
            return last[1]
        self._hashed.pop(path, None)  # a buffer closed
        return self._read(path)[1]

    def _read(self, path: Path) -> tuple[str | None, str]:
        try:
            now = _stamp(os.stat(path))
        except (OSError, ValueError):
            now = None
        last = self._disk.get(path)
        if last is not None and last[0] is not None and last[0] == now:
            return last[1], last[2]
        started = time.time_ns()
        stamp, text = self._load(path) if now is not None else (None, None)
        stamp = stamp or now  # not opened (no permission): tried again when its stamp changes
        if stamp is not None and stamp[1] + _SETTLED_NS > started:
            stamp = None  # written as recently as it was read: judged by content next time
        if len(self._disk) > 4096:
            self._disk.clear()
        found = digest(text or "")
        self._disk[path] = (stamp, text, found)
        return text, found

    def _load(self, path: Path) -> tuple[_Stamp | None, str | None]:
        """The stamp of the file opened (not of the name: it may be swapped meanwhile) and
        its text; never blocks on a FIFO."""
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except (OSError, ValueError):
            return None, None
        try:
            with os.fdopen(fd, "rb") as handle:
                info = os.fstat(handle.fileno())
                if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
                    return _stamp(info), None
                raw = handle.read(MAX_BYTES + 1)
        except OSError:
            return None, None
        if len(raw) > MAX_BYTES:
            return None, None
        try:  # a byte order mark is not content (as the checker reads the file)
            return _stamp(info), raw.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
        except UnicodeDecodeError:
            return _stamp(info), None


def _stamp(info: os.stat_result) -> _Stamp:
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)
