"""The `agentspec_files` table a `store` backend keeps its files in: one database opened once
per process (`open_files`), on one connection the process's threads share.

SQLite through the standard library's driver, PostgreSQL through psycopg 3 (the `postgres`
extra). Every change runs in a write transaction that holds a namespace: `BEGIN IMMEDIATE`
on SQLite (other writers wait, up to the busy timeout), a transaction-scoped advisory lock
on the namespace on PostgreSQL. Whatever the database or its driver raises is a
`BackendError` that names the database without its password.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from agentspec.contract.extras import install
from agentspec.contract.urls import redacted, scrubbed
from agentspec.runtime.backends import BackendError

__all__ = ["STORE_OVERRIDE", "TABLE", "Change", "FileStore", "close_files", "open_files"]

TABLE = "agentspec_files"
#: overrides every store backend's database where the app runs (a test, a staging run)
STORE_OVERRIDE = "AGENTSPEC_FILES_STORE"
_CREATE = (f"CREATE TABLE IF NOT EXISTS {TABLE} (namespace TEXT NOT NULL, path TEXT NOT NULL, "
           "content TEXT NOT NULL, modified TEXT NOT NULL, PRIMARY KEY (namespace, path))")


def _database(url: str) -> str:
    """The URL psycopg takes for a PostgreSQL URL (SQLAlchemy's `+psycopg` dropped)."""
    for prefix in ("postgresql+psycopg://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql://" + url.removeprefix(prefix)
    return url


class FileStore:
    """The `agentspec_files` table of one database, on one connection that the threads of
    the process share (under a lock)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.postgres = not url.startswith("sqlite:///")
        if self.postgres and not _database(url).startswith("postgresql://"):
            raise BackendError(f"{redacted(url)} is not a database a store backend can use: "
                               "give `sqlite:///PATH` or `postgresql://...`")
        self._lock = threading.Lock()
        self._connection = self._connect()
        with self.changing(None) as change:
            change.run(_CREATE)

    # connections -----------------------------------------------------------------------

    def _connect(self) -> Any:
        if self.postgres:
            try:
                import psycopg
            except ImportError:
                raise BackendError("a store backend on PostgreSQL needs psycopg: "
                                   f"{install('postgres')}") from None
            # a server that does not answer is an error after a while, not a tool call that
            # hangs for the operating system's TCP timeout (the URL may set its own)
            try:
                conninfo = _database(self.url) if "connect_timeout" in self.url else \
                    psycopg.conninfo.make_conninfo(_database(self.url), connect_timeout=10)
                return psycopg.connect(conninfo, autocommit=True)
            except psycopg.Error as error:
                raise self._failed("connect to", error) from None
        path = Path(self.url.removeprefix("sqlite:///"))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(path, timeout=30, isolation_level=None,
                                         check_same_thread=False)
            connection.execute("PRAGMA busy_timeout=30000")
        except (OSError, sqlite3.Error) as error:
            raise self._failed("open", error) from None
        return connection

    def _failed(self, doing: str, error: BaseException) -> BackendError:
        text = scrubbed(f"{type(error).__name__}: {error}", self.url, _database(self.url))
        return BackendError(f"Could not {doing} the files' database {redacted(self.url)}: "
                            f"{text}")

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    def _sql(self, statement: str) -> str:
        return statement.replace("?", "%s") if self.postgres else statement

    @contextmanager
    def _cursor(self, first: str, params: Sequence[Any] = ()) -> Iterator[Any]:
        """A cursor of the shared connection, its first statement `first` run; what the
        driver raises comes out a BackendError."""
        with self._lock:
            try:
                cursor = self._started(first, params)
                try:
                    yield cursor
                finally:
                    cursor.close()
            except BackendError:
                raise
            except Exception as error:  # noqa: BLE001 - sqlite3's and psycopg's errors alike
                raise self._failed("use", error) from None

    def _started(self, first: str, params: Sequence[Any]) -> Any:
        """A cursor that ran `first`. A PostgreSQL connection the server dropped (a restart,
        a failover, an idle timeout) is opened again, and `first` run once more there: it
        did nothing on the dead one."""
        for retry in (False, True):
            if self.postgres and self._connection.closed:
                self._connection = self._connect()
            cursor = self._connection.cursor()
            try:
                cursor.execute(self._sql(first), tuple(params))
                return cursor
            except Exception:
                cursor.close()
                if retry or not (self.postgres and self._connection.closed):
                    raise
        raise AssertionError("unreachable")

    @contextmanager
    def changing(self, space: str | None) -> Iterator[Change]:
        """A write transaction; on namespace `space`, no other writer changes it meanwhile
        (None: the table itself, being created)."""
        with self._cursor("BEGIN" if self.postgres else "BEGIN IMMEDIATE") as cursor:
            try:
                if self.postgres:
                    cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                                   (f"{TABLE}:{space}",))
                yield Change(self, cursor)
                # a COMMIT that fails (SQLite busy past its timeout while another
                # connection reads) leaves the transaction open: rolled back below, or the
                # shared connection would keep the write lock and fail every later call
                cursor.execute("COMMIT")
            except BaseException:
                with suppress(Exception):  # a connection that died has nothing to undo
                    cursor.execute("ROLLBACK")
                raise

    def rows(self, statement: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """The rows a read-only query returns."""
        with self._cursor(statement, params) as cursor:
            return [tuple(row) for row in cursor.fetchall()]

    def size(self) -> str:
        """SQL for a content's size in UTF-8 bytes."""
        return "octet_length(content)" if self.postgres else "length(CAST(content AS BLOB))"

    def contains(self) -> str:
        """SQL: the content holds the parameter's text."""
        return "strpos(content, ?) > 0" if self.postgres else "instr(content, ?) > 0"


class Change:
    """The statements of one write transaction."""

    def __init__(self, store: FileStore, cursor: Any) -> None:
        self.store, self.cursor = store, cursor

    def run(self, statement: str, params: Sequence[Any] = ()) -> None:
        self.cursor.execute(self.store._sql(statement), tuple(params))

    def one(self, statement: str, params: Sequence[Any]) -> tuple[Any, ...] | None:
        self.run(statement, params)
        row = self.cursor.fetchone()
        return tuple(row) if row is not None else None


_STORES: dict[str, FileStore] = {}
_STORES_LOCK = threading.Lock()


def open_files(url: str) -> FileStore:
    """The files' table in database `url` (`AGENTSPEC_FILES_STORE` instead, when set),
    opened once per process."""
    url = os.environ.get(STORE_OVERRIDE) or url
    with _STORES_LOCK:
        if url not in _STORES:
            _STORES[url] = FileStore(url)
        return _STORES[url]


def close_files(url: str) -> None:
    """Closes database `url` if this process opened it (`agentspec test` gives each
    scenario one of its own)."""
    with _STORES_LOCK:
        store = _STORES.pop(url, None)
    if store is not None:
        store.close()
