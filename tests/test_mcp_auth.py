"""A remote MCP server's `auth` against a live streamable-HTTP MCP server on loopback that
requires a bearer token or an API key: the agent's call reaches it with the credential, and
without the right one the model reads an error naming the server (never the secret)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agentspec.compiler import build_objects, compile_spec
from tests.buildkit import approved_turn, scripted_turn, service_account_key

pytest.importorskip("mcp")
uvicorn = pytest.importorskip("uvicorn")

TOKEN = "mcp-t0ken-from-env"


@dataclass
class Server:
    url: str
    seen: list[dict[str, str]] = field(default_factory=list)  # headers of each request
    calls: list[tuple[int, int]] = field(default_factory=list)  # what `add` ran with


@pytest.fixture
def server() -> Iterator[Server]:
    """A calculator MCP server (streamable HTTP, port 0) refusing, with a 401, any request
    without `Authorization: Bearer TOKEN` or `X-Api-Key: TOKEN`."""
    try:  # mcp 2.x
        from mcp.server.mcpserver import MCPServer as McpServer
    except ImportError:  # mcp 1.x
        from mcp.server.fastmcp import FastMCP as McpServer

    found = Server("")
    calc = McpServer("calc")

    @calc.tool()
    def add(a: int, b: int) -> int:
        """Adds two numbers."""
        found.calls.append((a, b))
        return a + b

    inner = calc.streamable_http_app(stateless_http=True, json_response=True)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/token":  # a service account's
            body = json.dumps({"access_token": TOKEN, "expires_in": 3600}).encode()
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": body})
            return
        if scope["type"] == "http":
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            found.seen.append(headers)
            if f"Bearer {TOKEN}" != headers.get("authorization") and \
                    headers.get("x-api-key") != TOKEN:
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await inner(scope, receive, send)

    runner = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                           lifespan="on"))
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60  # polled under a generous deadline, never timed
    while not runner.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    found.url = f"http://127.0.0.1:{runner.servers[0].sockets[0].getsockname()[1]}/mcp"
    try:
        yield found
    finally:
        runner.should_exit = True
        thread.join()


def _app(tmp_path: Path, server: Server, auth: str, value: str, *, filter_: str = "",
         gate: str = "") -> Any:
    (tmp_path / "agent.yaml").write_text(f"""\
agentspec: 1
name: calc_app
tools:
  calc:
    mcp: {{url: "{server.url}"}}
    auth: {auth}{filter_}
agents:
  lead:
    model: gemini-2.5-flash
    instruction: Add.
    tools: [calc]{gate}
