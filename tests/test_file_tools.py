"""The file tools: declarations, formats, and runs inside ADK agents with a scripted model."""

from __future__ import annotations

import asyncio
import inspect
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.runners import InMemoryRunner, Runner
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from agentspec.runtime.backends import Backend, BackendError, GrepMatch
from agentspec.runtime.backends.filesystem import FilesystemBackend
from agentspec.runtime.backends.state import StateBackend
from agentspec.runtime.harness.files import FILE_TOOL_NAMES, make_file_tools
from agentspec.runtime.harness.results import result_limit_callback
from agentspec.testing.scripted import install_script
from tests.spec_defaults import spec_shell


def _state_factory(ctx: ToolContext) -> Backend:
    return StateBackend(ctx.state)


def test_declarations() -> None:
    tools = make_file_tools(_state_factory, FILE_TOOL_NAMES)
    decls = {t.name: t._get_declaration() for t in tools}
    assert list(decls) == list(FILE_TOOL_NAMES)
    schemas: dict[str, Any] = {n: d.parameters_json_schema for n, d in decls.items() if d}
    assert schemas["read_file"]["required"] == ["file_path"]
    assert set(schemas["read_file"]["properties"]) == {"file_path", "offset", "limit"}
    assert set(schemas["grep"]["properties"]) == {"pattern", "path", "glob", "output_mode"}
    assert schemas["edit_file"]["required"] == ["file_path", "old_string", "new_string"]
    assert all("tool_context" not in s["properties"] for s in schemas.values())
    assert all(d and d.description and "Args:" in d.description for d in decls.values())
    with pytest.raises(ValueError, match="unknown file tool"):
        make_file_tools(_state_factory, ["rm_rf"])


async def _call(tool: Any, backend: Backend, **args: Any) -> Any:
    fn = tool.func
    result = fn(tool_context=None, **args)
    return await result if asyncio.iscoroutine(result) else result


def _tools(backend: Backend) -> dict[str, Any]:
    return {t.name: t for t in make_file_tools(lambda ctx: backend)}


def test_read_file_format_and_limits(tmp_path: Path) -> None:
    backend = FilesystemBackend(tmp_path)
    tools = _tools(backend)
    backend.write("/f.txt", "one\ntwo\n" + "x" * 2500 + "\nfour\n")
    out = asyncio.run(_call(tools["read_file"], backend, file_path="/f.txt"))
    lines = out.splitlines()
    assert lines[0] == "     1\tone" and lines[1] == "     2\ttwo"
    assert lines[2].endswith("... [line cut at 2000 characters]") and len(lines[2]) < 2100
    assert lines[3] == "     4\tfour"
    window = asyncio.run(_call(tools["read_file"], backend, file_path="/f.txt", offset=1, limit=1))
    assert window.splitlines()[0] == "     2\ttwo" and "offset=2" in window
    past = asyncio.run(_call(tools["read_file"], backend, file_path="/f.txt", offset=10))
    assert "past the end" in past and "4 lines" in past
    backend.write("/empty.txt", "")
    assert "empty" in asyncio.run(_call(tools["read_file"], backend, file_path="/empty.txt"))
    err = asyncio.run(_call(tools["read_file"], backend, file_path="/../etc/passwd"))
    assert set(err) == {"error"} and "above" in err["error"]


def test_other_tools(tmp_path: Path) -> None:
    backend = spec_shell(tmp_path, timeout=10)
    tools = _tools(backend)

    def run(name: str, **args: Any) -> Any:
        return asyncio.run(_call(tools[name], backend, **args))

    assert run("write_file", file_path="/src/a.py", content="def f():\n    pass\n")["status"] \
        == "ok"
    run("write_file", file_path="/src/b.py", content="def g():\n")
    assert run("ls", path="/") == "/src/"
    assert run("ls", path="/src").splitlines() == ["/src/a.py (18 bytes)", "/src/b.py (9 bytes)"]
    assert run("glob", pattern="**/*.py").splitlines() == ["/src/a.py", "/src/b.py"]
    assert "No files" in run("glob", pattern="*.rs")
    assert run("grep", pattern="def").splitlines() == ["/src/a.py", "/src/b.py"]
    assert run("grep", pattern="def", output_mode="content").splitlines() == [
        "/src/a.py:1: def f():", "/src/b.py:1: def g():"]
    assert run("grep", pattern="(", output_mode="count").splitlines() == [
        "/src/a.py: 1", "/src/b.py: 1"]  # literal text: "(" is no regular expression
    assert "No matches" in run("grep", pattern="def|pass")
    assert "error" in run("grep", pattern="x", output_mode="bogus")
    assert "error" in run("edit_file", file_path="/src/a.py", old_string="nope", new_string="")
    done = run("execute", command="cat src/b.py; exit 2")
    assert done == {"output": "def g():\n", "exit_code": 2, "truncated": False,
                    "timed_out": False}
    no_shell = _tools(StateBackend({}))
    assert "cannot run" in asyncio.run(_call(no_shell["execute"], backend, command="ls"))["error"]


