"""The job store suite, run against every store: memory, SQLite and a real PostgreSQL server
(`AGENTSPEC_TEST_POSTGRES_URL`, which `.ci/run` sets after starting one). Time is a
`ManualClock` the tests move, so "not due yet" and "the lease expired" never depend on how
fast a loaded machine runs them."""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentspec.runtime.jobs import JobRequest, JobStore, StoreError
from agentspec.runtime.jobs.rows import COLUMNS
from agentspec.runtime.jobs.sql import MIGRATIONS
from agentspec.runtime.jobs.stores import open_store
from tests.spec_defaults import spec_job_request

POSTGRES = os.environ.get("AGENTSPEC_TEST_POSTGRES_URL")


def _fresh_postgres() -> str:
    """A schema of its own for one test, on the server the URL names."""
    import psycopg

    assert POSTGRES is not None
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in POSTGRES else "?"
    return f"{POSTGRES}{separator}options=-csearch_path%3D{schema}"


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "memory":
        return "memory://"
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    if POSTGRES is None:
        pytest.skip("AGENTSPEC_TEST_POSTGRES_URL is not set (.ci/run starts a server)")
    return _fresh_postgres()


class ManualClock:
    """The store's clock: still until a test moves it."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.time = start

    def __call__(self) -> float:
        return self.time

    def advance(self, seconds: float) -> None:
        self.time += seconds


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def store(store_url: str, clock: ManualClock) -> Iterator[JobStore]:
    opened = open_store(store_url, clock)
    yield opened
    opened.close()


def ask(agent: str = "scorer", text: str = "score deal 7", session: str = "s1",
        call: str = "c1", attempts: int = 3) -> JobRequest:
    return spec_job_request(agent=agent, input=text, app_name="app", user_id="u",
                            session_id=session, invocation_id="i1", function_call_id=call,
                            tool=agent, max_attempts=attempts)


def test_enqueue_and_get(store: JobStore) -> None:
    job, created = store.enqueue(ask())
    assert created and job.status == "QUEUED" and job.attempts == 0
    assert store.get(job.id) == job
    assert store.get("missing") is None


def test_every_time_a_store_records_is_its_clocks(store: JobStore, clock: ManualClock) -> None:
    job, _ = store.enqueue(ask())
    assert job.created_at == job.available_at == job.updated_at == clock()
    clock.advance(5)
    claimed = store.claim("w1", 30)
    assert claimed is not None and claimed.started_at == clock()
    assert claimed.lease_expires_at == clock() + 30
    clock.advance(5)
    assert store.heartbeat(job.id, "w1", 30)
    held = store.get(job.id)
    assert held is not None and held.lease_expires_at == clock() + 30
    clock.advance(5)
    done = store.finish(job.id, "w1", "ok")
    assert done is not None and done.finished_at == done.updated_at == clock()
    clock.advance(5)
    assert store.mark_delivered(job.id)
    delivered = store.get(job.id)
    assert delivered is not None and delivered.delivered_at == clock()


def test_the_same_request_never_makes_a_second_job(store: JobStore) -> None:
    first, _ = store.enqueue(ask(call="c1"))
    again, created = store.enqueue(ask(call="c2"))  # same session, agent and input
    assert not created and again.id == first.id
    same_call, created = store.enqueue(ask(text="other input", call="c1"))
    assert not created and same_call.id == first.id
    other, created = store.enqueue(ask(session="s2", call="c3"))
    assert created and other.id != first.id
    # once DONE, the same request is answered by it, with its stored result (issue 14)
    claimed = store.claim("w1", 30)
    assert claimed is not None and claimed.id == first.id
    store.finish(first.id, "w1", {"score": 80})
    answered, created = store.enqueue(ask(call="c4"))
    assert not created and (answered.id, answered.status, answered.result) == (
        first.id, "DONE", {"score": 80})
    # once FAILED (or CANCELLED), it is a new job
    store.claim("w1", 30)
    store.fail(other.id, "w1", "RuntimeError: down", retry_in=None)
    fresh, created = store.enqueue(ask(session="s2", call="c5"))
    assert created and fresh.id != other.id
    # a new run of the same request is active again: it answers, not the old DONE one
    store.claim("w1", 30)
    store.finish(fresh.id, "w1", {"score": 1})
    store.cancel(fresh.id)


def test_claim_leases_and_counts_attempts(store: JobStore) -> None:
    job, _ = store.enqueue(ask())
    claimed = store.claim("w1", 30)
    assert claimed is not None and claimed.id == job.id
    assert (claimed.status, claimed.attempts, claimed.lease_owner) == ("RUNNING", 1, "w1")
    assert store.claim("w2", 30) is None  # leased
    assert store.heartbeat(job.id, "w1", 30)
    assert not store.heartbeat(job.id, "w2", 30)


def test_an_expired_lease_is_claimed_again_and_the_old_worker_loses_it(
        store: JobStore, clock: ManualClock) -> None:
    job, _ = store.enqueue(ask())
    assert store.claim("w1", 30) is not None
    clock.advance(29)
    assert store.claim("w2", 30) is None  # still leased
    clock.advance(2)
    again = store.claim("w2", 30)
    assert again is not None and again.id == job.id and again.attempts == 2
    assert store.finish(job.id, "w1", "late") is None  # w1's result is dropped
    done = store.finish(job.id, "w2", "on time")
    assert done is not None and done.status == "DONE" and done.result == "on time"


def test_claim_only_the_agents_asked_for(store: JobStore) -> None:
    store.enqueue(ask(agent="writer"))
    assert store.claim("w1", 30, agents=("scorer",)) is None
    claimed = store.claim("w1", 30, agents=("writer", "scorer"))
    assert claimed is not None and claimed.agent == "writer"


def test_failures_retry_with_a_delay_then_fail(store: JobStore, clock: ManualClock) -> None:
    job, _ = store.enqueue(ask(attempts=2))
    store.claim("w1", 30)
    retried = store.fail(job.id, "w1", "boom", retry_in=10)
    assert retried is not None and retried.status == "QUEUED" and retried.error == "boom"
    assert retried.available_at == clock() + 10
    assert store.claim("w1", 30) is None  # not due yet
    clock.advance(9.5)
    assert store.claim("w1", 30) is None  # still not
    clock.advance(0.5)
    assert store.claim("w1", 30) is not None  # due exactly now
    failed = store.fail(job.id, "w1", "boom again", retry_in=10)
    assert failed is not None and failed.status == "FAILED" and failed.attempts == 2
    assert store.fail(job.id, "w1", "x", retry_in=None) is None  # no longer held


def test_release_gives_the_job_back_without_an_attempt(store: JobStore) -> None:
    job, _ = store.enqueue(ask())
    store.claim("w1", 30)
    assert store.release(job.id, "w1")
    released = store.get(job.id)
    assert released is not None and (released.status, released.attempts) == ("QUEUED", 0)


def test_cancel_and_retry(store: JobStore) -> None:
    job, _ = store.enqueue(ask())
    cancelled = store.cancel(job.id)
    assert cancelled is not None and cancelled.status == "CANCELLED"
    assert store.claim("w1", 30) is None
    retried = store.retry(job.id)
    assert retried is not None and (retried.status, retried.attempts) == ("QUEUED", 0)
    assert store.claim("w1", 30) is not None


def test_delivery_happens_once(store: JobStore) -> None:
    job, _ = store.enqueue(ask())
    store.claim("w1", 30)
    store.finish(job.id, "w1", {"score": 91, "why": "big budget"})
    waiting = store.undelivered("app", "u", "s1")
    assert [j.id for j in waiting] == [job.id] and waiting[0].result == {"score": 91,
                                                                         "why": "big budget"}
    assert store.undelivered("app", "u", "other") == []
    assert store.mark_delivered(job.id)
    assert not store.mark_delivered(job.id)
    assert store.undelivered("app", "u", "s1") == []


def test_list_newest_first_with_filters(store: JobStore, clock: ManualClock) -> None:
    first, _ = store.enqueue(ask(text="a", call="1"))
    clock.advance(0.001)
    second, _ = store.enqueue(ask(text="b", call="2"))
    assert [j.id for j in store.recent()] == [second.id, first.id]
    store.cancel(first.id)
    assert [j.id for j in store.recent(status="CANCELLED")] == [first.id]
    assert store.recent(session_id="nope") == []


def test_a_store_reopened_keeps_its_jobs(store_url: str) -> None:
    if store_url == "memory://":
        pytest.skip("memory stores live as long as their process")
    first = open_store(store_url)
    job, _ = first.enqueue(ask())
    first.close()
    second = open_store(store_url)  # the schema is not created twice
    assert second.get(job.id) is not None
    second.close()


def test_bad_urls_are_store_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="unknown job store"):
        open_store("redis://localhost")
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="cannot open"):
        open_store(f"sqlite:///{tmp_path / 'file' / 'jobs.db'}")
    with pytest.raises(StoreError, match="cannot connect"):
        open_store("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2")


def test_a_job_whose_workers_keep_dying_fails_instead_of_running_forever(
        store: JobStore, clock: ManualClock) -> None:
    job, _ = store.enqueue(ask(attempts=2))
    for worker in ("w1", "w2"):  # each dies holding the lease
        assert store.claim(worker, 30) is not None
        clock.advance(31)
    assert store.claim("w3", 30) is None
    failed = store.get(job.id)
    assert failed is not None and (failed.status, failed.attempts) == ("FAILED", 2)
    assert failed.error is not None and "lease expired" in failed.error
    assert failed.lease_owner is None


def test_a_delivery_that_failed_after_its_mark_is_made_again(store: JobStore) -> None:
    job, _ = store.enqueue(ask())
    store.claim("w", 30)
    store.finish(job.id, "w", "done")
    assert store.mark_delivered(job.id)
    store.unmark_delivered(job.id)
    assert [j.id for j in store.undelivered("app", "u", "s1")] == [job.id]


def test_postgres_reconnects_after_the_server_drops_the_connection() -> None:
    if POSTGRES is None:
        pytest.skip("AGENTSPEC_TEST_POSTGRES_URL is not set (.ci/run starts a server)")
    import psycopg

    opened = open_store(_fresh_postgres())
    job, _ = opened.enqueue(ask())
    backend = opened._connection.info.backend_pid  # type: ignore[attr-defined]
    with psycopg.connect(POSTGRES, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (backend,))
    with pytest.raises(psycopg.Error):
        opened.get(job.id)  # the call that finds the connection gone
    assert opened.get(job.id) is not None  # the next one reconnects
    assert opened.claim("w", 30) is not None
    opened.close()


# -- stores that hold what this code cannot read (issue 12, item 12) -----------------------

def _sql(url: str, statement: str, params: tuple[Any, ...] = ()) -> None:
    """Runs one statement on the store's database behind its back."""
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as connection:
            connection.execute(statement, params)
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(statement.replace("?", "%s"), params)


