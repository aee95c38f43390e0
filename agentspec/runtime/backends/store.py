"""The `store` backend: files in a database table, so they outlive the session that wrote
them (deepagents' StoreBackend, on agentspec's own table).

One table, `agentspec_files (namespace, path, content, modified)`, created when missing, in
SQLite (the standard library's driver) or PostgreSQL (psycopg 3, the `postgres` extra). A
backend sees one namespace: its app, its name and, for `scope: user`, the user; every query
names it, so no path a model writes reaches another namespace. Directories are implicit, as
in the state backend: one exists while a file lies under it.

Every change runs in a write transaction that holds the namespace (`store_table.py`), so
two writers of one file both land, one after the other, and an `edit_file` never overwrites
a change it did not read. Whatever the database or its driver raises is a `BackendError`
(a tool error the model sees) that names the database without its password.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from agentspec.contract.backends import StoreDef
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
    relative_to,
    require_pattern,
)
from agentspec.runtime.backends.store_table import (
    STORE_OVERRIDE,
    TABLE,
    Change,
    FileStore,
    close_files,
    open_files,
)
from agentspec.runtime.backends.transfer import Transfers
from agentspec.runtime.env import MissingEnvironmentVariable, expand

__all__ = ["MAX_FILE_BYTES", "STORE_OVERRIDE", "TABLE", "FileStore", "StoreBackend",
           "close_files", "database_url", "namespace", "open_files", "store_backend"]

MAX_FILE_BYTES = 10 * 1024 * 1024
"""A file larger than this (UTF-8) is not written: a tool error says so."""


def namespace(app: str, backend: str, user: str | None) -> str:
    """The namespace of backend `backend` of app `app`, for `user` (None: the app's). Each
    part is percent-encoded, so no two (app, backend, user) share one."""
    parts = [f"app:{quote(app, safe='')}", f"backend:{quote(backend, safe='')}"]
    if user is not None:
        parts.append(f"user:{quote(user, safe='')}")
    return "/".join(parts)


def _under(path: str) -> str:
    """The prefix every path below directory `path` starts with."""
    return path.rstrip("/") + "/"


def _clean(path: str) -> str:
    """`normalize`d, and a BackendError naming the path when no database can keep it (a lone
    surrogate): the model's to fix, not the database's."""
    clean = normalize(path)
    if not is_utf8(clean):
        raise BackendError(f"The path {path!r} is not valid Unicode text; use another name.")
    return clean


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _text(path: str, content: str) -> str:
    """`content` when the database can keep it, else the BackendError saying why."""
    content = str(content)
    if "\x00" in content:
        raise BackendError(f"The content for {path} holds a NUL character, which a store "
                           "backend cannot keep; write text without it.")
    try:
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError as error:
        raise BackendError(f"The content for {path} is not valid Unicode text (character "
                           f"{error.start}); write text only.") from None
    if size > MAX_FILE_BYTES:
        raise BackendError(f"The content for {path} is {size:,} bytes; a store backend keeps "
                           f"files of at most {MAX_FILE_BYTES:,} bytes. Split it into "
                           "smaller files.")
    return content


class StoreBackend(Transfers):
    """The files of namespace `space` of the database `opened()` gives, opened at each
    operation (once per process: `open_files`), so a database that cannot be opened is
    that operation's error."""

    def __init__(self, opened: Callable[[], FileStore], space: str) -> None:
        self.opened, self.space = opened, space

    @property
    def files(self) -> FileStore:
        return self.opened()

    def _below(self, path: str, columns: str, extra: str = "",
               params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """`columns` of the files below directory `path` (every file for `/`), by path."""
        prefix = _under(path)
        return self.files.rows(
            f"SELECT {columns} FROM {TABLE} WHERE namespace = ? AND substr(path, 1, ?) = ?"
            f"{extra} ORDER BY path", (self.space, len(prefix), prefix, *params))

    def _content(self, path: str) -> str | None:
        rows = self.files.rows(f"SELECT content FROM {TABLE} WHERE namespace = ? AND "
                               "path = ?", (self.space, path))
        return str(rows[0][0]) if rows else None

    def ls(self, path: str) -> list[FileInfo]:
        path = _clean(path)
        size = self.files.size()
        mine = self.files.rows(f"SELECT {size} FROM {TABLE} WHERE namespace = ? AND path = ?",
                               (self.space, path))
        if mine:
            return [FileInfo(path, False, int(mine[0][0]))]
        rows = self._below(path, f"path, {size}")
        if not rows and path != "/":
            raise BackendError(f"No such file or directory: {path}")
        found: dict[str, FileInfo] = {}
        for name, bytes_ in rows:
            head, sep, _ = str(name)[len(_under(path)):].partition("/")
            child = _under(path) + head
            found[child] = FileInfo(child, True, 0) if sep else \
                FileInfo(child, False, int(bytes_))
        return sorted(found.values(), key=lambda f: f.path)

    def read(self, path: str) -> str:
        path = _clean(path)
        content = self._content(path)
        if content is None:
            if path == "/" or self._below(path, "path"):
                raise BackendError(f"{path} is a directory; use ls to list it.")
            raise BackendError(f"File not found: {path}")
        return content

    def write(self, path: str, content: str) -> None:
        path = _clean(path)
        if path == "/":
            raise BackendError("Cannot write to `/`; give a file path such as `/notes.md`.")
        text = _text(path, content)
        with self.files.changing(self.space) as change:
            self._writable(change, path)
            change.run(f"INSERT INTO {TABLE} (namespace, path, content, modified) VALUES "
                       "(?, ?, ?, ?) ON CONFLICT (namespace, path) DO UPDATE SET "
                       "content = excluded.content, modified = excluded.modified",
                       (self.space, path, text, _now()))

    def _writable(self, change: Change, path: str) -> None:
        """Within the write's transaction: `path` is no directory and has no file above."""
        prefix = _under(path)
        if change.one(f"SELECT path FROM {TABLE} WHERE namespace = ? AND "
                      "substr(path, 1, ?) = ? LIMIT 1", (self.space, len(prefix), prefix)):
            raise BackendError(f"{path} is a directory; choose a file path.")
        parent = path
        while (parent := parent.rsplit("/", 1)[0] or "/") != "/":
            if change.one(f"SELECT path FROM {TABLE} WHERE namespace = ? AND path = ?",
                          (self.space, parent)):
                raise BackendError(f"{parent} is a file, so it cannot contain {path}.")

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> int:
        path = _clean(path)
        with self.files.changing(self.space) as change:
            row = change.one(f"SELECT content FROM {TABLE} WHERE namespace = ? AND path = ?",
                             (self.space, path))
            if row is None:
                raise BackendError(f"File not found: {path}")
            text, count = apply_edit(str(row[0]), path, old, new, replace_all)
            change.run(f"UPDATE {TABLE} SET content = ?, modified = ? WHERE namespace = ? "
                       "AND path = ?", (_text(path, text), _now(), self.space, path))
        return count

    def glob(self, pattern: str, path: str = "/") -> list[str]:
        path = _clean(path)
        budget = GlobBudget()
        out = []
        for (name,) in self._below(path, "path"):
            rel = relative_to(str(name), path)
            if rel and glob_match(pattern, rel, budget):
                out.append(str(name))
        return out

    def grep(self, pattern: str, path: str = "/", glob: str | None = None) -> list[GrepMatch]:
        require_pattern(pattern)
        path = _clean(path)
        out: list[GrepMatch] = []
        if "\x00" in pattern or not is_utf8(pattern):  # no file here holds one (and the
            return out  # databases take neither)
        budget = GlobBudget()
        for name, content in self._below(path, "path, content",
                                         f" AND {self.files.contains()}", (pattern,)):
            if not grep_glob_match(glob, str(name), budget):
                continue
            for number, line in matching_lines(str(content), pattern):
                out.append(GrepMatch(str(name), number, line))
                if len(out) >= GREP_LIMIT:
                    return out
        return out



def database_url(definition: StoreDef) -> str:
    """The database a store backend's definition names, its `${env.X}` read now."""
    if definition.sqlite is not None:
        return f"sqlite:///{definition.sqlite}"
    if definition.url is None:
        raise BackendError("This store backend names no database; give it `url:`.")
    try:
        return expand(definition.url)
    except MissingEnvironmentVariable as error:
        raise BackendError(f"The store backend's database cannot be opened: {error}") from None


def store_backend(name: str, definition: StoreDef, user: str | None) -> StoreBackend:
    """Store backend `name` as user `user` (None: a call that names no user) sees it."""
    if definition.scope == "user" and user is None:
        raise BackendError(f"Backend `{name}` keeps each user's files apart (`scope: user`), "
                           "and this call names no user.")
    return StoreBackend(lambda: open_files(database_url(definition)), namespace(
        definition.app, name, user if definition.scope == "user" else None))
