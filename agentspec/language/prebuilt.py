"""Pydantic validators kept between processes: building the spec's validator costs about
50 ms of Python per process (the scenario file's about 40), loading the built one about 3.

The cache is a user cache directory (`AGENTSPEC_CACHE_DIR`, else `$XDG_CACHE_HOME/agentspec`,
else `~/.cache/agentspec`; `AGENTSPEC_CACHE_DIR=` turns it off). An entry is used only when
it was written for the same Python, pydantic, pydantic-core and agentspec sources (the size,
modification and change times and inode of every module of the package: Python judges a `.pyc`
by the first two, which can be put back, and runs the source where there is no `.pyc`), and
only from a directory and a file this user owns that nobody else can write, since loading a
pickle runs what it names. Anything amiss (missing, foreign, corrupt, unwritable)
means the validator is built as usual; the cache never changes what is validated."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import pydantic
import pydantic_core
from pydantic import TypeAdapter
from pydantic_core import SchemaValidator

from agentspec.usercache import cache_directory, open_private, read_entry, write_entry

if TYPE_CHECKING:
    from pydantic.plugin._schema_validator import PluggableSchemaValidator

    Validator: TypeAlias = SchemaValidator | PluggableSchemaValidator

__all__ = ["Validator", "cache_directory", "validator", "without_plugins"]

PACKAGE = Path(__file__).resolve().parent.parent
_SUFFIX = ".validator"


_KEPT: dict[str, Validator] = {}


def validator(name: str, kind: Any) -> Validator:
    """The built validator of `kind` (a model class or an annotated type): from the cache
    when an entry for these sources is there, else built (and stored). `name` names the
    entry (letters and underscores); each `kind` has its own name."""
    kept = _KEPT.get(name)
    if kept is None:
        kept = _KEPT[name] = _cached(name, kind)
    return kept


def _cached(name: str, kind: Any) -> Validator:
    directory = cache_directory()
    if directory is None or _plugins_on():
        return _build(kind)
    folder = open_private(directory)
    if folder is None:
        return _build(kind)
    try:  # by the descriptor from here on: the folder judged is the folder read and written
        fingerprint = _fingerprint()
        if fingerprint is None:
            return _build(kind)
        entry = f"{name}-{fingerprint}{_SUFFIX}"
        loaded = _load(folder, entry)
        if loaded is not None:
            return loaded
        built = _build(kind)
        if isinstance(built, SchemaValidator):
            _store(folder, entry, built)
        return built
    finally:
        os.close(folder)


#: the values of PYDANTIC_DISABLE_PLUGINS with which pydantic looks for no plugin at all
_PLUGINS_OFF = ("__all__", "1", "true")


def _plugins_on() -> bool:
    """Whether pydantic's plugins (installed distributions' `pydantic` entry points) see
    validations in this process: they wrap each validator they are given, so a cached one,
    built without them, would hide the spec's validation from them."""
    if os.environ.get("PYDANTIC_DISABLE_PLUGINS") in _PLUGINS_OFF:
        return False  # pydantic's own test, without importing its loader
    from pydantic.plugin._loader import get_plugins
    return bool(tuple(get_plugins()))


def without_plugins() -> None:
    """Turns pydantic's plugins off for this process unless the environment already says
    which to use (`validate` runs no user code to be observed). Finding plugins reads the entry
    points of every installed distribution, and merely importing pydantic's plugin loader
    imports `importlib.metadata` (about 25 ms): when they are off, the loader is a module whose
    `get_plugins` answers none, as pydantic's own does then (`get_plugins` is the one name
    pydantic imports from it)."""
    if os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", _PLUGINS_OFF[0]) not in _PLUGINS_OFF:
        return
    if "pydantic.plugin._loader" not in sys.modules:
        loader = types.ModuleType("pydantic.plugin._loader")
        loader.get_plugins = tuple  # type: ignore[attr-defined]
        sys.modules["pydantic.plugin._loader"] = loader


def _build(kind: Any) -> Validator:
    adapter: TypeAdapter[Any] = TypeAdapter(kind)
    adapter.rebuild(force=True)  # the models defer their build to first use
    return adapter.validator


@functools.cache
def _fingerprint() -> str | None:
    """The install (where the package is: each virtual environment keeps its own entries),
    then what its built validators depend on; None when the package's modules cannot be seen
    (a zip or frozen application, a module removed while they are read), as an entry of
    another version could not be told apart then."""
    place = hashlib.blake2b(str(PACKAGE).encode(), digest_size=6).hexdigest()
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{sys.version}|{pydantic.VERSION}|{pydantic_core.__version__}|"
                  f"{pickle.DEFAULT_PROTOCOL}".encode())
    folders, modules, seen = [str(PACKAGE)], 0, set()
    while folders:
        root = folders.pop()
        try:
            with os.scandir(root) as listed:
                entries = sorted(listed, key=lambda e: e.name)
            for entry in entries:
                # links followed (a linked subpackage holds modules), each folder walked once
                if entry.is_dir() and entry.name != "__pycache__":
                    info = entry.stat()
                    if (info.st_dev, info.st_ino) not in seen:
                        seen.add((info.st_dev, info.st_ino))
                        folders.append(entry.path)
                elif entry.name.endswith((".py", ".pyc")):  # a `.pyc`: no sources installed
                    info = entry.stat()  # no path walked again, save through a link
                    modules += 1
                    # size and time can be put back, not the change time nor the inode (of
                    # the file a link leads to)
                    digest.update(f"{entry.path}|{info.st_size}|{info.st_mtime_ns}|"
                                  f"{info.st_ctime_ns}|{info.st_ino}|{info.st_dev}\n".encode())
        except OSError:
            return None
    return f"{place}-{digest.hexdigest()}" if modules else None


def _load(folder: int, entry: str) -> SchemaValidator | None:
    data = read_entry(folder, entry)
    if data is None:
        return None
    try:
        loaded = pickle.loads(data)
    except Exception:  # noqa: BLE001 - a damaged entry is rebuilt, whatever it raises
        return None
    return loaded if isinstance(loaded, SchemaValidator) else None


def _store(folder: int, entry: str, built: SchemaValidator) -> None:
    """Write `entry` whole or not at all, and remove the entries of the same name and install
    written for its former sources."""
    try:
        data = pickle.dumps(built)
    except Exception:  # noqa: BLE001 - a validator that cannot be pickled is not kept
        return
    prefix = entry.rsplit("-", 1)[0] + "-"
    if not write_entry(folder, entry, data):
        return
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for old in names:
        if old != entry and old.startswith(prefix) and old.endswith(_SUFFIX) and \
                old[len(prefix):].count("-") == 0:
            with contextlib.suppress(OSError):
                os.unlink(old, dir_fd=folder)