@pytest.fixture(params=["sqlite", "postgresql"])
def sql_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    if POSTGRES is None:
        pytest.skip("AGENTSPEC_TEST_POSTGRES_URL is not set (.ci/run starts a server)")
    return _fresh_postgres()


def test_a_store_with_a_newer_schema_is_refused_naming_both_versions(sql_url: str) -> None:
    open_store(sql_url).close()
    newer = len(MIGRATIONS) + 1
    _sql(sql_url, "INSERT INTO agentspec_schema VALUES (?)", (newer,))
    _sql(sql_url, "ALTER TABLE agentspec_jobs RENAME COLUMN input TO request")
    with pytest.raises(StoreError) as refused:
        open_store(sql_url)
    message = str(refused.value)
    assert f"schema version {newer}" in message and f"version {len(MIGRATIONS)}" in message
    assert "agentspec:agentspec" not in message  # never the password of the URL


def test_an_unreadable_row_is_set_aside_and_blocks_no_claim(sql_url: str) -> None:
    store = open_store(sql_url)
    broken, _ = store.enqueue(ask(text="first", call="c1"))
    good, _ = store.enqueue(ask(text="second", call="c2"))
    _sql(sql_url, "UPDATE agentspec_jobs SET result = ? WHERE id = ?", ("{not json", broken.id))
    claimed = store.claim("w", 30)
    assert claimed is not None and claimed.id == good.id  # the broken one was passed over
    aside = store.get(broken.id)
    assert aside is not None and aside.status == "FAILED" and aside.result is None
    assert aside.error is not None and "not JSON" in aside.error and "{not json" in aside.error
    assert store.claim("w", 30) is None  # and it never comes back
    store.close()


