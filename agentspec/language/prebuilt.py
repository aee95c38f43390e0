"""Pydantic validators kept between processes: building the spec's validator costs about
50 ms of Python per process (the scenario file's about 40), loading the built one about 3.

The cache is a user cache directory (`AGENTSPEC_CACHE_DIR`, else `$XDG_CACHE_HOME/agentspec`,
else `~/.cache/agentspec`; `AGENTSPEC_CACHE_DIR=` turns it off). An entry is used only when
it was written for the same Python, pydantic, pydantic-core and agentspec sources (the size
and modification time of every module of the package, as Python itself judges its `.pyc`
files), and only from a directory and a file this user owns that nobody else can write, since
loading a pickle runs what it names. Anything amiss (missing, foreign, corrupt, unwritable)
means the validator is built as usual; the cache never changes what is validated."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

import pydantic
import pydantic_core
from pydantic import TypeAdapter
from pydantic_core import SchemaValidator

__all__ = ["cache_directory", "validator"]

PACKAGE = Path(__file__).resolve().parent.parent
_SUFFIX = ".validator"
#: entries kept per name: one per install of agentspec (or edit of its sources) in use
KEEP = 4


_KEPT: dict[str, SchemaValidator] = {}


def validator(name: str, kind: Any) -> SchemaValidator:
    """The built validator of `kind` (a model class or an annotated type): from the cache
    when an entry for these sources is there, else built (and stored). `name` names the
    entry (letters and underscores); each `kind` has its own name."""
    kept = _KEPT.get(name)
    if kept is None:
        kept = _KEPT[name] = _cached(name, kind)
    return kept


def _cached(name: str, kind: Any) -> SchemaValidator:
    directory = cache_directory()
    if directory is None:
        return _build(kind)
    entry = directory / f"{name}-{_fingerprint()}{_SUFFIX}"
    loaded = _load(entry)
    if loaded is not None:
        return loaded
    built = _build(kind)
    _store(directory, entry, built)
    return built


def _build(kind: Any) -> SchemaValidator:
    adapter: TypeAdapter[Any] = TypeAdapter(kind)
    adapter.rebuild(force=True)  # the models defer their build to first use
    built = adapter.validator
    if not isinstance(built, SchemaValidator):  # a pydantic plugin wraps it: not ours to keep
        raise TypeError(f"expected a SchemaValidator, got {type(built).__name__}")
    return built


def cache_directory() -> Path | None:
    """The cache directory, made when missing, or None when it is off or not safe to use."""
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
        return directory if _private(os.lstat(directory), stat.S_ISDIR) else None
    except (OSError, ValueError):
        return None


def _private(info: os.stat_result, kind: Any) -> bool:
    """Of the right kind (not a link), this user's, and writable by nobody else."""
    return bool(kind(info.st_mode)) and info.st_uid == os.getuid() and \
        not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


@functools.cache
def _fingerprint() -> str:
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{sys.version}|{pydantic.VERSION}|{pydantic_core.__version__}|"
                  f"{pickle.DEFAULT_PROTOCOL}".encode())
    for root, folders, files in os.walk(PACKAGE):
        folders[:] = sorted(f for f in folders if f != "__pycache__")
        for file in sorted(files):
            if file.endswith(".py"):
                info = os.stat(os.path.join(root, file))
                digest.update(f"{root}/{file}|{info.st_size}|{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _load(entry: Path) -> SchemaValidator | None:
    try:
        descriptor = os.open(entry, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        with os.fdopen(descriptor, "rb") as file:
            if not _private(os.fstat(file.fileno()), stat.S_ISREG):
                return None
            loaded = pickle.loads(file.read())
    except Exception:  # noqa: BLE001 - a damaged entry is rebuilt, whatever it raises
        return None
    return loaded if isinstance(loaded, SchemaValidator) else None


def _store(directory: Path, entry: Path, built: SchemaValidator) -> None:
    """Write `entry` whole or not at all, and keep only the newest few entries of its name
    (several installs of agentspec may share the directory; each keeps its own)."""
    try:
        data = pickle.dumps(built)
    except Exception:  # noqa: BLE001 - a validator that cannot be pickled is not kept
        return
    try:
        descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=".", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        os.replace(temporary, entry)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return
    _prune(directory, entry.name.rsplit("-", 1)[0])


def _prune(directory: Path, name: str) -> None:
    entries = []
    for found in directory.glob(f"{name}-*{_SUFFIX}"):
        if found.name[len(name) + 1:].count("-") == 0:  # not the entry of a longer name
            with contextlib.suppress(OSError):
                entries.append((found.stat().st_mtime_ns, found))
    for _, old in sorted(entries, reverse=True)[KEEP:]:
        with contextlib.suppress(OSError):
            old.unlink()
