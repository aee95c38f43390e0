"""`sqlite:///path` and `postgresql://...`: jobs in one SQL table, schema migrated by the store.

SQLite (the standard library's driver): WAL journal, a busy timeout, and `BEGIN IMMEDIATE`
around every change, so several worker processes on one machine claim jobs one at a time.
PostgreSQL (psycopg 3, the `postgres` extra): a claim selects the oldest runnable
row `FOR UPDATE SKIP LOCKED`, so workers on many machines never wait on, or take, the same row.

The schema is versioned in `agentspec_schema`; `MIGRATIONS` are applied in order, once, under
the same lock as changes, so two processes opening a new store do not race; a store whose
schema is newer than this code is refused, naming both versions. A row that cannot be read
back as a job is set aside as FAILED the first time a query meets it (`rows.py`).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentspec.contract.extras import install
from agentspec.contract.urls import redacted, scrubbed, unencoded_password
from agentspec.runtime.jobs import (
    Clock,
    Job,
    JobRequest,
    StoreError,
    encode,
    new_job,
    now,
)
from agentspec.runtime.jobs.rows import (
    COLUMNS,
    JSON_COLUMNS,
    UnreadableRow,
    job_from_row,
    row_from_job,
)

__all__ = ["MIGRATIONS", "SqlStore"]

log = logging.getLogger("agentspec.jobs")

#: schema versions, in order; never edit one that has shipped, add the next
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    ("""CREATE TABLE agentspec_jobs (
            id TEXT PRIMARY KEY, agent TEXT NOT NULL, input TEXT NOT NULL,
            app_name TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
            invocation_id TEXT NOT NULL, function_call_id TEXT NOT NULL, tool TEXT NOT NULL,
            status TEXT NOT NULL, attempts INTEGER NOT NULL, max_attempts INTEGER NOT NULL,
            lease_owner TEXT, lease_expires_at DOUBLE PRECISION,
            available_at DOUBLE PRECISION NOT NULL, created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL, started_at DOUBLE PRECISION,
            finished_at DOUBLE PRECISION, result TEXT, error TEXT,
            delivered_at DOUBLE PRECISION)""",
     "CREATE INDEX agentspec_jobs_runnable ON agentspec_jobs (status, available_at)",
     "CREATE INDEX agentspec_jobs_session ON agentspec_jobs (app_name, user_id, session_id)"),
    ("ALTER TABLE agentspec_jobs ADD COLUMN output_key TEXT NOT NULL DEFAULT ''",),
    ("ALTER TABLE agentspec_jobs ADD COLUMN on_done TEXT NOT NULL DEFAULT 'wait'",
     "ALTER TABLE agentspec_jobs ADD COLUMN resumed_at DOUBLE PRECISION"),
    ("ALTER TABLE agentspec_jobs ADD COLUMN state TEXT NOT NULL DEFAULT '{}'",),
    ("ALTER TABLE agentspec_jobs ADD COLUMN usage TEXT NOT NULL DEFAULT '{}'",),
    ("ALTER TABLE agentspec_jobs ADD COLUMN last_event TEXT",
     "ALTER TABLE agentspec_jobs ADD COLUMN last_event_at DOUBLE PRECISION"),
)

_ACTIVE = "status IN ('QUEUED', 'RUNNING')"
#: a request matching one of these is answered by it (a DONE one with its stored result)
_ANSWERING = "status IN ('QUEUED', 'RUNNING', 'DONE')"
#: finished, its parent to be resumed, and no live resume lease on it
_TO_RESUME = ("status IN ('DONE', 'FAILED') AND on_done = 'resume' AND resumed_at IS NULL "
              "AND (lease_owner IS NULL OR lease_expires_at < ?)")
_RESUMING = ("status IN ('DONE', 'FAILED') AND on_done = 'resume' AND resumed_at IS NULL "
             "AND lease_owner = ?")
_RUNNABLE = ("((status = 'QUEUED' AND available_at <= ?) OR "
             "(status = 'RUNNING' AND lease_expires_at < ? AND attempts < max_attempts))")
#: a job whose workers kept dying with it: no attempt left, so it fails instead of killing more
_ABANDONED = ("status = 'RUNNING' AND lease_expires_at < ? AND attempts >= max_attempts")
ABANDONED_ERROR = "its worker stopped (the lease expired) on every attempt"


class SqlStore:
    def __init__(self, url: str, clock: Clock = now) -> None:
        self.url = url
        self._now = clock
        self.postgres = not url.startswith("sqlite:///")
        self._lock = threading.Lock()  # one connection, shared by the threads of a worker
        self._connection = self._connect()
        self._migrate()

    # connections and transactions -----------------------------------------------------------

    def _connect(self) -> Any:
        if self.postgres:
            try:
                import psycopg
            except ImportError as error:
                raise StoreError("a postgresql:// job store needs psycopg: "
                                 f"{install('postgres')}") from error
            try:
                return psycopg.connect(self.url, autocommit=True)
            except psycopg.Error as error:
                # libpq quotes a URL it cannot read, or the part of the password it took for a
                # host; the cause is not chained, so no traceback shows the text unscrubbed
                raise StoreError(f"cannot connect to the job store {redacted(self.url)}: "
                                 f"{scrubbed(str(error), self.url)}{_encoding_hint(self.url)}"
                                 ) from None
        path = Path(self.url.removeprefix("sqlite:///"))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(path, timeout=30, isolation_level=None,
                                         check_same_thread=False)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA busy_timeout=30000")
        except (OSError, sqlite3.Error) as error:
            raise StoreError(f"cannot open the job store {path}: {error}") from error
        return connection

    def _where(self) -> str:
        """The store, for a message: its file, or its server and database (no password)."""
        if not self.postgres:
            return self.url.removeprefix("sqlite:///")
        info = self._connection.info
        return f"postgresql://{info.host}:{info.port}/{info.dbname}"

    def _sql(self, statement: str) -> str:
        return statement.replace("?", "%s") if self.postgres else statement

    def _alive(self) -> None:
        """A PostgreSQL connection that was closed (a restart, a failover, an idle timeout)
        is opened again before it is used."""
        if self.postgres and self._connection.closed:
            self._connection = self._connect()

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        """A write transaction: BEGIN IMMEDIATE on SQLite (other writers wait), a plain
        transaction on PostgreSQL (rows are locked as they are selected for update)."""
        with self._lock:
            self._alive()
            cursor = self._connection.cursor()
            cursor.execute("BEGIN" if self.postgres else "BEGIN IMMEDIATE")
            try:
                yield cursor
            except BaseException:
                if not (self.postgres and self._connection.closed):
                    cursor.execute("ROLLBACK")
                raise
            cursor.execute("COMMIT")

    def _query(self, statement: str, params: tuple[Any, ...] = ()) -> list[Job]:
        set_aside: set[Any] = set()
        while True:
            with self._lock:
                self._alive()
                cursor = self._connection.cursor()
                cursor.execute(self._sql(statement), params)
                rows = cursor.fetchall()
            try:
                return [job_from_row(row, self._now) for row in rows]
            except UnreadableRow as unreadable:
                self._once(set_aside, unreadable)
                with self._transaction() as cursor:
                    self._set_aside(cursor, unreadable)

    def _migrate(self) -> None:
        with self._transaction() as cursor:
            if self.postgres:  # serialize two processes creating the schema at once
                cursor.execute("SELECT pg_advisory_xact_lock(424242)")
            cursor.execute("CREATE TABLE IF NOT EXISTS agentspec_schema (version INTEGER)")
            cursor.execute("SELECT MAX(version) FROM agentspec_schema")
            current = cursor.fetchone()[0] or 0
            if current > len(MIGRATIONS):
                raise StoreError(
                    f"the job store {self._where()} has schema version {current}, newer than "
                    f"this agentspec knows (version {len(MIGRATIONS)}): upgrade agentspec, or "
                    "use another store")
            for version, statements in enumerate(MIGRATIONS, 1):
                if version <= current:
                    continue
                for statement in statements:
                    cursor.execute(statement)
                cursor.execute(self._sql("INSERT INTO agentspec_schema VALUES (?)"), (version,))

    # rows -----------------------------------------------------------------------------------

    def _set_aside(self, cursor: Any, unreadable: UnreadableRow) -> None:
        """An unreadable row becomes a FAILED job that says why (the bad values are kept
        in its error), so it blocks nothing and is not lost."""
        log.warning("job %s cannot be read, so it is set aside as FAILED: %s",
                    unreadable.job_id, unreadable.reason)
        changes = {"status": "FAILED", "lease_owner": None, "lease_expires_at": None,
                   "finished_at": self._now(), **unreadable.repairs,
                   "error": f"the stored job could not be read, so it was set aside: "
                            f"{unreadable.reason}"}
        self._update(cursor, unreadable.job_id, **changes)
        if cursor.rowcount != 1:  # no row by that id to repair: stop, never loop
            raise StoreError(f"a job row cannot be read or set aside: {unreadable.reason}")

    def _select_for_update(self) -> str:
        return " FOR UPDATE" if self.postgres else ""

    def _fetch(self, cursor: Any, where: str, params: tuple[Any, ...], *,
               skip_locked: bool = False, order: str = "") -> Job | None:
        lock = self._select_for_update() + (" SKIP LOCKED" if skip_locked and self.postgres
                                            else "")
        set_aside: set[Any] = set()
        while True:
            cursor.execute(self._sql(f"SELECT {', '.join(COLUMNS)} FROM agentspec_jobs WHERE "
                                     f"{where} {order} LIMIT 1{lock}"), params)
            row = cursor.fetchone()
            try:
                return None if row is None else job_from_row(row, self._now)
            except UnreadableRow as unreadable:
                self._once(set_aside, unreadable)
                self._set_aside(cursor, unreadable)

    @staticmethod
    def _once(set_aside: set[Any], unreadable: UnreadableRow) -> None:
        """A row its repair did not make readable stops the query instead of looping."""
        if unreadable.job_id in set_aside:
            raise StoreError(f"a job row stays unreadable after it was set aside: "
                             f"{unreadable.reason}")
        set_aside.add(unreadable.job_id)

    def _update(self, cursor: Any, job_id: str, **changes: Any) -> None:
        for column in JSON_COLUMNS:
            if column in changes:
                changes[column] = encode(changes[column])
        changes["updated_at"] = self._now()
        assignments = ", ".join(f"{column} = ?" for column in changes)
        cursor.execute(self._sql(f"UPDATE agentspec_jobs SET {assignments} WHERE id = ?"),
                       (*changes.values(), job_id))

    def _changed(self, job_id: str, where: str, params: tuple[Any, ...],
                 **changes: Any) -> Job | None:
        """Applies `changes` to the job if it matches `where`; the job after, or None."""
        with self._transaction() as cursor:
            job = self._fetch(cursor, f"id = ? AND {where}", (job_id, *params))
            if job is None:
                return None
            self._update(cursor, job_id, **changes)
            return self._fetch(cursor, "id = ?", (job_id,))

    # the interface --------------------------------------------------------------------------

    def enqueue(self, request: JobRequest) -> tuple[Job, bool]:
        with self._transaction() as cursor:
            if self.postgres:  # two enqueues of the same request must not both insert
                cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))",
                               (f"{request.app_name}/{request.session_id}",))
            existing = self._fetch(
                cursor, f"{_ANSWERING} AND app_name = ? AND user_id = ? AND session_id = ? AND "
                "((agent = ? AND input = ?) OR (function_call_id <> '' AND "
                "function_call_id = ?))",
                (request.app_name, request.user_id, request.session_id, request.agent,
                 request.input, request.function_call_id),
                order="ORDER BY CASE WHEN status = 'DONE' THEN 1 ELSE 0 END, created_at DESC")
            if existing is not None:
                return existing, False
            job = new_job(request, self._now())
            marks = ", ".join("?" for _ in COLUMNS)
            cursor.execute(self._sql(f"INSERT INTO agentspec_jobs ({', '.join(COLUMNS)}) "
                                     f"VALUES ({marks})"), row_from_job(job))
            return job, True

    def get(self, job_id: str) -> Job | None:
        found = self._query(f"SELECT {', '.join(COLUMNS)} FROM agentspec_jobs WHERE id = ?",
                            (job_id,))
        return found[0] if found else None

    def recent(self, *, status: str | None = None, session_id: str | None = None,
             limit: int = 100) -> list[Job]:
        where, params = ["1 = 1"], []
        if status is not None:
            where.append("status = ?")
            params.append(status)
        if session_id is not None:
            where.append("session_id = ?")
            params.append(session_id)
        return self._query(f"SELECT {', '.join(COLUMNS)} FROM agentspec_jobs WHERE "
                           f"{' AND '.join(where)} ORDER BY created_at DESC LIMIT ?",
                           (*params, limit))

    def claim(self, owner: str, lease_seconds: float,
              agents: tuple[str, ...] | None = None) -> Job | None:
        moment = self._now()
        where: str = _RUNNABLE
        params: tuple[Any, ...] = (moment, moment)
        if agents is not None:
            where += f" AND agent IN ({', '.join('?' for _ in agents)})"
            params += tuple(agents)
        with self._transaction() as cursor:
            cursor.execute(self._sql(
                "UPDATE agentspec_jobs SET status = 'FAILED', error = ?, finished_at = ?, "
                f"updated_at = ?, lease_owner = NULL, lease_expires_at = NULL WHERE "
                f"{_ABANDONED}"), (ABANDONED_ERROR, moment, moment, moment))
            job = self._fetch(cursor, where, params, skip_locked=True,
                              order="ORDER BY available_at, created_at")
            if job is None:
                return None
            self._update(cursor, job.id, status="RUNNING", attempts=job.attempts + 1,
                         lease_owner=owner, lease_expires_at=moment + lease_seconds,
                         started_at=job.started_at or moment, last_event=None,
                         last_event_at=None)
            return self._fetch(cursor, "id = ?", (job.id,))

    def heartbeat(self, job_id: str, owner: str, lease_seconds: float,
                  last_event: str | None = None) -> bool:
        moment = self._now()
        event = {} if last_event is None else {"last_event": last_event,
                                               "last_event_at": moment}
        return self._changed(job_id, "status = 'RUNNING' AND lease_owner = ?", (owner,),
                             lease_expires_at=moment + lease_seconds, **event) is not None

    def finish(self, job_id: str, owner: str, result: Any,
               usage: Mapping[str, Any] | None = None) -> Job | None:
        spent = {} if usage is None else {"usage": dict(usage)}
        return self._changed(job_id, "status = 'RUNNING' AND lease_owner = ?", (owner,),
                             status="DONE", result=result, error=None, finished_at=self._now(),
                             lease_owner=None, lease_expires_at=None, **spent)

    def fail(self, job_id: str, owner: str, error: str, retry_in: float | None,
             usage: Mapping[str, Any] | None = None) -> Job | None:
        with self._transaction() as cursor:
            job = self._fetch(cursor, "id = ? AND status = 'RUNNING' AND lease_owner = ?",
                              (job_id, owner))
            if job is None:
                return None
            if usage is not None:
                self._update(cursor, job_id, usage=dict(usage))
            if retry_in is not None and job.attempts < job.max_attempts:
                self._update(cursor, job_id, status="QUEUED", error=error, lease_owner=None,
                             lease_expires_at=None, available_at=self._now() + retry_in)
            else:
                self._update(cursor, job_id, status="FAILED", error=error, finished_at=self._now(),
                             lease_owner=None, lease_expires_at=None)
            return self._fetch(cursor, "id = ?", (job_id,))

    def release(self, job_id: str, owner: str) -> bool:
        with self._transaction() as cursor:
            job = self._fetch(cursor, "id = ? AND status = 'RUNNING' AND lease_owner = ?",
                              (job_id, owner))
            if job is None:
                return False
            self._update(cursor, job_id, status="QUEUED", attempts=max(0, job.attempts - 1),
                         lease_owner=None, lease_expires_at=None)
            return True

    def cancel(self, job_id: str) -> Job | None:
        changed = self._changed(job_id, _ACTIVE, (), status="CANCELLED", finished_at=self._now(),
                                lease_owner=None, lease_expires_at=None)
        return changed or self.get(job_id)

    def retry(self, job_id: str) -> Job | None:
        changed = self._changed(job_id, "status IN ('FAILED', 'CANCELLED')", (),
                                status="QUEUED", attempts=0, error=None, finished_at=None,
                                delivered_at=None, resumed_at=None,
                                available_at=self._now())
        return changed or self.get(job_id)

    def undelivered(self, app_name: str, user_id: str, session_id: str) -> list[Job]:
        return self._query(
            f"SELECT {', '.join(COLUMNS)} FROM agentspec_jobs WHERE status IN ('DONE', "
            "'FAILED') AND delivered_at IS NULL AND (on_done <> 'resume' OR resumed_at IS NOT "
            "NULL) AND app_name = ? AND user_id = ? AND session_id = ? ORDER BY finished_at",
            (app_name, user_id, session_id))

    def mark_delivered(self, job_id: str) -> bool:
        return self._changed(job_id, "delivered_at IS NULL", (),
                             delivered_at=self._now()) is not None

    def unmark_delivered(self, job_id: str) -> None:
        self._changed(job_id, "delivered_at IS NOT NULL", (), delivered_at=None)

    def claim_resume(self, owner: str, lease_seconds: float,
                     agents: tuple[str, ...] | None = None,
                     job_id: str | None = None) -> Job | None:
        moment = self._now()
        where: str = _TO_RESUME
        params: tuple[Any, ...] = (moment,)
        if job_id is not None:
            where, params = f"id = ? AND {where}", (job_id, *params)
        if agents is not None:
            where += f" AND agent IN ({', '.join('?' for _ in agents)})"
            params += tuple(agents)
        with self._transaction() as cursor:
            job = self._fetch(cursor, where, params, skip_locked=True,
                              order="ORDER BY finished_at")
            if job is None:
                return None
            self._update(cursor, job.id, lease_owner=owner,
                         lease_expires_at=moment + lease_seconds)
            return self._fetch(cursor, "id = ?", (job.id,))

    def renew_resume(self, job_id: str, owner: str, lease_seconds: float) -> bool:
        return self._changed(job_id, _RESUMING, (owner,),
                             lease_expires_at=self._now() + lease_seconds) is not None

    def end_resume(self, job_id: str, owner: str, resumed: bool) -> bool:
        return self._changed(job_id, _RESUMING, (owner,), lease_owner=None,
                             lease_expires_at=None,
                             resumed_at=self._now() if resumed else None) is not None

    def close(self) -> None:
        with self._lock:
            self._connection.close()


def _encoding_hint(url: str) -> str:
    return (" (the password holds characters a URL must percent-encode: write each as %XX, "
            "a space as %20, `@` as %40, `%` as %25)") if unencoded_password(url) else ""
