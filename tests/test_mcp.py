"""MCP tools end to end: a real stdio MCP server, through both emitters, offline."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest

from agentspec.compiler import build_objects, compile_spec, emit_package, write_package
from agentspec.testing.scripted import install_script

SERVER = textwrap.dedent("""\
    try:  # mcp 2.x
        from mcp.server.mcpserver import MCPServer as Server
    except ImportError:  # mcp 1.x
        from mcp.server.fastmcp import FastMCP as Server

    server = Server("calc")

    @server.tool()
    def add(a: int, b: int) -> int:
        '''Adds two numbers.'''
        return a + b

    @server.tool()
    def wipe_disk() -> str:
        '''A tool the spec filters out.'''
        return "wiped"

    server.run()
    """)


@pytest.fixture
def calc_spec(tmp_path: Path) -> Path:
    pytest.importorskip("mcp")
    (tmp_path / "servers").mkdir()
    (tmp_path / "servers" / "calc_server.py").write_text(SERVER)
    spec = tmp_path / "spec.yaml"
    spec.write_text(textwrap.dedent(f"""\
        agentspec: 1
        name: calc_app
        tools:
          calc:
            mcp: {{command: {sys.executable!r}, args: [calc_server.py], cwd: servers, timeout: 30}}
            filter: [add]
            prefix: calc
        agents:
          adder:
            model: gemini-2.5-flash
            instruction: Add the numbers the user gives.
            tools: [calc]
        """))
    return spec


async def _ask(app: object, replies: dict[str, list[dict[str, object]]]) -> list[str]:
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    models = install_script(app.root_agent, replies)  # type: ignore[attr-defined]
    runner = InMemoryRunner(app=app)  # type: ignore[arg-type]
    session = await runner.session_service.create_session(app_name="calc_app", user_id="u")
    seen = []
    try:
        async for event in runner.run_async(
                user_id="u", session_id=session.id,
                new_message=types.Content(role="user", parts=[types.Part(text="2+3?")])):
            for part in event.content.parts if event.content else ():
                if part.function_response:
                    seen.append(f"{part.function_response.name} -> "
                                f"{part.function_response.response}")
    finally:
        await runner.close()
    tools = [d.name for t in models["adder"].requests[0].config.tools
             for d in t.function_declarations]
    return [*seen, f"declared {tools}"]


REPLIES = {"adder": [{"call": "calc_add", "args": {"a": 2, "b": 3}}, {"text": "5"}]}


def test_mcp_tool_runs_in_memory_with_filter_prefix_and_cwd(calc_spec: Path) -> None:
    compiled = compile_spec(calc_spec, environ={})
    assert compiled.ok, compiled.diagnostics
    app, problems = build_objects(compiled)
    assert problems == []
    seen = asyncio.run(_ask(app, REPLIES))
    assert any(line.startswith("calc_add -> ") and "5" in line for line in seen), seen
    assert seen[-1] == "declared ['calc_add']"  # the filter kept `add` only, prefixed


@pytest.mark.slow
def test_mcp_tool_runs_through_the_generated_package(calc_spec: Path, tmp_path: Path) -> None:
    compiled = compile_spec(calc_spec, environ={})
    out = tmp_path / "out"
    assert write_package(emit_package(compiled, out), out) == []
    text = (out / "calc_app" / "agent.py").read_text()
    assert "spec_path('servers')" in text  # the server's cwd stays relative to the spec
    sys.path.insert(0, str(out))
    try:
        import importlib

        module = importlib.import_module("calc_app.agent")
        seen = asyncio.run(_ask(module.app, REPLIES))
    finally:
        for name in [m for m in sys.modules if m == "calc_app" or m.startswith("calc_app.")]:
            del sys.modules[name]
    assert any(line.startswith("calc_add -> ") and "5" in line for line in seen), seen