async def _turn(runner: Runner, session_id: str, text: str) -> list[Any]:
    responses = []
    async for event in runner.run_async(user_id="u", session_id=session_id,
                                        new_message=types.Content(role="user",
                                                                  parts=[types.Part(text=text)])):
        for part in (event.content.parts if event.content else None) or []:
            if part.function_response:
                responses.append(part.function_response.response)
    return responses


def _agent(factory: Any) -> LlmAgent:
    return LlmAgent(name="worker", model="scripted", instruction="Work with files.",
                    tools=list(make_file_tools(factory, FILE_TOOL_NAMES)))


def test_write_edit_read_in_an_agent() -> None:
    agent = _agent(_state_factory)
    models = install_script(agent, {"worker": [
        {"call": "write_file", "args": {"file_path": "/todo.md", "content": "- [ ] a\n- [ ] b\n"}},
        {"call": "edit_file", "args": {"file_path": "/todo.md", "old_string": "- [ ] a",
                                       "new_string": "- [x] a"}},
        {"call": "read_file", "args": {"file_path": "/todo.md"}},
        {"text": "done"}]})

    async def main() -> tuple[list[Any], Any]:
        runner = InMemoryRunner(agent=agent, app_name="files")
        session = await runner.session_service.create_session(app_name="files", user_id="u")
        responses = await _turn(runner, session.id, "go")
        stored = await runner.session_service.get_session(app_name="files", user_id="u",
                                                          session_id=session.id)
        return responses, stored

    responses, stored = asyncio.run(main())
    assert responses[0]["status"] == "ok" and responses[1]["replacements"] == 1
    assert responses[2] == {"result": "     1\t- [x] a\n     2\t- [ ] b"}
    assert stored.state["agentspec:files"]["/todo.md"]["content"] == "- [x] a\n- [ ] b\n"
    declared = [fd.name for t in models["worker"].requests[0].config.tools
                for fd in t.function_declarations]
    assert declared == list(FILE_TOOL_NAMES)


def test_state_files_persist_in_sqlite(tmp_path: Path) -> None:
    db = str(tmp_path / "sessions.db")

    async def write() -> str:
        agent = _agent(_state_factory)
        install_script(agent, {"worker": [
            {"call": "write_file", "args": {"file_path": "/notes/a.md", "content": "kept"}},
            {"text": "ok"}]})
        service = SqliteSessionService(db)
        runner = Runner(agent=agent, app_name="files", session_service=service)
        session = await service.create_session(app_name="files", user_id="u")
        await _turn(runner, session.id, "write")
        return session.id

    async def read(session_id: str) -> list[Any]:
        agent = _agent(_state_factory)
        install_script(agent, {"worker": [
            {"call": "read_file", "args": {"file_path": "/notes/a.md"}}, {"text": "ok"}]})
        service = SqliteSessionService(db)
        session = await service.get_session(app_name="files", user_id="u",
                                            session_id=session_id)
        assert session is not None
        assert session.state["agentspec:files"]["/notes/a.md"]["content"] == "kept"
        runner = Runner(agent=agent, app_name="files", session_service=service)
        return await _turn(runner, session_id, "read")

    session_id = asyncio.run(write())
    assert asyncio.run(read(session_id)) == [{"result": "     1\tkept"}]


# -- regressions: the event loop, pattern and output limits, saving large results ------------

class _GatedBackend(StateBackend):
    """A backend whose glob and grep say they started (`waiting`), then wait until the event
    loop sets `gate`: they deadlock (and time out) when a tool runs them on the event loop
    instead of a worker thread."""

    def __init__(self) -> None:
        super().__init__({})
        self.waiting = threading.Event()
        self.gate = threading.Event()

    def _wait(self) -> None:
        self.waiting.set()
        if not self.gate.wait(60):
            raise TimeoutError("the event loop was blocked")

    def glob(self, pattern: str, path: str = "/") -> list[str]:
        self._wait()
        return super().glob(pattern, path)

    def grep(self, pattern: str, path: str = "/", glob: str | None = None) -> list[GrepMatch]:
        self._wait()
        return super().grep(pattern, path, glob)


