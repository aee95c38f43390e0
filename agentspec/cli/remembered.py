"""`agentspec validate` remembered: a run whose inputs are all as they were when it last ran
prints what it printed then, without importing anything but the standard library.

A run is kept (in the user cache directory, `usercache.py`) under its command line, working
directory, interpreter, user and whole environment, with the stamp of everything it read
(`reads.py`): each file it opened or looked at, each folder it listed, each module it ran and
the folders modules are found in. A later run with the same key replays it only when every
stamp still matches; anything else, or anything unusual (a terminal that is not UTF-8, a run
that read what the record cannot pin down, a file that changed while the run read it), runs
the command as usual. Only the digest of the environment is kept, never its values.
Agentspec's own entries in the cache directory are not recorded; anything else there is.
`AGENTSPEC_CACHE_DIR=` turns this off with the other caches.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from agentspec.cli import reads, stamps
from agentspec.usercache import cache_directory, open_private, prune, read_entry, write_entry

__all__ = ["keep", "replay", "start"]

#: the version of the entries' layout, and of what a run's key is made of
_LAYOUT = "2"
_PREFIX = "validate-"
_SUFFIX = ".result"
#: entries kept; the oldest beyond it are removed when one is written
KEPT = 200
#: how the names of the cache's own entries end (the validator cache's, language/prebuilt.py;
#: the kept runs; the files written before they are renamed): neither reading them nor their
#: names in the cache folder's listing are recorded
_OWN_ENTRIES = (".validator", _SUFFIX, ".tmp")

_key: list[str] = []  # the key of the run being recorded in this process, when one is


def _replayable(argv: Sequence[str]) -> bool:
    """`validate` and nothing that asks for help, the version or the network, in a Python
    that prints no traces of its own (imports, import times), which a replay would not."""
    return bool(argv) and argv[0] == "validate" and not any(
        a in ("-h", "--help", "--version") or a.startswith("--onl") for a in argv[1:]) \
        and not (sys.flags.verbose or "importtime" in getattr(sys, "_xoptions", {})
                 or os.environ.get("PYTHONPROFILEIMPORTTIME"))


def _entry_name(argv: Sequence[str]) -> str | None:
    import hashlib

    try:
        cwd = os.getcwd()
    except OSError:
        return None
    environment = hashlib.blake2b(digest_size=32)
    for name, value in sorted(os.environ.items()):
        environment.update(f"{name}\0{value}\0".encode(errors="surrogateescape"))
    key = json.dumps([_LAYOUT, sys.executable, sys.version, repr(sys.flags),
                      sorted(getattr(sys, "_xoptions", {}).items()), sys.warnoptions,
                      sys.path, cwd,
                      os.getuid(), list(argv), environment.hexdigest()])
    digest = hashlib.blake2b(key.encode(errors="surrogateescape"), digest_size=20)
    return f"{_PREFIX}{digest.hexdigest()}{_SUFFIX}"


def _utf8_output() -> bool:
    return all((getattr(s, "encoding", "") or "").lower().replace("-", "") == "utf8"
               for s in (sys.stdout, sys.stderr))


def replay(argv: Sequence[str]) -> int | None:
    """Print what the same run printed when all it read was as it is now, and return its
    exit status; None when there is no such run (the command is then run)."""
    if not _replayable(argv) or not _utf8_output() or not hasattr(os, "getuid"):
        return None
    directory = cache_directory()
    name = _entry_name(argv)
    if directory is None or name is None:
        return None
    folder = open_private(directory)
    if folder is None:
        return None
    try:
        data = read_entry(folder, name)
    finally:
        os.close(folder)
    if data is None:
        return None
    try:
        entry = json.loads(data)
        out, err, status = entry["out"], entry["err"], entry["status"]
        paths, folders = entry["paths"], entry["folders"]
    except (ValueError, KeyError, TypeError):
        return None
    if not (isinstance(out, str) and isinstance(err, str) and status in (0, 1, 2)
            and _well_formed(paths, folders)):
        return None
    if not (all(stamps.stamp(place, follow, how) == stamp
                for place, follow, how, stamp in paths)
            and all(stamps.folder_stamp(place, tuple(left_out)) == stamp
                    for place, left_out, stamp in folders)):
        return None
    try:
        sys.stdout.write(out)
        sys.stdout.flush()
        sys.stderr.write(err)
        sys.stderr.flush()
    except BrokenPipeError:  # the reader left, as click answers it
        return 1
    except OSError as error:  # a full disk: said plainly, with the command's status then
        print(f"agentspec: cannot write the output: {error}", file=sys.stderr)
        return 2
    return int(status)


def _well_formed(paths: object, folders: object) -> bool:
    """Whether the stamps of an entry are as `keep` writes them (absolute paths, ...)."""
    return isinstance(paths, list) and isinstance(folders, list) and all(
        isinstance(p, list) and len(p) == 4 and isinstance(p[0], str) and os.path.isabs(p[0])
        and isinstance(p[1], bool) and p[2] in (stamps.OPEN, stamps.LOOK, stamps.MODULE)
        and isinstance(p[3], list) for p in paths) and all(
        isinstance(f, list) and len(f) == 3 and isinstance(f[0], str) and os.path.isabs(f[0])
        and isinstance(f[1], list) and all(isinstance(n, str) for n in f[1])
        and isinstance(f[2], str) for f in folders)


def start(argv: Sequence[str]) -> None:
    """Record what this run reads, when it is one that could be replayed."""
    if not _replayable(argv) or not _utf8_output():
        return
    directory = cache_directory()
    name = _entry_name(argv)
    if directory is None or name is None:
        return
    _key[:] = [name, str(directory)]
    reads.record([str(directory), os.path.realpath(directory)], _OWN_ENTRIES)


def _printable(text: str, stream: object) -> bool:
    """Whether `stream` can write `text` (its error handler may refuse a surrogate): when it
    cannot, the command fails as it prints, which a replay must not turn into a traceback.
    Nor is text with an escape character kept: click removes styles where the output is no
    terminal, a replay could not tell."""
    if "\x1b" in text:
        return False
    try:
        text.encode(getattr(stream, "encoding", None) or "utf-8",
                    getattr(stream, "errors", None) or "strict")
    except (UnicodeError, LookupError):
        return False
    return True


def keep(out: str, err: str, status: int) -> None:
    """Keep what the run being recorded printed, with the stamps of what it read."""
    if not _key:
        return
    name, directory = _key
    _key.clear()
    found, why = reads.recorded()
    if found is not None and not (_printable(out, sys.stdout) and _printable(err, sys.stderr)):
        found, why = None, "its output cannot be written as it is (a file name not in UTF-8?)"
    if found is None:
        if os.environ.get("AGENTSPEC_DEBUG"):
            print(f"agentspec: this run is not remembered: {why}", file=sys.stderr)
        return
    folder = open_private(Path(directory))
    if folder is None:
        return
    try:
        entry = {"out": out, "err": err, "status": status,
                 "paths": [[place, follow, how, stamp]
                           for (place, follow, how), stamp in found.paths.items()],
                 "folders": [[place, left_out, stamp]
                             for (place, left_out), stamp in found.folders.items()]}
        if write_entry(folder, name, json.dumps(entry).encode(errors="surrogateescape")):
            prune(folder, _PREFIX, _SUFFIX, KEPT, now_ns=time.time_ns())
    finally:
        os.close(folder)
