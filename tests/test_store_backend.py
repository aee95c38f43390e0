"""`type: store`: files in a database table (`agentspec_files`) that outlive sessions, on
SQLite and PostgreSQL, one namespace per app, backend and (`scope: user`) user (issue 23
item 2)."""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agentspec.contract.backends import StoreDef
from agentspec.runtime.backends import BackendError
from agentspec.runtime.backends import store_table as store_module
from agentspec.runtime.backends.state import StateBackend
from agentspec.runtime.backends.store import (
    MAX_FILE_BYTES,
    FileStore,
    StoreBackend,
    namespace,
    open_files,
    store_backend,
)
from agentspec.runtime.harness.filesystem import backend_factory

POSTGRES = os.environ.get("AGENTSPEC_TEST_POSTGRES_URL")


def _fresh_postgres() -> str:
    """A schema of its own for one test (as `tests/test_job_store.py` makes one)."""
    from tests.test_job_store import _fresh_postgres as fresh

    return fresh()


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'files.db'}"
    if POSTGRES is None:
        pytest.skip("AGENTSPEC_TEST_POSTGRES_URL is not set (.ci/run starts a server)")
    return _fresh_postgres()


def _definition(url: str, scope: str = "user", app: str = "keeper") -> StoreDef:
    sqlite = url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else None
    return StoreDef(scope=scope, url=None if sqlite else url,  # type: ignore[arg-type]
                    sqlite=sqlite, app=app, read=None, write=None)


def _backend(url: str, user: str = "ann", scope: str = "user") -> StoreBackend:
    return store_backend("notes", _definition(url, scope), user)


# the table --------------------------------------------------------------------------------


def test_files_behave_as_files(database: str) -> None:
    files = _backend(database)
    files.write("/notes/a.md", "alpha\nbeta\n")
    files.write("/notes/deep/b.md", "gamma")
    files.write("/top.txt", "héllo")
    assert files.read("/notes/a.md") == "alpha\nbeta\n"
    assert [(f.path, f.is_dir, f.size) for f in files.ls("/")] == [
        ("/notes", True, 0), ("/top.txt", False, len("héllo".encode()))]
    assert [f.path for f in files.ls("/notes")] == ["/notes/a.md", "/notes/deep"]
    assert files.glob("**/*.md") == ["/notes/a.md", "/notes/deep/b.md"]
    state = StateBackend({})  # the same answers as the other backend without directories
    for path, content in (("/notes/a.md", "alpha\nbeta\n"), ("/notes/deep/b.md", "gamma"),
                          ("/top.txt", "héllo")):
        state.write(path, content)
    for pattern, under in (("*.md", "/notes"), ("*", "/"), ("deep/*", "/notes")):
        assert files.glob(pattern, under) == state.glob(pattern, under)
    assert files.ls("/notes") == state.ls("/notes")
    assert [(m.path, m.line_number) for m in files.grep("beta")] == [("/notes/a.md", 2)]
    assert files.grep("gam", "/notes", glob="*.md")[0].line == "gamma"
    assert files.grep("a\x00") == []  # no file holds a NUL (PostgreSQL takes none)
    assert files.edit("/notes/a.md", "beta", "BETA") == 1
    assert files.read("/notes/a.md") == "alpha\nBETA\n"
    files.write("/notes/a.md", "over")
    assert files.read("/notes/a.md") == "over"
    with pytest.raises(BackendError, match="is a directory"):
        files.read("/notes")
    with pytest.raises(BackendError, match="is a directory"):
        files.write("/notes", "x")
    with pytest.raises(BackendError, match="is a file, so it cannot contain"):
        files.write("/top.txt/inner", "x")
    with pytest.raises(BackendError, match="File not found"):
        files.read("/missing.md")
    with pytest.raises(BackendError, match="No such file or directory"):
        files.ls("/missing")
    # a `%` or `_` in a path is no wildcard of a prefix query
    files.write("/a_b/x.md", "1")
    files.write("/a%b/y.md", "2")
    files.write("/aXb/z.md", "3")
    assert [f.path for f in files.ls("/a_b")] == ["/a_b/x.md"]
    assert files.glob("**", "/a%b") == ["/a%b/y.md"]