""")
    compiled = compile_spec(tmp_path / "agent.yaml", environ={"CALC_TOKEN": value})
    assert compiled.ok, [(d.code, d.message) for d in compiled.diagnostics]
    app, problems = build_objects(compiled)
    assert problems == [], problems
    return app


BEARER = '{bearer: "${env.CALC_TOKEN}"}'
API_KEY = '{api_key: {header: X-Api-Key, value: "${env.CALC_TOKEN}"}}'
ADD = {"lead": [{"call": "add", "args": {"a": 1, "b": 2}}, {"text": "3"}]}


@pytest.mark.parametrize("auth, header, sent", [
    (BEARER, "authorization", f"Bearer {TOKEN}"), (API_KEY, "x-api-key", TOKEN)])
def test_the_call_reaches_the_server_with_the_credential(
        tmp_path: Path, server: Server, monkeypatch: pytest.MonkeyPatch, auth: str,
        header: str, sent: str) -> None:
    monkeypatch.setenv("CALC_TOKEN", TOKEN)
    said = scripted_turn(_app(tmp_path, server, auth, TOKEN), ADD)
    assert server.calls == [(1, 2)]
    assert server.seen and all(h.get(header) == sent for h in server.seen)
    (tool, result), = said.results
    assert tool == "add" and result["structuredContent"] == {"result": 3}


@pytest.mark.parametrize("filter_, called", [("", "calc"), ("\n    filter: [add]", "add")])
def test_a_refused_credential_is_an_error_naming_the_server(
        tmp_path: Path, server: Server, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture, filter_: str, called: str) -> None:
    """The server refuses the session: the model is told which server failed, through the
    tools it expects (the filter's; else one named after the spec entry), not that the
    tool does not exist; the wrong token appears in no result and no log line."""
    monkeypatch.setenv("CALC_TOKEN", "wr0ng-t0ken")
    app = _app(tmp_path, server, BEARER, "wr0ng-t0ken", filter_=filter_)
    replies = {"lead": [{"call": called, "args": {"a": 1, "b": 2}}, {"text": "Sorry."}]}
    said = scripted_turn(app, replies)
    assert server.calls == [] and server.seen
    assert all(h.get("authorization") == "Bearer wr0ng-t0ken" for h in server.seen)
    (tool, result), = said.results
    assert tool == called
    assert result["error"].startswith(f"the MCP server `calc` ({server.url}) could not be "
                                      "used")
    assert "credential" in result["error"]
    assert "wr0ng-t0ken" not in json.dumps(said.results) + caplog.text
    declared = said.models["lead"].requests[0].config.tools[0].function_declarations
    assert [d.name for d in declared] == [called]


def test_an_approval_on_the_server_keeps_its_credential(
        tmp_path: Path, server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """`interrupt_on` on the spec entry wraps the toolset; ADK still finds its credential
    (it was lost: every request went out without the header)."""
    from agentspec.runtime.harness.approvals import Decision

    monkeypatch.setenv("CALC_TOKEN", TOKEN)
    app = _app(tmp_path, server, BEARER, TOKEN, gate="\n    interrupt_on: {calc: true}")
    asked = approved_turn(app, {"lead": [{"call": "add", "args": {"a": 1, "b": 2}},
                                         {"text": "3"}]}, Decision("approve"))
    assert [p.tool for p in asked] == ["add"]
    assert server.calls == [(1, 2)]
    assert all(h.get("authorization") == f"Bearer {TOKEN}" for h in server.seen)


def test_a_service_account_reaches_the_server_with_its_token(
        tmp_path: Path, server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key from the environment is exchanged at its `token_uri` (this server's
    `/token`) and the MCP requests carry the token it gave."""
    key, _ = service_account_key(server.url.removesuffix("/mcp") + "/token")
    monkeypatch.setenv("CALC_TOKEN", key)
    auth = '{service_account: {key: "${env.CALC_TOKEN}", scopes: [calc]}}'
    said = scripted_turn(_app(tmp_path, server, auth, key), ADD)
    assert server.calls == [(1, 2)]
    assert server.seen and all(h.get("authorization") == f"Bearer {TOKEN}"
                               for h in server.seen)
    assert "PRIVATE KEY" not in json.dumps(said.results)


def test_a_refusal_quoting_the_url_shows_no_secret_of_it(
        caplog: pytest.LogCaptureFixture) -> None:
    """A server reached at a URL that carries its key (`?api_key=...`, `user:password@`)
    refuses it: the HTTP client's error quotes the whole URL, which reached the model's tool
    result and the log as it was."""
    import asyncio

    import httpx

    from agentspec.runtime.mcp_server import mcp_server

    url = "https://bot:pa55-w0rd@mcp.example.com/mcp?api_key=s3cret-k3y-123"
    request = httpx.Request("POST", url)
    refused = httpx.HTTPStatusError(
        f"Client error '401 Unauthorized' for url '{url}'", request=request,
        response=httpx.Response(401, request=request))

    class Refusing:
        async def get_tools_with_prefix(self, context: Any) -> list[Any]:
            try:
                raise refused
            except httpx.HTTPStatusError as error:
                raise ExceptionGroup("unhandled errors in a TaskGroup", [error]) from None

    toolset = mcp_server(Refusing(), name="calc", target=url,  # type: ignore[arg-type]
                         tools=None, prefix=None)
    [tool] = asyncio.run(toolset.get_tools())
    result = asyncio.run(tool.run_async(args={}, tool_context=None))  # type: ignore[arg-type]
    assert "401 Unauthorized" in result["error"]
    for secret in ("s3cret-k3y-123", "pa55-w0rd"):
        assert secret not in result["error"] + tool.description + caplog.text, secret
