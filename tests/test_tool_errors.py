"""`tool_errors` (issue 11): a python or MCP tool that raises answers the model with
`{"error": "<type>: <message>"}` and the turn goes on, in memory, through the generated
package and in `agentspec run`; `tool_errors: raise` (on an agent, in `defaults`, for a
planner's workers) fails the run instead; `callbacks.on_tool_error` still decides first."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentspec.cli import cli
from agentspec.compiler import build_objects, compile_spec, emit_package, write_package
from agentspec.review.graph import graph
from tests.buildkit import package_loader, scripted_turn

# ADK's MCP client keeps the sys.stderr of its first import as every server's stderr;
# imported first inside a CliRunner (`agentspec test` stands in for MCP servers), that one is
# closed by the time a test here starts a real server, which then dies at once
with contextlib.suppress(ImportError):  # the `mcp` extra is optional
    import google.adk.tools.mcp_tool.mcp_toolset  # noqa: F401

TOOLS = '''\
def population(city: str) -> dict:
    """How many people live in a city."""
    raise LookupError(f"no city called {city}")


def fallback(tool, args, tool_context, error):
    return {"population": "unknown", "why": str(error)}
'''
SPEC = """\
    agentspec: 1
    name: towns
    root: guide
    {defaults}
    tools:
      population: {{python: town_tools:population}}
    agents:
      guide:
        model: gemini-2.5-flash
        instruction: Answer with the population.
        tools: [population]
        {setting}
    """
REPLIES = {"guide": [{"call": "population", "args": {"city": "Atlantis"}},
                     {"when": "no city called Atlantis", "text": "Atlantis does not exist."}]}
ERROR = {"error": "LookupError: no city called Atlantis"}


def _spec(tmp_path: Path, setting: str = "", defaults: str = "") -> Path:
    (tmp_path / "town_tools.py").write_text(TOOLS)
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(SPEC.format(setting=setting, defaults=defaults)))
    return path


def _app(path: Path) -> Any:
    compiled = compile_spec(path, environ={})
    assert compiled.ok, [(d.code, d.message) for d in compiled.diagnostics]
    app, problems = build_objects(compiled)
    assert problems == []
    return app


def test_a_tool_that_raises_answers_the_model_and_the_turn_goes_on(tmp_path: Path) -> None:
    turn = scripted_turn(_app(_spec(tmp_path)), REPLIES, "How many live in Atlantis?")
    assert turn.results == [("population", ERROR)]
    assert turn.said[-1] == ("guide", "Atlantis does not exist.")
    second = turn.models["guide"].requests[1].contents[-1].parts[0].function_response
    assert second.response == ERROR  # what the model saw


def test_through_the_generated_package(tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = compile_spec(_spec(tmp_path), environ={})
    out = tmp_path / "out"
    assert write_package(emit_package(compiled, out), out) == []
    assert "on_tool_error_callback=[error_result]" in (out / "towns" / "agent.py").read_text()
    with package_loader(monkeypatch) as load:
        turn = scripted_turn(load(out, "towns"), REPLIES, "How many live in Atlantis?")
    assert turn.results == [("population", ERROR)]


def test_agentspec_run_shows_the_error(tmp_path: Path) -> None:
    path = _spec(tmp_path)
    (tmp_path / "script.yaml").write_text(
        "messages: [How many live in Atlantis?]\nreplies:\n  guide:\n"
        "    - {call: population, args: {city: Atlantis}}\n"
        "    - {text: Atlantis does not exist.}\n")
    done = CliRunner().invoke(cli, ["run", str(path), "--script", str(tmp_path / "script.yaml")])
    assert done.exit_code == 0, done.output
    assert "[guide] population returned {'error': 'LookupError: no city called Atlantis'}" \
        in done.stdout
    assert done.stdout.splitlines()[-1] == "[guide] Atlantis does not exist."


@pytest.mark.parametrize(("setting", "defaults"), [("tool_errors: raise", ""),
                                                   ("", "defaults: {tool_errors: raise}")])
def test_raise_fails_the_run(tmp_path: Path, setting: str, defaults: str) -> None:
    app = _app(_spec(tmp_path, setting, defaults))
    assert app.root_agent.on_tool_error_callback is None
    with pytest.raises(LookupError, match="no city called Atlantis"):
        scripted_turn(app, REPLIES, "How many live in Atlantis?")
    assert "tool errors: raise" in graph(compile_spec(tmp_path / "spec.yaml",
                                                      environ={}).app).nodes["guide"]


def test_the_specs_own_on_tool_error_decides_first(tmp_path: Path) -> None:
    app = _app(_spec(tmp_path, "callbacks: {on_tool_error: [town_tools:fallback]}"))
    replies = {"guide": [REPLIES["guide"][0], {"text": "Nobody knows."}]}
    turn = scripted_turn(app, replies, "How many live in Atlantis?")
    assert turn.results == [("population", {"population": "unknown",
                                            "why": "no city called Atlantis"})]


def test_a_planners_workers_return_errors_too_unless_told_to_raise(tmp_path: Path) -> None:
    (tmp_path / "town_tools.py").write_text(TOOLS)
    planner = textwrap.dedent("""\
        agentspec: 1
        name: towns
        root: plan
        tools:
          population: {python: town_tools:population}
        agents:
          plan:
            kind: planner
            model: gemini-2.5-flash
            worker: {tools: [population]SETTING}
        """)
    replies = {"plan_planner": [{"text": '{"kind": "llm", "subtasks": []}'}],
               "plan_worker": REPLIES["guide"]}
    (tmp_path / "spec.yaml").write_text(planner.replace("SETTING", ""))
    turn = scripted_turn(_app(tmp_path / "spec.yaml"), replies, "Atlantis?")
    assert turn.results == [("population", ERROR)]
    (tmp_path / "spec.yaml").write_text(planner.replace("SETTING", ", tool_errors: raise"))
    with pytest.raises(LookupError):
        scripted_turn(_app(tmp_path / "spec.yaml"), replies, "Atlantis?")


SERVER = textwrap.dedent("""\
    try:  # mcp 2.x
        from mcp.server.mcpserver import MCPServer as Server
    except ImportError:  # mcp 1.x
        from mcp.server.fastmcp import FastMCP as Server

    server = Server("calc")

    @server.tool()
    def divide(a: int, b: int) -> float:
        '''Divides a by b.'''
        return a / b

    server.run()
    """)


@pytest.mark.parametrize("setting", ["", "tool_errors: raise"])
def test_an_mcp_tool_that_fails(tmp_path: Path, setting: str) -> None:
    pytest.importorskip("mcp")
    (tmp_path / "calc_server.py").write_text(SERVER)
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(f"""\
        agentspec: 1
        name: calc_app
        tools:
          calc: {{mcp: {{command: {sys.executable!r}, args: [calc_server.py], cwd: ., timeout: 30}},
                 filter: [divide]}}
        agents:
          divider:
            model: gemini-2.5-flash
            instruction: Divide.
            tools: [calc]
            {setting}
        """))
    app = _app(tmp_path / "spec.yaml")
    replies = {"divider": [{"call": "divide", "args": {"a": 1, "b": 0}},
                           {"text": "Not possible."}]}

    async def close() -> None:
        for tool in app.root_agent.tools:
            await tool.close()

    try:
        if setting:
            with pytest.raises(Exception, match="divide: Error executing tool divide"):
                scripted_turn(app, replies, "1/0?")
            return
        turn = scripted_turn(app, replies, "1/0?")
        assert turn.results == [("divide", {"error": "Error executing tool divide"})]
        assert turn.said[-1] == ("divider", "Not possible.")
    finally:
        asyncio.run(close())
