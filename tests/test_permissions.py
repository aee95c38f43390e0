"""Path permissions on backends (`read` / `write` globs): what the file tools may reach, the
error the model sees, composites applying their own lists and their routes', and a spec's
lists reaching the runtime through the contract."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agentspec.contract.backends import from_data, to_data
from agentspec.runtime.backends import BackendError, ShellCapable
from agentspec.runtime.backends.permissions import Permitted, allowed, permitted
from agentspec.runtime.backends.state import StateBackend
from agentspec.runtime.harness.files import make_file_tools
from agentspec.runtime.harness.filesystem import backend_factory
from tests.spec_defaults import spec_shell


def _files() -> StateBackend:
    backend = StateBackend({})
    for path in ("/docs/a.md", "/docs/deep/b.md", "/secret.txt", "/out/r.txt"):
        backend.write(path, f"text of {path}\n")
    return backend


def test_globs_match_whole_rooted_paths() -> None:
    assert allowed(None, "/anything")
    assert allowed(("/docs/**",), "/docs/a/b.md") and not allowed(("/docs/**",), "/docsx/a")
    assert allowed(("/*.md",), "/a.md") and not allowed(("/*.md",), "/d/a.md")  # not by name
    assert allowed(("/**/*.md",), "/d/e/a.md") and not allowed((), "/a.md")
    assert allowed(("/a/**",), "/a/../a/x")  # normalized first
    assert not allowed(("/a/**",), "/a/../b/x")


def test_reading_outside_read_is_an_error_naming_the_path_and_the_rule() -> None:
    guarded = Permitted(_files(), "work", ("/docs/**",), None)
    assert guarded.read("/docs/a.md") == "text of /docs/a.md\n"
    with pytest.raises(BackendError) as denied:
        guarded.read("/secret.txt")
    message = str(denied.value)
    assert "/secret.txt" in message and "`/docs/**`" in message and "`read`" in message
    assert "`work`" in message
    assert [e.path for e in guarded.ls("/")] == ["/docs", "/out"]  # directories stay
    assert guarded.glob("**") == ["/docs/a.md", "/docs/deep/b.md"]
    assert {m.path for m in guarded.grep("text")} == {"/docs/a.md", "/docs/deep/b.md"}
    guarded.write("/secret.txt", "overwritten")  # no `write` list: every path


def test_writing_outside_write_is_an_error_and_edit_needs_both() -> None:
    inner = _files()
    guarded = Permitted(inner, "work", ("/docs/**", "/out/**"), ("/out/**",))
    guarded.write("/out/new.txt", "ok")
    with pytest.raises(BackendError, match=r"Writing /docs/a.md is not allowed.*`/out/\*\*`"):
        guarded.write("/docs/a.md", "changed")
    with pytest.raises(BackendError, match="Writing /docs/a.md"):
        guarded.edit("/docs/a.md", "text", "TEXT")
    with pytest.raises(BackendError, match="Reading /secret.txt"):
        guarded.edit("/secret.txt", "text", "TEXT")
    assert guarded.edit("/out/r.txt", "text", "TEXT") == 1
    assert inner.read("/docs/a.md") == "text of /docs/a.md\n"
    read_only = Permitted(inner, "work", None, ())
    with pytest.raises(BackendError, match="write only nothing"):
        read_only.write("/x", "y")


def test_execute_passes_through_and_no_lists_means_no_wrapper(tmp_path: Path) -> None:
    shell = spec_shell(tmp_path, timeout=10)
    assert permitted(shell, "box", None, None) is shell
    guarded = permitted(shell, "box", ("/docs/**",), ())
    assert isinstance(guarded, ShellCapable)
    assert guarded.execute("echo hi").output == "hi\n"


def _definitions(**backends: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Definitions as a generated package passes them (through the typed contract)."""
    return {name: to_data(from_data(data)) for name, data in backends.items()}


def _call(factory: Any, name: str, **args: Any) -> Any:
    tool = next(t for t in make_file_tools(factory) if t.name == name)
    context = SimpleNamespace(state={}, user_id="u")
    return asyncio.run(tool.func(tool_context=context, **args)) \
        if asyncio.iscoroutinefunction(tool.func) else tool.func(tool_context=context, **args)


def test_a_spec_s_lists_reach_the_file_tools_through_a_composite(tmp_path: Path) -> None:
    """The composite checks the paths its agents see; the route's backend checks its own
    (re-rooted) paths; a denied call is a tool error the model reads."""
    (tmp_path / "work" / "docs").mkdir(parents=True)
    (tmp_path / "work" / "docs" / "a.md").write_text("hello\n")
    (tmp_path / "work" / "private.txt").write_text("no\n")
    definitions = _definitions(
        work={"type": "filesystem", "root": str(tmp_path / "work"), "read": ["/docs/**"],
              "write": ["/out/**", "/large_tool_results/**"]},
        scratch={"type": "state"},
        front={"type": "composite", "default": "scratch", "routes": {"/project/": "work"},
               "write": ["/project/**"]})
    factory = backend_factory("front", definitions)
    assert "hello" in _call(factory, "read_file", file_path="/project/docs/a.md")
    denied = _call(factory, "read_file", file_path="/project/private.txt")
    assert set(denied) == {"error"} and "/private.txt" in denied["error"] and \
        "`/docs/**`" in denied["error"] and "`work`" in denied["error"]
    scratch = _call(factory, "write_file", file_path="/notes.md", content="x")
    assert "/notes.md" in scratch["error"] and "`front`" in scratch["error"]
    inner = _call(factory, "write_file", file_path="/project/docs/b.md", content="x")
    assert "/docs/b.md" in inner["error"] and "`/out/**`" in inner["error"]
    assert _call(factory, "write_file", file_path="/project/out/b.md", content="x")[
        "status"] == "ok"
    assert (tmp_path / "work" / "out" / "b.md").read_text() == "x"
    assert "private" not in _call(factory, "glob", pattern="**")