def test_a_job_keeps_the_state_it_was_queued_with(sql_url: str) -> None:
    store = open_store(sql_url)
    job, _ = store.enqueue(spec_job_request(agent="scorer", input="go", session_id="s",
                                      state={"topic": "eels", "n": [1, {"deep": True}]}))
    claimed = store.claim("w", 30)
    assert claimed is not None and claimed.state == {"topic": "eels", "n": [1, {"deep": True}]}
    other, _ = store.enqueue(spec_job_request(agent="scorer", input="again", session_id="s"))
    _sql(sql_url, "UPDATE agentspec_jobs SET state = ? WHERE id = ?", ("[1]", other.id))
    aside = store.get(other.id)  # not a mapping: set aside, never run with it
    assert aside is not None and aside.status == "FAILED" and aside.state == {}
    assert aside.error is not None and "state is not a JSON mapping" in aside.error
    store.close()


def test_every_query_sets_an_unreadable_row_aside(sql_url: str) -> None:
    store = open_store(sql_url)
    job, _ = store.enqueue(ask())
    store.claim("w", 30)
    store.finish(job.id, "w", {"score": 7})
    _sql(sql_url, "UPDATE agentspec_jobs SET result = ? WHERE id = ?", ("{'score': 7", job.id))
    [listed] = store.recent()
    assert listed.status == "FAILED" and "{'score': 7" in (listed.error or "")
    # delivered as a failure, with the reason: the conversation learns of it
    assert [j.id for j in store.undelivered("app", "u", "s1")] == [job.id]
    store.close()


