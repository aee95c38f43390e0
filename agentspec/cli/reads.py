"""What a command read: every file it opened or looked at, every folder it listed and every
module it ran, recorded while it runs, so that its output can be replayed while all of them
are as they were (cli/remembered.py).

Opening and listing are seen through Python's audit hooks, looking at a path (`os.stat`,
`os.lstat`, `os.readlink`, `os.access`, and `os.open` with a `dir_fd`, which the audit event
does not carry) through wrappers of those functions; what each is stamped by is in
`stamps.py`. Anything the record cannot pin down
makes the run one not to replay: a subprocess, the network, a change of directory, a write
outside the caches, an audit event it does not know, a descriptor it cannot name.
Standard library only, like the replay.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from agentspec.cli.stamps import (
    _REAL_READLINK,
    _REAL_STAT,
    LOOK,
    MODULE,
    OPEN,
    Stamp,
    changed_ns,
    folder_stamp,
    stamp,
)

__all__ = ["Reads", "record", "recorded"]

#: a module is stamped when the run ends (by what a `stat` tells, change time included),
#: not when it was imported: one whose change time is this close to the run's start or later
#: may have changed after it ran, so the run is not kept (a clock's coarseness, some skew)
SETTLE_NS = 2_000_000_000

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
#: events that read or change nothing outside the process
_HARMLESS = frozenset({
    "builtins.id", "compile", "exec", "import", "marshal.loads", "marshal.dumps",
    "object.__getattr__", "object.__setattr__", "object.__delattr__", "sys._getframe",
    "sys._getframemodulename", "code.__new__", "function.__new__", "os.putenv", "os.unsetenv",
    "glob.glob", "glob.glob/2", "os.walk", "os.fwalk", "pathlib.Path.glob", "pathlib.Path.rglob",
    "pathlib.Path.walk",
    "sys.addaudithook", "sys.excepthook", "sys.unraisablehook", "os.getxattr", "os.listxattr",
    "array.__new__", "pickle.find_class", "gc.get_referrers", "gc.get_referents",
    "gc.get_objects", "sys._current_frames", "sys.settrace", "sys.setprofile", "time.sleep",
})
#: events that change files: (index of a path, index of its `dir_fd` or None), per path
_CHANGES: dict[str, tuple[tuple[int, int | None], ...]] = {
    "os.mkdir": ((0, 2),), "os.remove": ((0, 1),), "os.rmdir": ((0, 1),),
    "os.rename": ((0, 2), (1, 3)), "os.link": ((0, 2), (1, 3)), "os.symlink": ((1, 2),),
    "os.chmod": ((0, 2),), "os.chown": ((0, 3),), "os.utime": ((0, 3),),
    "os.truncate": ((0, None),), "os.chflags": ((0, None),), "os.lchflags": ((0, None),),
    "os.setxattr": ((0, None),), "os.removexattr": ((0, None),), "shutil.rmtree": ((0, 1),),
    "shutil.copyfile": ((1, None),), "shutil.copymode": ((1, None),),
    "shutil.copystat": ((1, None),), "shutil.copytree": ((1, None),),
    "shutil.move": ((0, None), (1, None)), "os.mkfifo": ((0, 2),), "os.mknod": ((0, 3),),
}
_CHANGES["os.replace"] = _CHANGES["os.rename"]


@dataclass
class Reads:
    """What a finished run read, stamped once it ended."""

    #: (path, follows links, how it was read) -> its stamp
    paths: dict[tuple[str, bool, str], Stamp]
    #: (folder, the name endings its listing leaves out) -> the stamp of its listing
    folders: dict[tuple[str, tuple[str, ...]], str]


class _Recorder:
    def __init__(self) -> None:
        self.active = False
        self.cwd = ""
        self.caches: tuple[str, ...] = ()  # the cache folders, each ending with a separator
        self.entries: tuple[str, ...] = ()  # how the names of the caches' own entries end
        self.started_ns = 0
        #: (path, follows links, how) -> its stamp when it was first read
        self.paths: dict[tuple[str, bool, str], Stamp] = {}
        #: (folder, the name endings left out) -> its listing when it was first listed
        self.folders: dict[tuple[str, tuple[str, ...]], str] = {}
        #: an opened file -> its change time when first read: a file changed and changed back
        #: during the run has its first content again, not its change time
        self.changes: dict[str, int | None] = {}
        self.refused: str | None = None
        self.dir_fd: int | None = None  # the `dir_fd` of the `os.open` under way
        self.busy = False  # looking for itself: its own calls are not the run's

    def refuse(self, why: str) -> None:
        if self.refused is None:
            self.refused = why

    def place(self, path: Any, dir_fd: int | None = None) -> str | None:
        """The absolute path `path` names (relative to `dir_fd` or the working directory);
        None for a descriptor (what it was opened as was recorded then)."""
        if isinstance(path, int):
            return None
        try:
            name = os.fsdecode(os.fspath(path))
        except (TypeError, ValueError):
            self.refuse(f"an unknown kind of path: {type(path).__name__}")
            return None
        if os.path.isabs(name):
            return name
        if dir_fd is None:
            return os.path.join(self.cwd, name)
        base = _descriptor_path(dir_fd)
        if base is None:
            self.refuse("a directory descriptor whose path is unknown")
            return None
        return os.path.join(base, name)

    def ours(self, place: str, writes: bool = False, by_folder: bool = False) -> bool:
        """Whether `place` is a cache's own, which changes no output: anything written in the
        cache folders, the entries read there through the folder's descriptor (as
        usercache.py reads them; not whatever else is below them: a project may be, nor an
        entry read by its path, as a spec), and Python's `.pyc` files in `__pycache__`
        folders."""
        folder, name = os.path.split(place)
        if by_folder and os.path.join(folder, "") in self.caches and \
                name.endswith(self.entries):
            return True
        return (writes and os.path.join(place, "").startswith(self.caches)) or \
            (os.path.basename(folder) == "__pycache__" and name.endswith(".pyc"))

    def add(self, place: str, follow: bool, how: str) -> None:
        """Stamp `place` when first read: an opened file by its content before it is read,
        so that a change during the run, even one that keeps its size and times, shows."""
        key = (place, follow, how)
        if key not in self.paths and not (how == LOOK and place.startswith(_PACKAGE)
                                          and place.endswith((".py", ".pyc"))):
            self.busy = True
            try:
                if how == OPEN:  # a folder's changes are its listing's (a cache's own)
                    self.changes.setdefault(place, _change_time(place))
                self.paths[key] = stamp(place, follow, how)
            finally:
                self.busy = False

    def note(self, path: Any, dir_fd: int | None, follow: bool) -> None:
        if self.busy or isinstance(path, int):
            return
        place = self.place(path, dir_fd)
        if place is not None and not self.ours(place):
            self.add(place, follow, LOOK)

    def listing(self, path: Any) -> None:
        place = _descriptor_path(path) if isinstance(path, int) else self.place(path)
        if place is None:
            self.refuse("a listed directory whose path is unknown")
            return
        listed = self.listed(place, by_descriptor=isinstance(path, int))
        if not self.ours(place) and listed not in self.folders:
            self.busy = True
            try:
                self.folders[listed] = folder_stamp(*listed)
            finally:
                self.busy = False

    def listed(self, folder: str, by_descriptor: bool) -> tuple[str, tuple[str, ...]]:
        """`folder` and the names its listing leaves out: listed through its descriptor, a
        cache folder leaves out the cache's own entries (written by every run); listed by
        its path (a glob), it is a folder like any other."""
        return folder, self.entries if by_descriptor and \
            os.path.join(folder, "") in self.caches else ()

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if self.busy:
            return
        if event == "open":
            self.opened(*args[:3])
        elif event in ("os.listdir", "os.scandir"):
            self.listing(args[0] if args and args[0] is not None else ".")
        elif event in _CHANGES:
            for index, fd_index in _CHANGES[event]:
                dir_fd = args[fd_index] if fd_index is not None and fd_index < len(args) \
                    else None
                place = self.place(args[index], dir_fd if isinstance(dir_fd, int) and
                                   dir_fd >= 0 else None)
                if place is None or not self.ours(place, writes=True):
                    self.refuse(f"{event} {place or args[index]!r}")
        else:
            self.refuse(f"the audit event {event}")

    def opened(self, path: Any, mode: str | None, flags: int | None) -> None:
        writes = (mode is not None and any(c in mode for c in "wax+")) or \
            (mode is None and flags is not None and bool(flags & _WRITE_FLAGS))
        if isinstance(path, int):
            return
        by_folder = mode is None and self.dir_fd is not None
        place = self.place(path, self.dir_fd if mode is None else None)
        if place is None or self.ours(place, writes, by_folder):
            return
        if writes:
            self.refuse(f"a write to {place}")
        else:
            self.add(place, True, OPEN)


_RECORDER = _Recorder()


def _hook(event: str, args: tuple[Any, ...], harmless: frozenset[str] = _HARMLESS,
          recorder: _Recorder = _RECORDER) -> None:
    """The audit hook: called for every event of the process (thousands while modules are
    imported), so the harmless ones return before anything else is looked up."""
    if event not in harmless and recorder.active:
        recorder.hook(event, args)
#: agentspec's own modules: those a run imports are stamped as modules; the others (each
#: looked at by the validator cache's fingerprint) change nothing a run prints, while the
#: folders are still listed (a new kind module is found by listing its folder). One opened
#: is stamped as any file: its source may be read (a spec's `python:` reference to it)
_PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "")


def _descriptor_path(fd: int) -> str | None:
    """The path `fd` is open on; None when it has none (a removed file or folder, which Linux
    names `<path> (deleted)`: what it read no path holds now)."""
    try:
        found = _REAL_READLINK(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    return found if os.path.isabs(found) and not found.endswith(" (deleted)") else None


def _wrapped(real: Callable[..., Any], follow_default: bool,
             noting: Callable[[Any, int | None, bool], None]) -> Callable[..., Any]:
    def wrapper(path: Any, *args: Any, **kwargs: Any) -> Any:
        if _RECORDER.active and not _RECORDER.busy:
            dir_fd = kwargs.get("dir_fd")
            noting(path, dir_fd, bool(kwargs.get("follow_symlinks", follow_default)))
        return real(path, *args, **kwargs)
    wrapper.__wrapped__ = real  # type: ignore[attr-defined]
    wrapper.__name__ = real.__name__
    return wrapper


def _open(real: Callable[..., int]) -> Callable[..., int]:
    def wrapper(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        _RECORDER.dir_fd = dir_fd
        try:
            return real(path, flags, mode, dir_fd=dir_fd)
        finally:
            _RECORDER.dir_fd = None
    wrapper.__wrapped__ = real  # type: ignore[attr-defined]
    return wrapper


_INSTALLED: list[bool] = []
#: what `os` says its functions support, as sets of the functions
_SUPPORTS = ("supports_dir_fd", "supports_fd", "supports_follow_symlinks",
             "supports_effective_ids")


def _replace(name: str, wrapper: Callable[..., Any]) -> None:
    """`os.<name>` becomes `wrapper`, supporting what the function it wraps supports."""
    real = getattr(os, name)
    for supports in _SUPPORTS:
        functions = getattr(os, supports, None)
        if isinstance(functions, set) and real in functions:
            functions.add(wrapper)
    setattr(os, name, wrapper)


def _watch_warnings() -> None:
    """A warning shown (on standard error, by `warnings`) makes the run one not to keep: a
    replay would print only what the command printed."""
    import warnings

    shown = warnings.showwarning

    def showing(*args: Any, **kwargs: Any) -> None:
        if _RECORDER.active:
            _RECORDER.refuse("it printed a warning")
        shown(*args, **kwargs)

    warnings.showwarning = showing


def record(caches: Iterable[str], entries: tuple[str, ...] = ()) -> None:
    """Start recording what this process reads; writes under `caches` (folders), and reads
    and listings through a cache folder's descriptor of the entries there (names ending with
    one of `entries`), are not counted. Audit hooks cannot be removed: the hook is added once
    and stays idle after."""
    if not _INSTALLED:
        if not sys.platform.startswith("linux"):
            return  # descriptors are named through /proc: elsewhere nothing is replayed
        sys.addaudithook(_hook)
        for name, follow in (("stat", True), ("lstat", False), ("readlink", False),
                             ("access", True)):
            _replace(name, _wrapped(getattr(os, name), follow, _RECORDER.note))
        _replace("open", _open(os.open))
        _watch_warnings()
        _INSTALLED.append(True)
    _RECORDER.cwd = os.getcwd()
    _RECORDER.started_ns = time.time_ns()
    _RECORDER.caches = tuple(os.path.join(p, "") for p in caches)
    _RECORDER.entries = entries
    _RECORDER.paths.clear()
    _RECORDER.folders.clear()
    _RECORDER.changes.clear()
    _RECORDER.refused = None
    _RECORDER.active = True


def recorded() -> tuple[Reads | None, str | None]:
    """Stop recording: what the run read, stamped now, or None and why it cannot be
    replayed."""
    if not _INSTALLED or not _RECORDER.active:
        return None, "nothing was recorded"
    _RECORDER.active = False
    if _RECORDER.refused is not None:
        return None, _RECORDER.refused
    paths: dict[tuple[str, bool, str], Stamp] = {}
    for (place, follow, how), early in _RECORDER.paths.items():
        found = stamp(place, follow, how)
        if found != early or (how == OPEN and found[0] == stat.S_IFREG and
                              _change_time(place) != _RECORDER.changes.get(place)):
            return None, f"{place} changed while it was read"
        if how == OPEN and found[0] not in (stat.S_IFREG, stat.S_IFDIR, "absent"):
            return None, f"{place} is neither a regular file nor a folder"
        if found[0] == "unread":
            return None, f"{place} could not be digested"
        paths[(place, follow, how)] = found
    for (folder, left_out), early_listing in _RECORDER.folders.items():
        if folder_stamp(folder, left_out) != early_listing:
            return None, f"{folder} changed while it was listed"
    settled = _RECORDER.started_ns - SETTLE_NS
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str):
            place = os.path.join(_RECORDER.cwd, file)
            found = paths[(place, True, MODULE)] = stamp(place, True, MODULE)
            if changed_ns(found) >= settled:
                return None, f"the module {place} changed just before or during the run"
    folders = dict(_RECORDER.folders)
    for entry in sys.path:  # where a new module could shadow one this run imported
        place = os.path.join(_RECORDER.cwd, entry)
        folders.setdefault((place, ()), folder_stamp(place))
    return Reads(dict(sorted(paths.items())), dict(sorted(folders.items()))), None


def _change_time(place: str) -> int | None:
    try:
        return _REAL_STAT(place).st_ctime_ns
    except (OSError, ValueError):
        return None
