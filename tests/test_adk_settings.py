"""ADK settings the language exposes: the app's `context_cache` (ADK's ContextCacheConfig) and
an LLM agent's `code_executor` (Gemini's built-in executor, or a sandbox backend)."""

from __future__ import annotations

import logging
import secrets
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentspec.compiler import build_objects, compile_spec, emit_package, write_package
from tests.buildkit import fingerprint, package_loader, scripted_turn
from tests.spec_defaults import spec_sandbox_data

TRANSFER = """\
agentspec: 1
name: {name}
{cache}
agents:
  lead:
    model: gemini-2.5-flash
    instruction: Hand the user to the helper.
    sub_agents: [helper]
  helper:
    model: gemini-2.5-flash
    instruction: Help.
"""


def _app(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "agent.yaml"
    path.write_text(textwrap.dedent(text))
    compiled = compile_spec(path, environ={})
    assert compiled.ok, compiled.diagnostics
    app, problems = build_objects(compiled)
    assert problems == [], problems
    return app, compiled


def _cache_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "context_cache_config" in r.getMessage()]


REPLIES = {"lead": [{"call": "transfer_to_agent", "args": {"agent_name": "helper"}}],
           "helper": [{"text": "Helped."}]}


def test_context_cache_reaches_every_request_and_silences_adks_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    name = f"cached_{secrets.token_hex(4)}"  # ADK warns once per app name and process
    app, _ = _app(tmp_path, TRANSFER.format(
        name=name, cache="context_cache: {ttl_seconds: 600, min_tokens: 4096, "
                         "create_timeout: 2.5}"))
    config = app.context_cache_config
    assert (config.ttl_seconds, config.min_tokens, config.cache_intervals) == (600, 4096, 10)
    assert config.create_http_options.timeout == 2500
    with caplog.at_level(logging.WARNING):
        said = scripted_turn(app, REPLIES)
    assert said.said[-1] == ("helper", "Helped.")
    for agent in ("lead", "helper"):  # ADK hands the settings to each model call
        assert said.models[agent].requests[0].cache_config.ttl_seconds == 600
    assert _cache_warnings(caplog) == []


def test_without_context_cache_adk_warns_and_requests_carry_no_cache(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    name = f"uncached_{secrets.token_hex(4)}"
    app, _ = _app(tmp_path, TRANSFER.format(name=name, cache=""))
    assert app.context_cache_config is None  # no default: caching is a cost decision
    with caplog.at_level(logging.WARNING):
        said = scripted_turn(app, REPLIES)
    assert said.models["lead"].requests[0].cache_config is None
    assert len(_cache_warnings(caplog)) == 1


def test_the_generated_package_has_the_same_context_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app, compiled = _app(tmp_path, TRANSFER.format(
        name="cached_pkg", cache="context_cache: {cache_intervals: 3}"))
    files = emit_package(compiled, tmp_path / "out")
    assert not write_package(files, tmp_path / "out")
    with package_loader(monkeypatch) as load:
        loaded = load(tmp_path / "out", "cached_pkg")
        assert fingerprint(loaded) == fingerprint(app)
        assert loaded.context_cache_config.cache_intervals == 3


# code_executor -------------------------------------------------------------------------------

SANDBOXED = """\
agentspec: 1
name: coder
backends:
  box: {type: sandbox, root: ./box}
agents:
  coder:
    model: gemini-2.5-flash
    instruction: Compute with Python.
    code_executor: {backend: box}
"""
CODE = "```python\nimport os\nprint(os.getcwd(), 6 * 7)\nopen('made.txt', 'w').write('x')\n```"


def _request_text(request: Any) -> str:
    return "\n".join(p.text or "" for c in request.contents for p in c.parts or [])


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_sandbox_executor_runs_the_models_code_in_the_backend(tmp_path: Path) -> None:
    (tmp_path / "box").mkdir()
    app, _ = _app(tmp_path, SANDBOXED)
    said = scripted_turn(app, {"coder": [{"text": CODE}, {"text": "It is 42."}]})
    assert said.said[-1] == ("coder", "It is 42.")
    second = _request_text(said.models["coder"].requests[1])
    assert "/workspace 42" in second  # ran in the sandbox, its root seen as /workspace
    assert (tmp_path / "box" / "made.txt").read_text() == "x"  # the backend's root


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_sandbox_executor_confines_the_code(tmp_path: Path) -> None:
    (tmp_path / "box").mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret")
    app, _ = _app(tmp_path, SANDBOXED)
    code = f"```python\nprint(open({str(secret)!r}).read())\n```"
    said = scripted_turn(app, {"coder": [{"text": code}, {"text": "Could not."}]})
    second = _request_text(said.models["coder"].requests[1])
    assert "s3cret" not in second and "No such file" in second  # the host path is not there


def test_builtin_executor_offers_gemini_code_execution(tmp_path: Path) -> None:
    app, _ = _app(tmp_path, SANDBOXED.replace("{backend: box}", "builtin"))
    said = scripted_turn(app, {"coder": [{"text": "Done."}]})
    tools = said.models["coder"].requests[0].config.tools
    assert any(getattr(tool, "code_execution", None) is not None for tool in tools)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_the_generated_package_has_the_same_code_executor(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "box").mkdir()
    app, compiled = _app(tmp_path, SANDBOXED)
    files = emit_package(compiled, tmp_path / "out")
    assert not write_package(files, tmp_path / "out")
    with package_loader(monkeypatch) as load:
        loaded = load(tmp_path / "out", "coder")
        assert fingerprint(loaded) == fingerprint(app)
        executor = loaded.root_agent.code_executor
        assert executor.definitions["box"]["root"] == str(tmp_path / "box")
        said = scripted_turn(loaded, {"coder": [{"text": CODE}, {"text": "42."}]})
        assert "/workspace 42" in _request_text(said.models["coder"].requests[1])


# tool auth -----------------------------------------------------------------------------------

AUTHED = """\
agentspec: 1
name: authed
tools:
  lookup: {python: "hooks:lookup", auth: {bearer: "${env.LOOKUP_TOKEN}"}}
  signed: {python: "hooks:signed", auth: {oauth: {
    authorization_url: "https://accounts.example.invalid/auth",
    token_url: "https://oauth.example.invalid/token", scopes: {read: Read},
    client_id: my-client, client_secret: "${env.CLIENT_SECRET}"}}}
  remote:
    mcp: {url: "https://mcp.example.invalid/mcp"}
    auth: {api_key: {header: X-Api-Key, value: "${env.MCP_KEY}"}}
agents:
  lead:
    model: gemini-2.5-flash
    instruction: Look things up.
    tools: [lookup, signed]
"""
HOOKS = '''\
def lookup(query: str, credential=None) -> dict:
    """Looks a query up."""
    token = credential.http.credentials.token if credential and credential.http else None
    return {"authorized": token == "t0ken-from-env"}


def signed(query: str, credential=None) -> dict:
    """Reads the signed-in person's files."""
    return {"token": bool(credential and credential.oauth2 and credential.oauth2.access_token)}
'''
SECRETS = {"LOOKUP_TOKEN": "t0ken-from-env", "CLIENT_SECRET": "cl1ent-secret",
           "MCP_KEY": "mcp-k3y"}


def _authed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "hooks.py").write_text(HOOKS)
    (tmp_path / "agent.yaml").write_text(AUTHED)
    compiled = compile_spec(tmp_path / "agent.yaml", environ=dict(SECRETS))
    assert compiled.ok, compiled.diagnostics
    app, problems = build_objects(compiled)
    assert problems == [], problems
    return app, compiled