GARBAGE = st.one_of(st.text(max_size=8), st.integers(-5, 5), st.floats(allow_nan=True),
                    st.binary(max_size=4), st.none(), st.sampled_from(["{", "[1,", "nan"]))


@pytest.mark.slow
@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(column=st.sampled_from([c for c in COLUMNS if c != "id"]), value=GARBAGE,
       status=st.sampled_from(["QUEUED", "RUNNING", "DONE", "FAILED"]))
def test_whatever_a_column_holds_claims_and_queries_go_on(
        tmp_path_factory: pytest.TempPathFactory, column: str, value: Any, status: str) -> None:
    """SQLite keeps any value in any column; no value may stop the queue."""
    url = f"sqlite:///{tmp_path_factory.mktemp('garbage') / 'jobs.db'}"
    store = open_store(url)
    broken, _ = store.enqueue(ask(text="first", call="c1"))
    good, _ = store.enqueue(ask(text="second", call="c2"))
    _sql(url, "UPDATE agentspec_jobs SET status = ?, lease_expires_at = 0 WHERE id = ?",
         (status, broken.id))
    try:
        _sql(url, f"UPDATE agentspec_jobs SET {column} = ? WHERE id = ?", (value, broken.id))
    except sqlite3.IntegrityError:
        store.close()
        return  # NOT NULL: SQLite itself refuses the value
    claimed = store.claim("w", 30)
    assert claimed is not None  # the good job at least, whatever the broken one holds
    jobs = {j.id: j for j in store.recent()}
    assert set(jobs) == {broken.id, good.id}
    assert store.get(broken.id) is not None
    store.undelivered("app", "u", "s1")
    store.close()


def test_a_store_of_the_first_schema_is_migrated_and_keeps_its_jobs(sql_url: str) -> None:
    _sql(sql_url, "CREATE TABLE agentspec_schema (version INTEGER)")
    for statement in MIGRATIONS[0]:
        _sql(sql_url, statement)
    _sql(sql_url, "INSERT INTO agentspec_schema VALUES (1)")
    old = COLUMNS[:COLUMNS.index("output_key")]
    values = ("j1", "scorer", "deal 7", "app", "u", "s1", "i", "c", "scorer", "QUEUED", 0, 3,
              None, None, 1.0, 1.0, 1.0, None, None, None, None, None)
    _sql(sql_url, f"INSERT INTO agentspec_jobs ({', '.join(old)}) VALUES "
                  f"({', '.join('?' for _ in old)})", values)
    store = open_store(sql_url)
    job = store.get("j1")
    assert job is not None and (job.input, job.output_key) == ("deal 7", "")
    assert (job.on_done, job.resumed_at, job.state) == ("wait", None, {})
    claimed = store.claim("w", 30)
    assert claimed is not None and claimed.id == "j1"
    store.close()


