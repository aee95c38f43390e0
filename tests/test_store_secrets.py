"""A job store's password never shows (issue 21, item 7): libpq quotes a URL it cannot read
(a `%` that starts no `%XX`, a space) or the part of an unencoded password it took for a host
(`@`, `/`), and that text reached the CLI, the logs and the tool result the model receives.
Each path is fed passwords with every reserved character."""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentspec.runtime.jobs import StoreError
from agentspec.runtime.jobs.delegation import enqueue
from agentspec.runtime.jobs.stores import open_store
from tests.spec_defaults import spec_job_request, spec_job_settings
from tests.test_jobs import POSTGRES

RESERVED = ":/?#[]@!$&'()*+,;=% \"<>\\^`{|}~"
#: passwords of reserved characters and letters, each holding at least one reserved one
passwords = st.builds(
    lambda head, mark, tail: head + mark + tail,
    st.text(st.sampled_from(RESERVED + "abcXYZ019"), max_size=8),
    st.sampled_from(RESERVED), st.text(st.sampled_from(RESERVED + "abcXYZ019"), min_size=5,
                                       max_size=8))

needs_postgres = pytest.mark.skipif(POSTGRES is None, reason="AGENTSPEC_TEST_POSTGRES_URL is "
                                    "not set (.ci/run starts a server)")


@pytest.fixture(autouse=True)
def _own_stores(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stores these tests name, not the suite's shared `memory://` override."""
    monkeypatch.delenv("AGENTSPEC_JOBS_STORE", raising=False)


def _url(password: str, encoded: bool, role: str = "agentspec") -> str:
    assert POSTGRES is not None
    parts = urlsplit(POSTGRES)
    secret = quote(password, safe="") if encoded else password
    host = f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)
    return urlunsplit((parts.scheme, f"{role}:{secret}@{host}", parts.path, parts.query, ""))


def _leaks(text: str, password: str) -> bool:
    """Whether `text` shows the password, encoded or not, or a piece of 6 characters of it
    (a parser quotes the part of the password before or after a character it splits at)."""
    pieces = {password[i:i + 6] for i in range(max(1, len(password) - 5))}
    return quote(password, safe="") in text or any(piece in text for piece in pieces)


def _paths(url: str, password: str, caplog: pytest.LogCaptureFixture) -> list[str]:
    """What each path shows when the store at `url` cannot be opened: the error, the CLI's
    output, the tool result the model gets, and the log."""
    from agentspec.cli import cli

    shown = []
    with pytest.raises(StoreError) as raised:
        open_store(url)
    shown.append(str(raised.value))
    shown.append(str(raised.value.__cause__ or ""))  # a chained cause is printed too
    result = CliRunner().invoke(cli, ["jobs", "list", "--store", url])
    shown.append(result.output)
    assert result.exit_code != 0
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="agentspec.jobs"):
        invocation = SimpleNamespace(plugin_manager=SimpleNamespace(plugins=[]))
        context = SimpleNamespace(session=SimpleNamespace(app_name="a", user_id="u", id="s",
                                                          state={}),
                                  invocation_id="i", function_call_id=uuid.uuid4().hex,
                                  get_invocation_context=lambda: invocation)
        agent = SimpleNamespace(name="reporter", output_key=None)
        answer = asyncio.run(enqueue(spec_job_settings(url), agent, "Q3", context,  # type: ignore[arg-type]
                                     "task"))
    assert "could not be queued" in answer["error"]
    shown.append(str(answer))
    shown.append(caplog.text)
    return shown


@needs_postgres
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(password=passwords)
def test_an_unencoded_password_never_shows(password: str,
                                           caplog: pytest.LogCaptureFixture) -> None:
    url = _url(password, encoded=False)
    for text in _paths(url, password, caplog):
        assert not _leaks(text, password), text


@needs_postgres
def test_a_real_role_with_every_reserved_character(caplog: pytest.LogCaptureFixture) -> None:
    """The role exists with that password: percent-encoded, the store opens; written as is,
    or wrong, the refusal shows neither password."""
    import psycopg
    from psycopg import sql

    assert POSTGRES is not None
    password = "pass%q word@x:y/z?a#b[c]d!e$f&g'h(i)j*k+l,m;n=o\"r<s>t\\u^v`w{x|y}z~"
    role = f"t_secret_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(POSTGRES, autocommit=True) as admin:
        try:
            admin.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                sql.Identifier(role), sql.Literal(password)))
        except psycopg.errors.InsufficientPrivilege:
            pytest.skip("the test role cannot create roles (.ci/postgres grants CREATEROLE)")
    try:
        with psycopg.connect(_url(password, encoded=True, role=role)) as works:
            assert works.execute("SELECT current_user").fetchone() == (role,)
        for url in (_url(password, encoded=False, role=role),
                    _url(password + "wrong", encoded=True, role=role)):
            for text in _paths(url, password, caplog):
                assert not _leaks(text, password), text
        with pytest.raises(StoreError, match="percent-encode"):
            open_store(_url(password, encoded=False, role=role))
    finally:
        with psycopg.connect(POSTGRES, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


def test_a_failed_job_row_event_and_webhook_hold_no_store_password(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A job whose agent fails with an error quoting the webhook's URL and a database URL:
    the row (and so the event that delivers it, the CLI that lists it and the webhook that
    posts it) and the log hold them redacted."""
    from agentspec.runtime.jobs.worker import Worker

    password = "s3cr%t w@rd"
    store = f"sqlite:///{tmp_path / 'jobs.db'}"
    quoted = "postgresql://agent:hunter2@db.internal/jobs"
    settings_ = spec_job_settings(store, webhook=f"http://127.0.0.1:9/hook?token={password}")
    job, _ = settings_.open().enqueue(spec_job_request(agent="reporter", input="Q3", app_name="a",
                                                 user_id="u", session_id="s"))

    async def fail(agent: Any, request: str) -> str:
        raise RuntimeError(f"cannot reach {quoted} nor {settings_.webhook}")

    async def main() -> None:
        worker = Worker({"reporter": object()}, settings_, run=fail,  # type: ignore[dict-item]
                        poll_seconds=0.02, backoff_base=0.0)
        await asyncio.wait_for(worker.serve(asyncio.Event(), until_idle=True), 60)

    with caplog.at_level(logging.WARNING, logger="agentspec.jobs"):
        asyncio.run(main())
    stored = settings_.open().get(job.id)
    assert stored is not None and stored.status == "FAILED" and stored.error
    assert "db.internal" in stored.error and "the webhook http://127.0.0.1" in caplog.text
    for text in (stored.error, caplog.text):
        assert not _leaks(text, password) and "hunter2" not in text, text
