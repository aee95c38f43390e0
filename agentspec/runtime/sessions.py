"""The conversation store: one of ADK's session services, named by a URL that `agentspec run`,
`agentspec worker` and ADK front ends (`adk api_server --session_service_uri URL`) share.

The URL is one ADK takes: `memory://`, `sqlite:///path` (after the third slash, a path:
`sqlite:////abs/path` or a relative one), `postgresql://...`, `mysql://...`, `agentengine://...`
and any other SQLAlchemy URL. A plain `postgresql://` (or `postgres://`) is opened with psycopg
(`postgresql+psycopg://`, what the `postgres` extra installs), since the driver SQLAlchemy
picks for it otherwise is synchronous and ADK's service refuses it; a front end started with
`adk api_server` needs the `postgresql+psycopg://` spelling, which works here too.

A URL may hold a password, so it is only ever shown redacted (`redacted`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agentspec.contract.extras import install
from agentspec.contract.urls import redacted, scrubbed

__all__ = ["SESSIONS_OVERRIDE", "SessionsError", "open_sessions", "reachable", "redacted",
           "sessions_url"]

#: overrides the spec's `sessions:` (a staging run, a test) without editing the spec
SESSIONS_OVERRIDE = "AGENTSPEC_SESSIONS"


class SessionsError(RuntimeError):
    """The session store cannot be opened (bad URL, missing driver, unreachable server)."""


def sessions_url(given: str | None, spec: str | None) -> str | None:
    """The session store to use: `given` (a command's `--session`), else
    `AGENTSPEC_SESSIONS`, else the spec's; None: in memory."""
    return given or os.environ.get(SESSIONS_OVERRIDE) or spec


def _database_url(url: str) -> str:
    for plain in ("postgresql://", "postgres://"):
        if url.startswith(plain):
            return "postgresql+psycopg://" + url.removeprefix(plain)
    return url


def open_sessions(url: str | None) -> tuple[Any, Any]:
    """The session and artifact services for `url`: in memory for None; for `sqlite:///PATH`
    artifacts are kept in the directory `PATH.artifacts` beside the database, and in memory
    for the other stores."""
    from google.adk.artifacts import InMemoryArtifactService

    if url is None or url == "memory://":
        from google.adk.sessions import InMemorySessionService

        return InMemorySessionService(), InMemoryArtifactService()
    if url.startswith("sqlite:///"):
        from google.adk.artifacts.file_artifact_service import FileArtifactService
        from google.adk.sessions.sqlite_session_service import SqliteSessionService

        path = Path(url.removeprefix("sqlite:///"))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise SessionsError(f"cannot make the session store's directory {path.parent}: "
                                f"{error.strerror}") from error
        return SqliteSessionService(str(path)), FileArtifactService(
            path.with_name(path.name + ".artifacts"))
    if "://" not in url:
        raise SessionsError(f"{redacted(url)!r} is not a session store URL: use sqlite:///PATH, "
                            "postgresql://... or another URL ADK's session services take")
    from google.adk.cli.service_registry import get_service_registry

    database = _database_url(url)
    try:
        service = get_service_registry().create_session_service(database)
        if service is None:
            from google.adk.sessions.database_session_service import DatabaseSessionService

            service = DatabaseSessionService(db_url=database)
    except Exception as error:  # noqa: BLE001 - ADK raises ValueError, drivers their own
        missing = isinstance(error, ImportError) or isinstance(error.__cause__, ImportError)
        hint = f" (install the driver: {install('postgres')} for PostgreSQL)" \
            if missing else ""
        raise SessionsError(f"cannot open the session store {redacted(url)}: "
                            f"{_scrubbed(error, url)}{hint}") from None
    return service, InMemoryArtifactService()


async def reachable(service: Any, url: str | None, app_name: str) -> None:
    """Reads from the store once, so that an unreachable server or a refused password is a
    SessionsError at the start, not a failure in the middle of a turn (a database service
    connects only when first used)."""
    if url is None:
        return
    try:
        await service.list_sessions(app_name=app_name, user_id="user")
    except Exception as error:  # noqa: BLE001 - whatever the driver raises
        raise SessionsError(f"cannot use the session store {redacted(url)}: "
                            f"{_scrubbed(error, url)}") from None


def _scrubbed(error: BaseException, url: str) -> str:
    """The error's text without the URL's password, whatever the driver put in it."""
    return scrubbed(f"{type(error).__name__}: {error}", url, _database_url(url))