# jobs that resume their parent (issue 14) ----------------------------------------------------


def finished(store: JobStore, on_done: str = "resume", text: str = "score deal 7") -> str:
    job, _ = store.enqueue(spec_job_request(agent="scorer", input=text, app_name="app", user_id="u",
                                      session_id="s1", on_done=on_done))
    claimed = store.claim("w0", 30)
    assert claimed is not None and claimed.id == job.id and claimed.on_done == on_done
    assert store.finish(job.id, "w0", {"score": 80}) is not None
    return job.id


def test_a_finished_job_that_resumes_is_leased_to_one_worker(
        store: JobStore, clock: ManualClock) -> None:
    job_id = finished(store)
    assert store.undelivered("app", "u", "s1") == []  # the worker delivers it, not the plugin
    first = store.claim_resume("w1", 30)
    assert first is not None and first.id == job_id and first.lease_owner == "w1"
    assert store.claim_resume("w2", 30) is None
    assert store.claim_resume("w2", 30, job_id=job_id) is None
    assert store.renew_resume(job_id, "w1", 30) and not store.renew_resume(job_id, "w2", 30)
    assert not store.end_resume(job_id, "w2", True)
    clock.advance(5)
    assert store.end_resume(job_id, "w1", True)
    done = store.get(job_id)
    assert done is not None and done.resumed_at == clock() and done.lease_owner is None
    assert done.status == "DONE" and done.result == {"score": 80}
    assert store.claim_resume("w2", 30) is None  # resumed once, never again
    assert not store.renew_resume(job_id, "w1", 30)


def test_a_resumption_whose_worker_died_is_claimed_again(
        store: JobStore, clock: ManualClock) -> None:
    job_id = finished(store)
    assert store.claim_resume("w1", 30) is not None
    clock.advance(29)
    assert store.claim_resume("w2", 30) is None  # still w1's
    clock.advance(2)
    again = store.claim_resume("w2", 30, agents=("scorer",))
    assert again is not None and again.id == job_id and again.lease_owner == "w2"
    assert not store.end_resume(job_id, "w1", True)  # the dead worker's word counts no more
    assert store.end_resume(job_id, "w2", False)  # given back (a worker stopping) ...
    back = store.claim_resume("w3", 30)
    assert back is not None and back.id == job_id  # ... is claimed at once


def test_only_resuming_jobs_are_resumed(store: JobStore) -> None:
    waiting = finished(store, on_done="wait", text="a")
    assert store.claim_resume("w1", 30) is None
    assert [j.id for j in store.undelivered("app", "u", "s1")] == [waiting]
    job, _ = store.enqueue(spec_job_request(agent="scorer", input="b", app_name="app", user_id="u",
                                      session_id="s1", on_done="resume"))
    assert store.claim_resume("w1", 30) is None  # not finished yet
    store.claim("w0", 30)
    store.fail(job.id, "w0", "RuntimeError: down", retry_in=None)
    failed = store.claim_resume("w1", 30, agents=("other",))
    assert failed is None  # another worker's agents
    failed = store.claim_resume("w1", 30)
    assert failed is not None and failed.status == "FAILED"  # told to the parent, too
    assert store.end_resume(job.id, "w1", True)
    retried = store.retry(job.id)
    assert retried is not None and retried.resumed_at is None  # a new run resumes again


def test_two_workers_racing_for_one_resumption_get_it_once(store_url: str) -> None:
    """Each worker with a store of its own (as in two processes), claiming together."""
    import threading

    stores = [open_store(store_url) for _ in range(2)] if store_url != "memory://" else \
        [open_store(store_url)] * 2
    job_ids = [finished(stores[0], text=f"deal {i}") for i in range(20)]
    won: list[tuple[str, str]] = []
    start = threading.Barrier(2)

    def race(index: int) -> None:
        start.wait()
        while (job := stores[index].claim_resume(f"w{index}", 30)) is not None:
            won.append((job.id, f"w{index}"))
            assert stores[index].end_resume(job.id, f"w{index}", True)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(job_id for job_id, _ in won) == sorted(job_ids)  # each exactly once
    for opened in set(stores):
        opened.close()