def test_a_function_tool_receives_its_credential_from_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app, _ = _authed(tmp_path, monkeypatch)
    said = scripted_turn(app, {"lead": [{"call": "lookup", "args": {"query": "x"}},
                                        {"text": "Done."}]})
    assert ("lookup", {"authorized": True}) in said.results
    declared = said.models["lead"].requests[0].config.tools[0].function_declarations
    assert all("credential" not in str(d.parameters_json_schema) for d in declared)


def test_an_oauth_tool_asks_the_front_end_to_sign_in(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a token, ADK does not run the function: it asks the client for the person's
    sign-in with an `adk_request_credential` call (what `adk web` shows as a sign-in)."""
    app, _ = _authed(tmp_path, monkeypatch)
    asked: list[Any] = []

    async def main() -> None:
        from google.adk.runners import InMemoryRunner
        from google.genai import types

        from agentspec.testing.scripted import install_script

        install_script(app.root_agent, {"lead": [{"call": "signed", "args": {"query": "x"}},
                                                 {"text": "Please sign in."}]})
        runner = InMemoryRunner(app=app)
        session = await runner.session_service.create_session(app_name=app.name, user_id="u")
        message = types.Content(role="user", parts=[types.Part(text="Read my files")])
        async for event in runner.run_async(user_id="u", session_id=session.id,
                                            new_message=message):
            asked.extend(call for call in event.get_function_calls()
                         if call.name == "adk_request_credential")
        await runner.close()

    import asyncio

    asyncio.run(main())
    assert len(asked) == 1
    config = asked[0].args["authConfig"]
    flow = config["authScheme"]["flows"]["authorizationCode"]
    assert flow["tokenUrl"] == "https://oauth.example.invalid/token"
    assert config["rawAuthCredential"]["oauth2"]["clientId"] == "my-client"


def test_an_mcp_toolset_gets_the_scheme_and_credential(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = AUTHED.replace("tools: [lookup, signed]", "tools: [remote]")
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "hooks.py").write_text(HOOKS)
    (tmp_path / "agent.yaml").write_text(text)
    compiled = compile_spec(tmp_path / "agent.yaml", environ=dict(SECRETS))
    if not compiled.ok and any(d.code == "AS402" for d in compiled.diagnostics):
        pytest.skip("the mcp extra is not installed")
    app, problems = build_objects(compiled)
    assert problems == []
    toolset = app.root_agent.tools[0].inner  # inside the stand-in of a server it cannot use
    assert toolset._auth_scheme.name == "X-Api-Key"
    assert toolset._auth_credential.api_key == "mcp-k3y"


def test_no_secret_is_written_into_the_package(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, compiled = _authed(tmp_path, monkeypatch)
    files = emit_package(compiled, tmp_path / "out")
    text = "\n".join(files.values())
    assert "expand('${env.LOOKUP_TOKEN}')" in text
    assert not any(secret in text for secret in SECRETS.values())


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_a_code_block_too_long_for_the_sandbox_is_an_error_the_model_sees(
        tmp_path: Path) -> None:
    from google.adk.code_executors.code_execution_utils import CodeExecutionInput

    from agentspec.runtime.code_executors import MAX_CODE_BYTES, sandbox_executor

    (tmp_path / "box").mkdir()
    executor = sandbox_executor("box", {"box": spec_sandbox_data(tmp_path / "box")})
    huge = executor.execute_code(None, CodeExecutionInput(code="x = 1\n" * MAX_CODE_BYTES))
    assert "too long" in huge.stderr and huge.stdout == ""
    nul = executor.execute_code(None, CodeExecutionInput(code="print(1)\x00"))
    assert "NUL" in nul.stderr
    failed = executor.execute_code(None, CodeExecutionInput(code="import sys; sys.exit(4)"))
    assert failed.exit_code == 4 and failed.stderr
