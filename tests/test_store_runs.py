"""`type: store` in whole runs: a file one session writes is read in the next (live objects,
`agentspec run`, the generated package through ADK's AgentLoader), users kept apart or
sharing by `scope`, a composite route and memory through a store, the database taken from
`sessions:` and no secret written into the package (issue 23 item 2)."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentspec.api import SpecError, open_backend
from agentspec.cli import cli
from agentspec.compiler import build_objects, compile_spec, emit_package, write_package
from tests.buildkit import fingerprint, package_loader, project_files, scripted_turn

SPEC = """\
agentspec: 1
name: keeper
sessions: sqlite:///.agentspec/sessions.db
backends:
  notes: {{type: store, scope: {scope}}}
agents:
  keeper:
    model: gemini-2.5-flash
    instruction: Keep notes.
    filesystem: notes
"""


def _app(tmp_path: Path, scope: str = "user", spec: str = SPEC,
         environ: dict[str, str] | None = None) -> Any:
    path = tmp_path / "agent.yaml"
    path.write_text(spec.format(scope=scope))
    compiled = compile_spec(path, environ=environ or {})
    assert compiled.ok, compiled.diagnostics
    app, problems = build_objects(compiled)
    assert problems == []
    return app


def _write(app: Any, user: str, path: str, content: str) -> None:
    said = scripted_turn(app, {"keeper": [
        {"call": "write_file", "args": {"file_path": path, "content": content}},
        {"text": "Saved."}]}, user=user)
    assert "error" not in str(said.results[0][1]), said.results


def _read(app: Any, user: str, path: str) -> str:
    said = scripted_turn(app, {"keeper": [
        {"call": "read_file", "args": {"file_path": path}}, {"text": "Read."}]}, user=user)
    return str(said.results[0][1])


def _rows(tmp_path: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(tmp_path / ".agentspec" / "sessions.db") as db:
        return sorted(db.execute("SELECT namespace, path, content FROM agentspec_files"))


def test_a_file_written_in_one_session_is_read_in_the_next(tmp_path: Path) -> None:
    app = _app(tmp_path)
    _write(app, "ann", "/prefs.md", "Ann drinks tea.")
    # another session (every scripted turn is a fresh one), same user: the file is there
    assert "Ann drinks tea." in _read(app, "ann", "/prefs.md")
    # another user does not see it
    assert "File not found" in _read(app, "bob", "/prefs.md")
    # it lives in the sessions database, beside ADK's tables, in ann's namespace
    assert _rows(tmp_path) == [("app:keeper/backend:notes/user:ann", "/prefs.md",
                                "Ann drinks tea.")]


def test_scope_app_shares_the_files_between_users(tmp_path: Path) -> None:
    app = _app(tmp_path, scope="app")
    _write(app, "ann", "/house-rules.md", "No shouting.")
    assert "No shouting." in _read(app, "bob", "/house-rules.md")


COMPOSITE = """\
agentspec: 1
name: keeper
sessions: sqlite:///.agentspec/sessions.db
backends:
  scratch: {{type: state}}
  longterm: {{type: store, scope: {scope}}}
  front: {{type: composite, default: scratch, routes: {{/memories/: longterm}}}}
agents:
  keeper:
    model: gemini-2.5-flash
    instruction: Keep notes.
    filesystem: front
    memory: [backend:/memories/AGENTS.md]
