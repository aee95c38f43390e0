"""`type: store` backends: the database their files are kept in (its form only: validate
opens no connection)."""

from __future__ import annotations

import importlib.util
from urllib.parse import urlsplit

from agentspec.contract.extras import install
from agentspec.contract.urls import redacted
from agentspec.diagnostics import codes
from agentspec.language.backends import StoreBackend
from agentspec.resolve.interpolate import has_env_ref
from agentspec.validate.semantic.context import Context

__all__ = ["check_stores"]

_POSTGRES = ("postgresql://", "postgres://", "postgresql+psycopg://")


def _installed() -> bool:
    """Whether psycopg (the `postgres` extra) is there (found, not imported)."""
    try:
        return importlib.util.find_spec("psycopg") is not None
    except (ImportError, ValueError):
        return False


def _database(ctx: Context) -> str | None:
    """The conversation store a backend without `url` takes (None: none that lasts)."""
    url = ctx.spec.sessions
    if url is None and ctx.spec.jobs is not None and ctx.spec.jobs.on_done == "resume":
        return "sqlite:///.agentspec/sessions.db"  # what lowering gives such a spec
    return url


def _password(url: str) -> bool:
    """Whether `url` holds a password written out (not `${env.X}`)."""
    try:
        password = urlsplit(url).password
    except ValueError:
        return False
    return bool(password) and not has_env_ref(password or "")


def check_stores(ctx: Context) -> None:
    for name, backend in (ctx.spec.backends or {}).items():
        if isinstance(backend, StoreBackend):
            _check(ctx, name, backend)


def _check(ctx: Context, name: str, backend: StoreBackend) -> None:
    own = backend.url is not None
    url = backend.url if own else _database(ctx)
    where = ctx.at("backends", name, "url") if own else ctx.at("backends", name, "type")
    whose = "its `url`" if own else "the `sessions` database it takes"
    if url is None or url.startswith("memory://") or url == "sqlite://" or \
            (url.startswith("sqlite:///") and url[10:].split("?")[0] in ("", ":memory:")):
        ctx.report(codes.STORE_DATABASE_MISSING(
            f"backend `{name}` keeps files that outlive sessions, and "
            + (f"{whose} (`{url}`) lasts only as long as the process" if url else
               "the spec names no database for them (no `url`, no `sessions`)"), where,
            hint="give the backend `url: sqlite:///.agentspec/files.db` (one machine) or "
                 "`url: postgresql://user:${env.PGPASSWORD}@host/db` (many)"))
        return
    if has_env_ref(url.split("://", 1)[0]) or url.startswith("${"):
        return  # the whole database comes from the environment: read where the app runs
    if not url.startswith(("sqlite:///", *_POSTGRES)):
        ctx.report(codes.STORE_URL_INVALID(
            f"backend `{name}` keeps files in SQLite or PostgreSQL, and {whose} is "
            f"`{redacted(url)}`", where,
            hint="use `sqlite:///path/files.db` or `postgresql://user@host/db`"
                 + ("" if own else " as the backend's `url`")))
        return
    if _password(url):
        ctx.report(codes.STORE_URL_PASSWORD(
            f"backend `{name}` opens {whose}, whose password is written in the spec; the URL "
            "goes into the built package", where,
            hint="write the password as `${env.NAME}`: "
                 "`postgresql://user:${env.PGPASSWORD}@host/db`"))
    if url.startswith(_POSTGRES) and not _installed():
        ctx.report(codes.STORE_DRIVER_MISSING(
            f"backend `{name}` keeps its files in PostgreSQL, which needs the `postgres` "
            "extra, and it is not installed", where, hint=f"run `{install('postgres')}`"))