PERMISSIONS_SPEC = """\
agentspec: 1
name: guarded_app
backends:
  work: {type: filesystem, root: ./work, read: [/docs/**, /out/**], write: [/out/**]}
agents:
  helper:
    model: gemini-2.5-flash
    instruction: Use the files.
    filesystem: work
"""
PERMISSIONS_REPLIES = {"helper": [
    {"call": "read_file", "args": {"file_path": "/docs/a.md"}},
    {"call": "read_file", "args": {"file_path": "/secret.txt"}},
    {"call": "write_file", "args": {"file_path": "/docs/a.md", "content": "changed"}},
    {"call": "write_file", "args": {"file_path": "/out/r.md", "content": "report"}},
    {"text": "Done."}]}


@pytest.mark.parametrize("through", ["memory", "package"])
def test_the_built_agent_enforces_the_spec_s_permissions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, through: str) -> None:
    """Live objects and the generated package both carry `read` / `write` to the tools."""
    from agentspec.compiler import build_objects, compile_spec, emit_package, write_package
    from tests.buildkit import package_loader
    from tests.test_harness_build import _turn

    (tmp_path / "work" / "docs").mkdir(parents=True)
    (tmp_path / "work" / "docs" / "a.md").write_text("the docs\n")
    (tmp_path / "work" / "secret.txt").write_text("hidden\n")
    (tmp_path / "spec.yaml").write_text(PERMISSIONS_SPEC)
    compiled = compile_spec(tmp_path / "spec.yaml", environ={})
    assert compiled.ok, compiled.diagnostics
    if through == "memory":
        app, problems = build_objects(compiled)
        assert problems == []
        turn = asyncio.run(_turn(app, PERMISSIONS_REPLIES, "Work"))
    else:
        out = tmp_path / "out"
        assert write_package(emit_package(compiled, out), out) == []
        assert "'read': ['/docs/**', '/out/**']" in \
            (out / "guarded_app" / "agent.py").read_text()
        with package_loader(monkeypatch) as load:
            turn = asyncio.run(_turn(load(out, "guarded_app"), PERMISSIONS_REPLIES, "Work"))
    results = turn.results
    assert "the docs" in str(results[0])
    assert "Reading /secret.txt is not allowed" in results[1]["error"]
    assert "Writing /docs/a.md is not allowed" in results[2]["error"]
    assert results[3]["status"] == "ok"
    assert (tmp_path / "work" / "docs" / "a.md").read_text() == "the docs\n"
    assert (tmp_path / "work" / "out" / "r.md").read_text() == "report"


MEMORY_SPEC = """\
agentspec: 1
name: desk
backends:
  work: {{type: filesystem, root: ./work, write: {write}}}
agents:
  lead:
    model: gemini-2.5-flash
    instruction: Keep notes.
    filesystem: work
    memory: [./work/notes/AGENTS.md]
"""


@pytest.mark.parametrize(("write", "edit_at"), [
    ("[/notes/**]", "/notes/AGENTS.md"), ("[/out/**]", None), ("[]", None)])
def test_a_memory_file_outside_write_is_shown_read_only(
        tmp_path: Path, write: str, edit_at: str | None) -> None:
    """The prompt never tells the model to edit a file its tools may not write."""
    from agentspec.compiler import compile_spec
    from agentspec.ir.tree import LlmFields

    (tmp_path / "work" / "notes").mkdir(parents=True)
    (tmp_path / "work" / "notes" / "AGENTS.md").write_text("# Notes\n")
    (tmp_path / "spec.yaml").write_text(MEMORY_SPEC.format(write=write))
    compiled = compile_spec(tmp_path / "spec.yaml", environ={})
    assert compiled.ok and compiled.app is not None, compiled.diagnostics
    root = compiled.app.root
    assert isinstance(root, LlmFields) and root.memory_edit_at == (edit_at,)


def test_a_long_list_is_compiled_once_not_per_path() -> None:
    """A `read` list of more globs than the compiled-pattern cache holds (64) was compiled
    again for every path judged (the cache evicting each glob before its next use): 2,000
    paths took seconds instead of a tenth, outside the call's glob budget, per `ls`, `glob`
    or `grep`. The list is compiled once."""
    from agentspec.contract.globs import GlobBudget, compile_glob, permits

    globs = tuple(f"/area{i}/**/*.md" for i in range(100))
    compile_glob.cache_clear()
    budget = GlobBudget()
    judged = [permits(globs, f"/area{i * 3}/f{i}.md", budget) for i in range(50)]
    assert judged == [i * 3 < 100 for i in range(50)]  # the later ones try every glob
    assert compile_glob.cache_info().misses <= len(globs)