"""
RULE = "Always answer in French."


def _system(request: Any) -> str:
    text = request.config.system_instruction
    return text if isinstance(text, str) else "".join(p.text or "" for p in text.parts)


def test_memory_through_a_composite_route_to_a_store_outlives_the_session(
        tmp_path: Path) -> None:
    """The agent writes its memory file under the route in one session; the next session's
    first model call has it in the system prompt, with the path to edit it at. Scratch files
    in session state do not outlive the session."""
    app = _app(tmp_path, spec=COMPOSITE)
    said = scripted_turn(app, {"keeper": [
        {"call": "write_file", "args": {"file_path": "/memories/AGENTS.md", "content": RULE}},
        {"call": "write_file", "args": {"file_path": "/draft.md", "content": "scratch"}},
        {"text": "Noted."}]}, user="ann")
    assert RULE not in _system(said.models["keeper"].requests[0])
    later = scripted_turn(app, {"keeper": [
        {"call": "ls", "args": {"path": "/"}}, {"text": "Bonjour."}]}, user="ann")
    first = _system(later.models["keeper"].requests[0])
    assert RULE in first and 'edit_at="/memories/AGENTS.md"' in first
    assert "/draft.md" not in str(later.results[0][1])
    other = scripted_turn(app, {"keeper": [{"text": "Hi."}]}, user="bob")
    assert RULE not in _system(other.models["keeper"].requests[0])


SKILL = "---\nname: haiku\ndescription: Writes haiku.\n---\nCount five, seven, five syllables."


def test_skills_uploaded_to_a_store_are_offered_in_any_session(tmp_path: Path) -> None:
    spec = COMPOSITE.replace("    memory: [backend:/memories/AGENTS.md]\n",
                             "    skills: [backend:/memories/skills]\n")
    (tmp_path / "agent.yaml").write_text(spec.format(scope="app"))
    backend = open_backend(tmp_path / "agent.yaml", "keeper", user_id="admin")
    assert [u.error for u in backend.upload_files(
        [("/memories/skills/haiku/SKILL.md", SKILL.encode())])] == [None]
    app = _app(tmp_path, scope="app", spec=spec)
    said = scripted_turn(app, {"keeper": [
        {"call": "load_skill", "args": {"skill_name": "haiku"}}, {"text": "Ready."}]},
        user="someone")
    assert "Count five, seven, five syllables." in str(said.results[0][1])


def test_open_backend_needs_the_user_of_a_per_user_store(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text(SPEC.format(scope="user"))
    with pytest.raises(SpecError, match="names no user"):
        open_backend(tmp_path / "agent.yaml", "keeper")
    backend = open_backend(tmp_path / "agent.yaml", "keeper", user_id="ann")
    assert backend.upload_files([("/in.md", b"for ann")])[0].error is None
    app = _app(tmp_path)
    assert "for ann" in _read(app, "ann", "/in.md")
    assert [d.content for d in backend.download_files(["/in.md"])] == [b"for ann"]


def _script(tmp_path: Path, name: str, replies: list[dict[str, Any]]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"replies": {"keeper": replies}, "messages": ["Go."]}))
    return path


def test_two_agentspec_runs_of_one_user_share_the_files(tmp_path: Path) -> None:
    """The second run (another conversation) edits the file the first wrote: `edit_file`
    fails on a file it cannot find, so the edited row shows it read the first run's."""
    (tmp_path / "agent.yaml").write_text(SPEC.format(scope="user"))
    first = _script(tmp_path, "one.json", [
        {"call": "write_file", "args": {"file_path": "/log.md", "content": "run one"}},
        {"text": "Wrote."}])
    second = _script(tmp_path, "two.json", [
        {"call": "edit_file", "args": {"file_path": "/log.md", "old_string": "run one",
                                       "new_string": "run one, run two"}},
        {"text": "Edited."}])
    runner = CliRunner()
    for script, conversation in ((first, "a"), (second, "b")):
        result = runner.invoke(cli, ["run", str(tmp_path / "agent.yaml"), "--script",
                                     str(script), "--session-id", conversation],
                               catch_exceptions=False)
        assert result.exit_code == 0, result.output
    assert [row[2] for row in _rows(tmp_path)] == ["run one, run two"]


