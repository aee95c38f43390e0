"""The stamps of what a command read (cli/reads.py), which a replay compares
(cli/remembered.py): a file opened by a digest of its content, a path looked at by what a
`stat` tells (a module too: one edited with its size and time put back runs anew where
Python finds no `.pyc`), a folder by its listing. Read with
the functions `os` had before any were wrapped for recording, without blocking on a FIFO and
without opening a device. Standard library only, like the replay.
"""

from __future__ import annotations

import os
import stat

__all__ = ["LARGEST", "LOOK", "MODULE", "OPEN", "Stamp", "changed_ns", "folder_stamp", "stamp"]

#: how a path was read: opened (its stamp holds a digest of its content), looked at (what a
#: `stat` tells: type, size, times, permissions and inode; where it leads, for a link), or run
#: as a module (stamped as looked at: Python judges a `.pyc` by its source's size and
#: modification time, which can be put back, but runs the source itself where there is none)
OPEN, LOOK, MODULE = "open", "look", "module"
#: a path's stamp, JSON-friendly; `["absent", errno]` for a path that is not there
Stamp = list[int | str]
#: an opened file larger than this is not digested: the run is not kept
LARGEST = 16 * 1024 * 1024

_REAL_STAT, _REAL_READLINK, _REAL_OPEN = os.stat, os.readlink, os.open  # before any is wrapped
#: the length of the stamp of a file looked at (`stamp`): kind, size, times, mode, inode, device
_LOOKED_AT = 7


def stamp(place: str, follow: bool, how: str) -> Stamp:
    """What `place` is now, as `how` it was read: the stamp a replay compares."""
    try:
        info = _REAL_STAT(place, follow_symlinks=follow)
    except OSError as error:
        return ["absent", error.errno or 0]
    except ValueError:
        return ["absent", 0]
    kind = stat.S_IFMT(info.st_mode)
    if stat.S_ISDIR(info.st_mode):
        return [kind]  # looked at, not listed: its entries are not what was read
    if how != OPEN or not stat.S_ISREG(info.st_mode):
        if stat.S_ISLNK(info.st_mode):  # its size and time can be put back, not its target
            try:
                return [kind, _REAL_READLINK(place)]
            except (OSError, ValueError):
                return ["unread"]
        # the change time cannot be put back (`os.utime`), and follows a change of mode
        return [kind, info.st_size, info.st_mtime_ns, info.st_ctime_ns,  # changed_ns reads it
                stat.S_IMODE(info.st_mode), info.st_ino, info.st_dev]
    return _digest(place, info)


def changed_ns(found: Stamp) -> int:
    """The change time a looked-at stamp of a file holds (-1 for a folder, a link, a path
    that is absent or unread: their stamps hold none)."""
    return int(found[3]) if len(found) == _LOOKED_AT else -1


def _digest(place: str, info: os.stat_result) -> Stamp:
    """The stamp of the regular file `place`, by its content; opened without blocking and
    judged by its descriptor, so that a FIFO or device put in its place is never read."""
    if info.st_size > LARGEST:
        return ["unread"]
    import hashlib

    try:
        descriptor = _REAL_OPEN(place, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except (OSError, ValueError):
        return ["unread"]
    with open(descriptor, "rb") as file:
        try:
            opened = os.fstat(descriptor)
            if (opened.st_ino, opened.st_dev) != (info.st_ino, info.st_dev) or \
                    opened.st_size > LARGEST:
                return ["unread"]  # replaced since it was looked at
            digest = hashlib.file_digest(file, lambda: hashlib.blake2b(digest_size=20))
        except OSError:
            return ["unread"]
    return [stat.S_IFREG, opened.st_size, digest.hexdigest()]


def folder_stamp(folder: str, left_out: tuple[str, ...] = ()) -> str:
    """The names in `folder` but those ending with one of `left_out`, and what each is (for a
    link, also what it leads to), or why it could not be listed."""
    try:
        with os.scandir(folder) as entries:
            listed = sorted(f"{e.name}\0{_entry_kind(e)}" for e in entries
                            if not (left_out and e.name.endswith(left_out)))
    except OSError as error:
        return f"unlisted {error.errno}"
    except ValueError:
        return "unlisted"
    import hashlib

    return hashlib.blake2b("\n".join(listed).encode(errors="surrogateescape"),
                           digest_size=16).hexdigest()


def _entry_kind(entry: os.DirEntry[str]) -> str:
    """What an entry is, and for a link what it leads to: `DirEntry.is_dir()` follows links in
    C code (`glob` descends through them), so a link coming to lead to a folder shows here."""
    try:
        if entry.is_symlink():
            try:
                return "l" + _kind(_REAL_STAT(entry.path).st_mode)
            except (OSError, ValueError):
                return "l-"  # leads nowhere (yet)
        return "d" if entry.is_dir(follow_symlinks=False) \
            else "f" if entry.is_file(follow_symlinks=False) else "o"
    except OSError:
        return "?"


def _kind(mode: int) -> str:
    return "d" if stat.S_ISDIR(mode) else "f" if stat.S_ISREG(mode) else "o"