def test_tools_run_off_the_event_loop() -> None:
    tools = make_file_tools(_state_factory, FILE_TOOL_NAMES)
    assert all(inspect.iscoroutinefunction(t.func) for t in tools)
    backend = _GatedBackend()
    backend.write("/a.txt", "hit\n")
    bound = _tools(backend)

    async def main(name: str, **args: Any) -> Any:
        task = asyncio.create_task(_call(bound[name], backend, **args))
        # the loop gets here again only if the tool is not blocking it
        await asyncio.to_thread(backend.waiting.wait, 60)
        backend.gate.set()
        result = await task
        backend.gate.clear()
        backend.waiting.clear()
        return result

    assert asyncio.run(main("grep", pattern="hit")) == "/a.txt"
    assert asyncio.run(main("glob", pattern="*.txt")) == "/a.txt"


def test_pattern_limits_and_wildcard_runs() -> None:
    backend = StateBackend({})
    backend.write("/" + "/".join(["d"] * 40) + "/f", "x")
    backend.write("/" + "a" * 200, "aaaa")
    tools = _tools(backend)

    def run(name: str, **args: Any) -> Any:
        return asyncio.run(_call(tools[name], backend, **args))

    assert "No files" in run("glob", pattern="**/" * 12 + "zz")
    assert "No files" in run("glob", pattern="*" * 40 + "b")
    assert "No matches" in run("grep", pattern="a", glob="**/" * 12 + "zz")
    assert run("glob", pattern="**/**/f").endswith("/d/f")
    assert run("glob", pattern="***").count("\n") == 1  # still `**`: crosses directories
    for name, arg in (("glob", "pattern"), ("grep", "pattern"), ("grep", "glob")):
        args = {"pattern": "a", arg: "a" * 501}
        assert "limit is 500" in run(name, **args)["error"]


def test_read_file_output_is_bounded() -> None:
    backend = StateBackend({})
    backend.write("/wide.txt", ("x" * 1999 + "\n") * 300)
    backend.write("/long.txt", "y\n" * 3000)
    tools = _tools(backend)

    def read(**args: Any) -> Any:
        return asyncio.run(_call(tools["read_file"], backend, **args))

    wide = read(file_path="/wide.txt")
    assert len(wide) <= 100_000
    last = wide.splitlines()[-1]
    shown = len(wide.splitlines()) - 1
    assert "cut at 100,000 characters" in last and f"offset={shown}" in last
    assert read(file_path="/wide.txt", offset=shown).startswith(f"{shown + 1:6d}\t")
    long = read(file_path="/long.txt", limit=10**9).splitlines()
    assert len(long) == 2001 and "offset=2000" in long[-1]
    # deepagents' default window: 100 lines, then where to read on
    default = read(file_path="/long.txt").splitlines()
    assert len(default) == 101 and default[99] == "   100\ty"
    assert default[-1] == "... [2900 more lines; read on with offset=100]"


class _FailingBackend(StateBackend):
    def write(self, path: str, content: str) -> None:
        raise BackendError("disk full")


class _Context:
    function_call_id = "call-1"
    user_id = "u"

    def __init__(self, fail: bool = False) -> None:
        self.state: dict[str, Any] = {}
        self.fail = fail
        self.saved: dict[str, types.Part] = {}

    async def save_artifact(self, name: str, part: types.Part) -> int:
        if self.fail:
            raise RuntimeError("no artifact service")
        self.saved[name] = part
        return 0


def test_result_limit_saves_or_degrades() -> None:
    tool = SimpleNamespace(name="grep")
    big = {"result": "é" * 50 + "\ud800" + "z" * 100}
    store = StateBackend({})
    saved = asyncio.run(result_limit_callback(10, lambda ctx: store)(
        tool, {}, _Context(), big))  # type: ignore[arg-type]
    text = store.read(saved["saved_to"])
    assert "é" * 50 in text and "\ud800" not in text and "?" in text
    for callback, context in (
            (result_limit_callback(10, lambda ctx: _FailingBackend({})), _Context()),
            (result_limit_callback(10), _Context(fail=True))):
        out = asyncio.run(callback(tool, {}, context, big))  # type: ignore[arg-type]
        assert out is not None and "could not be saved" in out["not_saved"]
        assert out["preview"].startswith('{"result": "éé') and "saved_to" not in out
    context = _Context()
    out = asyncio.run(result_limit_callback(10)(tool, {}, context, big))  # type: ignore[arg-type]
    assert out is not None and list(context.saved) == [out["saved_as_artifact"]]
    assert asyncio.run(result_limit_callback(10)(
        tool, {}, _Context(), "short")) is None  # type: ignore[arg-type]