def test_a_file_outlives_the_connection_that_wrote_it(database: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Written through one opened database; read through another (a new process)."""
    _backend(database).write("/kept.md", "still here")
    monkeypatch.setattr(store_module, "_STORES", {})
    assert _backend(database).read("/kept.md") == "still here"
    store_module.close_files(database)
    assert open_files(database) is open_files(database)  # once per process


def test_the_table_is_created_once_with_the_columns_the_docs_name(tmp_path: Path) -> None:
    path = tmp_path / "files.db"
    FileStore(f"sqlite:///{path}").close()
    FileStore(f"sqlite:///{path}").close()  # a second process finds it there
    columns = [row[1] for row in sqlite3.connect(path).execute(
        "PRAGMA table_info(agentspec_files)")]
    assert columns == ["namespace", "path", "content", "modified"]


def test_a_commit_that_fails_leaves_no_transaction_open(tmp_path: Path) -> None:
    """SQLite cannot commit while another connection reads (after the busy timeout: here a
    tenth of a second): that write is a tool error and is not there, and the process's one
    connection is not left inside its transaction (which held the database's write lock and
    failed every later call with "cannot start a transaction within a transaction")."""
    path = tmp_path / "files.db"
    store = FileStore(f"sqlite:///{path}")
    try:
        store._connection.execute("PRAGMA busy_timeout=100")
        files = StoreBackend(lambda: store, "app:keeper/backend:notes")
        files.write("/a.md", "one")
        reader = sqlite3.connect(path, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM agentspec_files").fetchall()  # holds a read lock
        with pytest.raises(BackendError, match="locked"):
            files.write("/b.md", "two")
        assert files.glob("**") == ["/a.md"]  # the failed write is not seen as done
        other = sqlite3.connect(path, isolation_level=None, timeout=0.1)
        other.execute("BEGIN IMMEDIATE")  # nobody holds the write lock any more
        other.execute("ROLLBACK")
        other.close()
        reader.execute("COMMIT")
        reader.close()
        files.write("/c.md", "three")
        assert files.glob("**") == ["/a.md", "/c.md"]
    finally:
        store.close()


def test_users_and_apps_do_not_see_each_others_files(database: str) -> None:
    _backend(database, "ann").write("/diary.md", "ann's")
    with pytest.raises(BackendError, match="File not found"):
        _backend(database, "bob").read("/diary.md")
    assert _backend(database, "bob").ls("/") == []
    other_app = store_backend("notes", _definition(database, app="other"), "ann")
    assert other_app.glob("**") == []
    # names that would collide if joined naively are kept apart
    assert namespace("a/b", "c", None) != namespace("a", "b/c", None)
    assert namespace("a", "b", "c") != namespace("a", "b/user:c", None)


@pytest.mark.parametrize("path", ["/../../etc/passwd", "/a/\x00b", "", "/" + "a" * 5000])
def test_hostile_paths_are_tool_errors(database: str, path: str) -> None:
    files = _backend(database)
    with pytest.raises(BackendError):
        files.write(path, "x")
    with pytest.raises(BackendError):
        files.read(path)


def test_a_path_no_database_can_keep_is_the_models_error(database: str) -> None:
    """A lone surrogate (which JSON can carry) is the path's fault, not the database's."""
    files = _backend(database)
    for call in (lambda: files.write("/\ud800.md", "x"), lambda: files.read("/\ud800.md"),
                 lambda: files.ls("/\ud800"), lambda: files.edit("/\ud800", "a", "b"),
                 lambda: files.glob("*", "/\ud800")):
        with pytest.raises(BackendError, match="not valid Unicode") as caught:
            call()
        assert "database" not in str(caught.value)
    assert files.grep("\ud800") == []


def test_absolute_looking_paths_stay_inside_the_namespace(database: str) -> None:
    files = _backend(database)
    files.write("/etc/passwd", "mine")
    assert _backend(database, "bob").glob("**") == []
    assert files.read("/etc/../etc/passwd") == "mine"


@pytest.mark.parametrize("content,why", [
    ("a\x00b", "NUL character"), ("\ud800", "not valid Unicode"),
    ("x" * (MAX_FILE_BYTES + 1), "at most")])
def test_content_the_database_cannot_keep_is_a_tool_error(database: str, content: str,
                                                          why: str) -> None:
    files = _backend(database)
    files.write("/f.md", "before")
    with pytest.raises(BackendError, match=why):
        files.write("/f.md", content)
    with pytest.raises(BackendError, match=why):
        files.edit("/f.md", "before", content)
    assert files.read("/f.md") == "before"


def test_an_edit_that_would_grow_a_file_past_the_limit_is_refused_before_it_is_built(
        database: str) -> None:
    """`replace_all` multiplies: a 1 MB file of one letter, each made 100 letters, would be
    100 MB (a 10 MB file and a longer `new_string`, gigabytes: the process killed for its
    memory, every user's conversation with it). The size is known from the count, so the
    edit is refused before the text is built."""
    import tracemalloc

    files = _backend(database)
    files.write("/big.md", "a" * 1_000_000)
    tracemalloc.start()
    try:
        with pytest.raises(BackendError, match="at most"):
            files.edit("/big.md", "a", "b" * 100, replace_all=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 30_000_000, peak
    assert files.read("/big.md") == "a" * 1_000_000


def test_concurrent_edits_lose_no_write(database: str) -> None:
    """Four writers, each on its own connection (as four processes would be), insert their
    marks into one file through `edit_file`, which reads and rewrites it; every mark lands.
    (Threads switch as often as Python lets them, so an edit that read outside its write's
    transaction loses marks here.)"""
    saved = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        _concurrent_edits(database)
    finally:
        sys.setswitchinterval(saved)


def _concurrent_edits(database: str) -> None:
    _backend(database).write("/log.md", "log:")
    writers, edits = 4, 25
    space = namespace("keeper", "notes", "ann")
    errors: list[BaseException] = []
    start = threading.Barrier(writers)

    def work(index: int) -> None:
        store = FileStore(database)
        files = StoreBackend(lambda: store, space)
        try:
            start.wait()
            for step in range(edits):
                files.edit("/log.md", "log:", f"log:[{index}.{step}]")
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            store.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    text = _backend(database).read("/log.md")
    assert sorted(text.removeprefix("log:").replace("][", "]\n[").splitlines()) == sorted(
        f"[{i}.{s}]" for i in range(writers) for s in range(edits))


def test_concurrent_writes_of_new_files_all_land(database: str) -> None:
    writers = 4
    start = threading.Barrier(writers)
    errors: list[BaseException] = []

    def work(index: int) -> None:
        store = FileStore(database)
        files = StoreBackend(lambda: store, namespace("keeper", "notes", "ann"))
        try:
            start.wait()
            for step in range(8):
                files.write(f"/w{index}/{step}.md", str(step))
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            store.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(_backend(database).glob("**/*.md")) == writers * 8


def test_a_database_that_cannot_be_opened_is_a_tool_error_without_its_password() -> None:
    files = _backend("postgresql://agentspec:s3cret-pw@127.0.0.1:1/none?connect_timeout=2")
    with pytest.raises(BackendError) as caught:
        files.read("/a.md")
    assert "s3cret-pw" not in str(caught.value)
    assert "files' database" in str(caught.value)


def test_a_missing_environment_variable_is_a_tool_error(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    monkeypatch.delenv("AGENTSPEC_NO_SUCH_PW", raising=False)
    files = _backend("postgresql://a:${env.AGENTSPEC_NO_SUCH_PW}@127.0.0.1:1/none")
    with pytest.raises(BackendError, match="AGENTSPEC_NO_SUCH_PW"):
        files.ls("/")


def test_without_psycopg_the_error_names_the_postgres_extra(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real = builtins.__import__

    def hidden(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "psycopg":
            raise ImportError("hidden")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", hidden)
    with pytest.raises(BackendError, match=r"agentspec-adk\[postgres\]"):
        _backend("postgresql://a@127.0.0.1:1/none").read("/a.md")


# scopes through the file tools' factory ----------------------------------------------------


def _factory(database: str, scope: str, extra: dict[str, Any] | None = None) -> Any:
    from agentspec.contract.backends import to_data

    definitions = {"notes": to_data(_definition(database, scope)), **(extra or {})}
    return backend_factory("notes", definitions)


def _as(user: str | None) -> Any:
    return SimpleNamespace(state={}, user_id=user)


def test_scope_user_keeps_users_apart_and_scope_app_shares(database: str) -> None:
    per_user = _factory(database, "user")
    per_user(_as("ann")).write("/a.md", "ann")
    with pytest.raises(BackendError, match="File not found"):
        per_user(_as("bob")).read("/a.md")
    shared = _factory(database, "app")
    shared(_as("ann")).write("/a.md", "for all")
    assert shared(_as("bob")).read("/a.md") == "for all"
    assert per_user(_as("ann")).read("/a.md") == "ann"  # each scope its own namespace
    with pytest.raises(BackendError, match="names no user"):
        per_user(_as(None))


def test_a_shared_store_still_keeps_each_users_large_results_apart(database: str) -> None:
    shared = _factory(database, "app")
    shared(_as("ann")).write("/large_tool_results/ann/r1", "ann's result")
    with pytest.raises(BackendError, match="another user's"):
        shared(_as("bob")).read("/large_tool_results/ann/r1")


def test_permissions_hold_on_a_store(database: str) -> None:
    from dataclasses import replace

    from agentspec.contract.backends import to_data

    definition = replace(_definition(database), read=("/docs/**",), write=("/docs/**",))
    files = backend_factory("notes", {"notes": to_data(definition)})(_as("ann"))
    files.write("/docs/a.md", "ok")
    with pytest.raises(BackendError, match="`write` rule"):
        files.write("/secret.md", "no")
    assert files.read("/docs/a.md") == "ok"


def test_a_composite_routes_a_prefix_to_a_store(database: str) -> None:
    from agentspec.contract.backends import CompositeDef, StateDef, to_data
    from agentspec.contract.frozen import FrozenMap

    definitions = {
        "ws": to_data(CompositeDef(default="scratch", routes=FrozenMap({"/memories/": "notes"}),
                                   conversation_files=None, read=None, write=None)),
        "scratch": to_data(StateDef(read=None, write=None)),
        "notes": to_data(_definition(database))}
    first = backend_factory("ws", definitions)(SimpleNamespace(state={}, user_id="ann"))
    first.write("/memories/prefs.md", "tea")
    first.write("/scratch.md", "gone with the session")
    # another session of the same user: new state, same store
    second = backend_factory("ws", definitions)(SimpleNamespace(state={}, user_id="ann"))
    assert second.read("/memories/prefs.md") == "tea"
    assert second.glob("**") == ["/memories/prefs.md"]
    assert _backend(database).read("/prefs.md") == "tea"


def test_upload_and_download_files(database: str) -> None:
    files = _factory(database, "user")(_as("ann"))
    done = files.upload_files([("/a.md", b"one"), ("/b.bin", b"\xff\xfe"),
                               ("/c.md", b"x\x00y")])
    assert [d.error is None for d in done] == [True, False, False]
    got = files.download_files(["/a.md", "/missing.md"])
    assert got[0].content == b"one" and got[1].error is not None


def test_postgresql_connection_dropped_by_the_server_is_opened_again() -> None:
    """A restart or an idle timeout drops the connection: the next call opens a new one
    and goes on (neither a read nor a write fails)."""
    if POSTGRES is None:
        pytest.skip("AGENTSPEC_TEST_POSTGRES_URL is not set (.ci/run starts a server)")
    import psycopg

    url = _fresh_postgres()
    store = FileStore(url)
    files = StoreBackend(lambda: store, namespace("keeper", "notes", "ann"))
    files.write("/a.md", "before")
    for action in (lambda: files.read("/a.md"), lambda: files.write("/a.md", "after")):
        with psycopg.connect(POSTGRES, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)",
                          (store._connection.info.backend_pid,))
        action()
    assert files.read("/a.md") == "after"
    store.close()
