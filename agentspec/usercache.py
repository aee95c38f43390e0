"""The user's cache directory of agentspec, and entries in it only this user could have written.

The directory is `AGENTSPEC_CACHE_DIR`, else `$XDG_CACHE_HOME/agentspec`, else
`~/.cache/agentspec`; `AGENTSPEC_CACHE_DIR=` (empty) turns every cache off. A folder or entry is
used only when this user owns it and nobody else can write it, judged through the descriptor
that is then read and written, so a folder swapped after the check is never the one used.
Standard library only: the replay of `validate` (cli/remembered.py) runs before anything else
is imported.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from pathlib import Path
from typing import Any

__all__ = ["cache_directory", "open_private", "private", "prune", "read_entry", "write_entry"]


def cache_directory() -> Path | None:
    """The cache directory, made when missing, or None when it is off or cannot be made
    (whether it is safe to use is judged through its descriptor: `open_private`)."""
    if not hasattr(os, "getuid"):
        return None  # ownership cannot be checked the same way (Windows): no cache
    chosen = os.environ.get("AGENTSPEC_CACHE_DIR")
    if chosen is not None:
        if not chosen:
            return None
        directory = Path(chosen)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        directory = Path(base) / "agentspec"
    if not directory.is_absolute():
        return None  # relative to wherever the command runs: never a cache
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        return directory
    except (OSError, ValueError):
        return None


def private(info: os.stat_result, kind: Any) -> bool:
    """Of the right kind (not a link), this user's, and writable by nobody else."""
    return bool(kind(info.st_mode)) and info.st_uid == os.getuid() and \
        not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def open_private(directory: Path) -> int | None:
    """A descriptor of `directory` when it is private (see `private`), else None."""
    if not {os.open, os.rename, os.unlink} <= os.supports_dir_fd \
            or os.listdir not in os.supports_fd:
        return None
    try:
        folder = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except (OSError, ValueError):
        return None
    try:
        if private(os.fstat(folder), stat.S_ISDIR):
            return folder
    except OSError:
        pass
    os.close(folder)
    return None


def read_entry(folder: int, entry: str) -> bytes | None:
    """The bytes of `entry` in `folder` when it is a private regular file, else None."""
    try:
        descriptor = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=folder)
    except OSError:
        return None
    try:
        with os.fdopen(descriptor, "rb") as file:
            if not private(os.fstat(file.fileno()), stat.S_ISREG):
                return None
            return file.read()
    except OSError:
        return None


def write_entry(folder: int, entry: str, data: bytes) -> bool:
    """Write `entry` whole or not at all (a new file renamed over the old one)."""
    temporary = f".{entry}.{os.getpid()}.{secrets.token_hex(4)}.tmp"  # as _TEMPORARY matches
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                             0o600, dir_fd=folder)
    except OSError:
        return False
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        os.rename(temporary, entry, src_dir_fd=folder, dst_dir_fd=folder)  # POSIX: replaces
        return True
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        return False


#: a temporary file this old was left by a process that died while writing
_LEFT_BEHIND_NS = 3600 * 10**9
#: the name of a file `write_entry` writes before it is renamed
_TEMPORARY = re.compile(r"\..+\.[0-9]+\.[0-9a-f]{8}\.tmp", re.ASCII)
_HEX = re.compile(r"[0-9a-f]+", re.ASCII)


def prune(folder: int, prefix: str, suffix: str, kept: int, *, now_ns: int) -> None:
    """Keep the `kept` newest entries named `prefix<hex>suffix` in `folder`, and remove the
    temporary files that writers which died left there. Only files as `write_entry` writes
    them are touched: named so, regular, of one name, this user's and for nobody else (a
    cache directory may be a workspace, `AGENTSPEC_CACHE_DIR`)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    aged: list[tuple[int, str]] = []
    for name in names:
        entry = name.startswith(prefix) and name.endswith(suffix) and \
            _HEX.fullmatch(name, len(prefix), len(name) - len(suffix)) is not None
        if not (entry or _TEMPORARY.fullmatch(name)):
            continue
        try:
            info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except OSError:
            continue
        if not (stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid()
                and info.st_nlink == 1 and not info.st_mode & 0o077):
            continue
        if entry:
            aged.append((info.st_mtime_ns, name))
        elif now_ns - info.st_mtime_ns > _LEFT_BEHIND_NS:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=folder)
    for _, name in sorted(aged)[:max(0, len(aged) - kept)]:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=folder)