def test_the_generated_package_keeps_files_in_the_same_database(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A package loaded through ADK's AgentLoader (as `adk web` loads it) writes where the
    live app reads, in another working directory: the SQLite path is the spec's."""
    compiled = compile_spec(_spec(tmp_path), environ={})
    app, _ = build_objects(compiled)
    files = emit_package(compiled, tmp_path / "out")
    assert not write_package(files, tmp_path / "out")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with package_loader(monkeypatch) as load:
        loaded = load(tmp_path / "out", "keeper")
        assert fingerprint(loaded) == fingerprint(app)
        _write(loaded, "ann", "/from-package.md", "written by the package")
    assert "written by the package" in _read(app, "ann", "/from-package.md")
    assert not (elsewhere / ".agentspec").exists()


def _spec(tmp_path: Path) -> Path:
    path = tmp_path / "agent.yaml"
    path.write_text(SPEC.format(scope="user"))
    return path


def test_no_password_is_written_into_the_package(tmp_path: Path) -> None:
    """The password comes from the environment where the package runs: the package holds
    the template, never the value."""
    path = tmp_path / "agent.yaml"
    path.write_text(SPEC.format(scope="user").replace(
        "sessions: sqlite:///.agentspec/sessions.db",
        "sessions: postgresql://agents:${env.PG_FILES_PW}@db.internal/agents"))
    compiled = compile_spec(path, environ={"PG_FILES_PW": "Sup3r-secret"})
    assert compiled.ok, compiled.diagnostics
    files = emit_package(compiled, tmp_path / "out")
    text = "".join(files.values())
    assert "Sup3r-secret" not in text
    assert "postgresql://agents:${env.PG_FILES_PW}@db.internal/agents" in text


POSTGRES = os.environ.get("AGENTSPEC_TEST_POSTGRES_URL")


def test_files_outlive_sessions_on_postgresql(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The spec's `url` names PostgreSQL with its password from the environment."""
    if POSTGRES is None:
        pytest.skip("AGENTSPEC_TEST_POSTGRES_URL is not set (.ci/run starts a server)")
    from urllib.parse import urlsplit

    from tests.test_job_store import _fresh_postgres

    url = _fresh_postgres()
    password = urlsplit(url).password or ""
    monkeypatch.setenv("PG_FILES_PW", password)
    templated = url.replace(f":{password}@", ":${env.PG_FILES_PW}@", 1)
    spec = SPEC.format(scope="user").replace(
        "  notes: {type: store, scope: user}",
        f'  notes: {{type: store, scope: user, url: "{templated}"}}')
    app = _app(tmp_path, spec=spec.replace("{", "{{").replace("}", "}}"),
               environ={"PG_FILES_PW": password})
    _write(app, "ann", "/pg.md", "in PostgreSQL")
    assert "in PostgreSQL" in _read(app, "ann", "/pg.md")
    assert "File not found" in _read(app, "bob", "/pg.md")
    import psycopg

    with psycopg.connect(url) as db:
        rows = db.execute("SELECT namespace, path FROM agentspec_files").fetchall()
    assert rows == [("app:keeper/backend:notes/user:ann", "/pg.md")]


def test_graph_says_when_a_store_is_shared_by_every_user(tmp_path: Path) -> None:
    for scope, shared in (("user", False), ("app", True)):
        (tmp_path / "agent.yaml").write_text(SPEC.format(scope=scope))
        result = CliRunner().invoke(cli, ["graph", str(tmp_path / "agent.yaml")])
        assert result.exit_code == 0, result.output
        assert "backend: notes (store" in result.output
        assert ("shared by every user" in result.output) == shared


def test_validate_names_the_postgres_extra_when_psycopg_is_missing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentspec.validate.check import check
    from agentspec.validate.semantic import stores

    (tmp_path / "agent.yaml").write_text(SPEC.format(scope="user").replace(
        "sessions: sqlite:///.agentspec/sessions.db", "sessions: postgresql://db/agents"))
    assert not [d for d in check(tmp_path / "agent.yaml", environ={}).diagnostics
                if d.code == "AS321"]
    monkeypatch.setattr(stores, "_installed", lambda: False)
    found = [d for d in check(tmp_path / "agent.yaml", environ={}).diagnostics
             if d.code == "AS321"]
    assert len(found) == 1 and "agentspec-adk[postgres]" in (found[0].hint or "")
    assert found[0].span is not None and found[0].span.start.line == 5


def test_agentspec_test_keeps_scenario_files_out_of_the_projects_database(
        tmp_path: Path) -> None:
    """A scenario's writes go to a database of its own, never the spec's sessions file."""
    (tmp_path / "agent.yaml").write_text(SPEC.format(scope="user"))
    (tmp_path / "once.yaml").write_text(json.dumps({
        "messages": ["Save it."],
        "replies": {"keeper": [
            {"call": "write_file", "args": {"file_path": "/once.md", "content": "x"}},
            {"call": "read_file", "args": {"file_path": "/once.md"}},
            {"text": "Saved."}]},
        "expect": {"tools": [{"name": "write_file"}, {"name": "read_file"}],
                   "final": {"contains": "Saved"}}}))
    result = CliRunner().invoke(cli, ["test", str(tmp_path / "agent.yaml"),
                                      str(tmp_path / "once.yaml")])
    assert result.exit_code == 0, result.output
    assert project_files(tmp_path) == []


def test_a_url_from_the_environment_is_read_when_the_database_is_opened(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The package loads without the variable (nothing opens the database then); the first
    file tool call reads it, once: a `$${` in its value stays as it is."""
    path = tmp_path / "agent.yaml"
    path.write_text(SPEC.format(scope="app").replace(
        "  notes: {type: store, scope: app}",
        '  notes: {type: store, scope: app, url: "${env.FILES_DB}"}'))
    compiled = compile_spec(path, environ={"FILES_DB": "sqlite:///x.db"})
    assert compiled.ok, compiled.diagnostics
    files = emit_package(compiled, tmp_path / "out")
    assert not write_package(files, tmp_path / "out")
    monkeypatch.delenv("FILES_DB", raising=False)
    with package_loader(monkeypatch) as load:
        loaded = load(tmp_path / "out", "keeper")
        assert "FILES_DB" in _read(loaded, "ann", "/a.md")  # a tool error naming it
        database = tmp_path / "files$${x}.db"
        monkeypatch.setenv("FILES_DB", f"sqlite:///{database}")
        _write(loaded, "ann", "/a.md", "from the environment")
    assert database.exists()


def test_hostile_calls_are_tool_errors_the_run_goes_on_after(tmp_path: Path) -> None:
    from agentspec.runtime.backends.store import MAX_FILE_BYTES

    app = _app(tmp_path)
    said = scripted_turn(app, {"keeper": [
        {"call": "write_file", "args": {"file_path": "/../../etc/x", "content": "x"}},
        {"call": "write_file", "args": {"file_path": "/a\x00b", "content": "x"}},
        {"call": "write_file", "args": {"file_path": "/big.md",
                                        "content": "x" * (MAX_FILE_BYTES + 1)}},
        {"call": "write_file", "args": {"file_path": "/nul.md", "content": "a\x00b"}},
        {"call": "read_file", "args": {"file_path": "/" + "d/" * 3000 + "f"}},
        {"text": "Still here."}]}, user="ann")
    assert len(said.results) == 5
    assert all("error" in response for _, response in said.results), said.results
    assert said.said[-1][1] == "Still here."
    assert not (tmp_path / ".agentspec" / "sessions.db").exists() or _rows(tmp_path) == []
