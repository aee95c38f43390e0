"""Errors blame the right party: a model endpoint (refused, DNS, timeout, an HTTP status, a
chain where every model failed) names the agent, the model and the endpoint without its
secrets, and exits 1; the user's code that raises is named with its file and line."""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from agentspec.cli import cli
from agentspec.compiler import build_objects, compile_spec
from agentspec.contract.urls import scrubbed
from agentspec.runtime.blame import ModelError, cause, classified
from agentspec.runtime.model_routing import ModelsFailed
from tests.openai_server import closed_port, failing_server, openai_server

KEY = "sk-blame-test-not-a-real-key"
CREDENTIALS = ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI")


def _spec(models: str, model: str) -> str:
    return textwrap.dedent("""\
        agentspec: 1
        name: blame
        models:
        {models}
        agents:
          helper:
            model: {model}
            instruction: Answer briefly.
        """).format(models=textwrap.indent(textwrap.dedent(models), "  "), model=model)


def _litellm(name: str, url: str, timeout: int = 30) -> str:
    return (f"{name}: {{id: openai/local-model, provider: litellm, base_url: \"{url}\", "
            f"api_key: \"${{env.LOCAL_LLM_KEY}}\", args: {{num_retries: 0, "
            f"timeout: {timeout}}}}}\n")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOCAL_LLM_KEY", KEY)
    for name in CREDENTIALS:  # LiteLLM models need no Google credentials
        monkeypatch.delenv(name, raising=False)
    yield tmp_path


def _run(path: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["run", str(path), "hello", *args], prog_name="agentspec")


def _said(result: Result) -> str:
    return result.output + (result.stderr if result.stderr_bytes is not None else "")


@pytest.mark.parametrize(("server", "expected"), [
    ("refused", "connection refused"),
    ("dns", "host not found (DNS lookup failed)"),
    (500, "HTTP 500: "),
    (429, "HTTP 429: "),
    (401, "HTTP 401: "),
    (None, "timed out waiting for an answer"),
], ids=["refused", "dns", "500", "429", "401", "timeout"])
def test_an_unreachable_litellm_endpoint_names_agent_model_and_endpoint(
        project: Path, server: Any, expected: str) -> None:
    def run(url: str) -> Result:
        spec = project / "spec.yaml"
        spec.write_text(_spec(_litellm("local", url, timeout=1), "local"))
        return _run(spec)

    if server == "refused":
        url = f"http://127.0.0.1:{closed_port()}/v1"
        result = run(url)
    elif server == "dns":  # RFC 2606: `.invalid` never resolves
        url = "http://model-host.invalid/v1"
        result = run(url)
    else:
        with failing_server(server) as url:
            result = run(url)
    said = _said(result)
    assert result.exit_code == 1, said
    assert f"agent `helper`: model `openai/local-model` at {url} failed: {expected}" in said
    assert "bug in agentspec" not in said and "internal error" not in said
    assert "Give Feedback" not in said and "turn_on_debug" not in said
    assert "no model credentials" not in said  # LiteLLM only: no Google key asked for


def test_a_chain_where_every_model_fails_lists_each_with_its_error(project: Path) -> None:
    refused = f"http://127.0.0.1:{closed_port()}/v1"
    with failing_server(503) as busy:
        spec = project / "spec.yaml"
        spec.write_text(_spec(_litellm("down", refused) + _litellm("busy", busy)
                              + "chain: {fallback: [down, busy]}\n", "chain"))
        result = _run(spec)
    said = _said(result)
    assert result.exit_code == 1, said
    assert (f"agent `helper`: model `chain` failed: every model failed before answering "
            f"(`down` at {refused}: connection refused (nothing listens there); `busy` at "
            f"{busy}: HTTP 503: ") in said
    # the switch is one line of the run, saying which model failed and why
    assert ("[helper] model `down` failed (connection refused (nothing listens there)); "
            "trying `busy`") in result.output
    assert "Give Feedback" not in said and "bug in agentspec" not in said


def test_a_fallback_that_answers_says_which_model_failed(project: Path) -> None:
    refused = f"http://127.0.0.1:{closed_port()}/v1"
    with openai_server(KEY, "Hello from the second") as up:
        spec = project / "spec.yaml"
        spec.write_text(_spec(_litellm("down", refused) + _litellm("up", up.url)
                              + "chain: {fallback: [down, up]}\n", "chain"))
        result = _run(spec)
    assert result.exit_code == 0, _said(result)
    # the conversation, before the usage summary of the end
    assert result.output.split("\nusage: ")[0].splitlines()[1:] == [
        "[helper] model `down` failed (connection refused (nothing listens there)); "
        "trying `up`",
        "[helper] Hello from the second"]


def test_an_unreachable_gemini_endpoint_is_named_without_its_secrets(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    port = closed_port()
    monkeypatch.setenv("GOOGLE_API_KEY", "not-a-key")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", f"http://me:hunter2@127.0.0.1:{port}?key=s3cr")
    spec = project / "spec.yaml"
    spec.write_text(_spec("fast: gemini-2.5-flash\n", "fast"))
    result = _run(spec)
    said = _said(result)
    assert result.exit_code == 1, said
    assert (f"agent `helper`: model `gemini-2.5-flash` at http://me:***@127.0.0.1:{port}?key=*** "
            "failed: connection refused") in said
    assert "hunter2" not in said and "s3cr" not in said and "bug in agentspec" not in said


def test_the_built_app_raises_the_classified_error(project: Path) -> None:
    """What `adk run` on the package sees: the error carries a note with the names, and
    agentspec's classification of it (the Blame plugin every App carries)."""
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    refused = f"http://127.0.0.1:{closed_port()}/v1"
    spec = project / "spec.yaml"
    spec.write_text(_spec(_litellm("down", refused), "down"))
    compiled = compile_spec(spec, environ={"LOCAL_LLM_KEY": KEY})
    app, problems = build_objects(compiled)
    assert not problems

    async def ask() -> None:
        runner = InMemoryRunner(app=app)
        session = await runner.session_service.create_session(app_name=app.name, user_id="u")
        try:
            async for _ in runner.run_async(user_id="u", session_id=session.id,
                                            new_message=types.Content(
                                                role="user", parts=[types.Part(text="hi")])):
                pass
        finally:
            await runner.close()

    with pytest.raises(Exception) as raised:  # noqa: PT011 - ADK re-raises LiteLLM's error
        asyncio.run(ask())
    found = classified(raised.value)
    assert isinstance(found, ModelError) and not isinstance(found, ModelsFailed)
    assert (found.agent, found.model, found.endpoint) == ("helper", "openai/local-model",
                                                          refused)
    assert f"agentspec: {found}" in getattr(raised.value, "__notes__", [])


def test_cause_walks_to_the_network_error_under_an_http_status() -> None:
    import socket

    class Mapped(Exception):  # a client that reports any failure as a 500
        status_code = 500

    try:
        try:
            raise socket.gaierror(-2, "Name or service not known")
        except OSError as exc:
            raise Mapped("Connection error.") from exc
    except Mapped as exc:
        assert cause(exc) == "host not found (DNS lookup failed)"


def test_secrets_in_urls_are_masked() -> None:
    text = ("failed at https://user:pw@host/v1?key=abc&x=1 and https://tok@h2/p and "
            "http://plain/v1")
    # a user name beside a password stays (it names a user); alone it may be a token
    assert scrubbed(text) == ("failed at https://user:***@host/v1?key=***&x=*** and "
                              "https://***@h2/p and http://plain/v1")


# the user's code ------------------------------------------------------------------------------

HOOKS = '''\
def lookup(city: str) -> dict:
    """Look a city up."""
    raise KeyError(f"no city {city}")


def guard(tool, args, tool_context):
    if args.get("city") == "Atlantis":
        raise PermissionError("Atlantis is off limits")
    return None


def pick(names, ctx, failed):
    raise LookupError("no tier table")


def wrong(tool, arguments, context, extra):
    return None
'''

USER_SPEC = """\
agentspec: 1
name: usercode
tools:
  lookup: {{python: blame_hooks:lookup}}
agents:
  helper:
    model: gemini-2.5-flash
    instruction: Look things up.
    tools: [lookup]
    tool_errors: raise
    callbacks:
      before_tool: [{callbacks}]
"""


@pytest.fixture
def hooks(project: Path) -> Iterator[Path]:
    import sys

    from tests.buildkit import purge

    (project / "blame_hooks.py").write_text(HOOKS)
    saved = list(sys.path)
    purge("blame_hooks")
    yield project
    purge("blame_hooks")
    sys.path[:] = saved


@pytest.mark.parametrize(("city", "expected"), [
    ("Atlantis", "your code `guard` (blame_hooks.py:8) of agent `helper` raised "
                 "PermissionError: Atlantis is off limits"),
    ("Lisbon", "your code `lookup` (blame_hooks.py:3) of agent `helper` raised KeyError: "
               "'no city Lisbon'"),
], ids=["before_tool", "tool"])
def test_user_code_that_raises_is_named_with_its_file_and_line(
        hooks: Path, city: str, expected: str) -> None:
    spec = hooks / "spec.yaml"
    spec.write_text(USER_SPEC.format(callbacks='"blame_hooks:guard"'))
    (hooks / "script.yaml").write_text(
        f"replies:\n  helper:\n    - call: lookup\n      args: {{city: {city}}}\n"
        "    - text: done\n")
    result = _run(spec, "--script", "script.yaml")
    said = _said(result)
    assert result.exit_code == 1, said
    assert f"agentspec: {expected}" in said
    assert "bug in agentspec" not in said


def test_a_route_function_that_raises_is_named(hooks: Path) -> None:
    with openai_server(KEY, "never") as up:
        spec = hooks / "spec.yaml"
        spec.write_text(_spec(_litellm("a", up.url) + _litellm("b", up.url)
                              + "picked: {route: {python: blame_hooks:pick}, models: [a, b]}\n",
                              "picked"))
        result = _run(spec)
    said = _said(result)
    assert result.exit_code == 1, said
    assert ("agentspec: your code `pick` (blame_hooks.py:13) of agent `helper` raised "
            "LookupError: no tier table") in said
    assert not up.requests


def test_build_refuses_a_callback_adk_cannot_call(hooks: Path) -> None:
    spec = hooks / "spec.yaml"
    spec.write_text(USER_SPEC.format(callbacks='"blame_hooks:guard", "blame_hooks:wrong"'))
    result = CliRunner().invoke(cli, ["build", str(spec), "-o", str(hooks / "out")],
                                prog_name="agentspec")
    said = _said(result)
    assert result.exit_code == 1, said
    assert ("spec.yaml:12:42: AS415 Callback `blame_hooks:wrong` (blame_hooks.py:16) of agent "
            "`helper` cannot take ADK's `before_tool` call (tool, args, tool_context)") in said
    assert "guard" not in said.split("AS415", 1)[1].split("(hint", 1)[0].replace(
        "blame_hooks:wrong", "")  # the right one is not named


def test_a_litellm_endpoint_with_secrets_is_shown_masked(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    port = closed_port()
    monkeypatch.setenv("BLAME_PASSWORD", "hunter2")  # secrets only through ${env.X} (AS287)
    monkeypatch.setenv("BLAME_KEY", "s3cr")
    secret_url = f"http://me:${{env.BLAME_PASSWORD}}@127.0.0.1:{port}/v1?key=${{env.BLAME_KEY}}"
    with openai_server(KEY, "Hello") as up:
        spec = project / "spec.yaml"
        spec.write_text(_spec(_litellm("down", secret_url) + _litellm("up", up.url)
                              + "chain: {fallback: [down, up]}\n", "chain"))
        answered = _run(spec)
        spec.write_text(_spec(_litellm("down", secret_url), "down"))
        failed = _run(spec)
    said = _said(answered) + _said(failed)
    assert answered.exit_code == 0 and failed.exit_code == 1, said
    assert f"model `openai/local-model` at http://me:***@127.0.0.1:{port}/v1?key=*** failed" in said
    assert "hunter2" not in said and "s3cr" not in said


@pytest.mark.parametrize("status", [401, 429, 500])
def test_a_gemini_endpoint_that_answers_with_an_error_status_is_named(
        project: Path, monkeypatch: pytest.MonkeyPatch, status: int) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "not-a-key")
    with failing_server(status) as url:
        base = url.removesuffix("/v1")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", base)
        spec = project / "spec.yaml"
        spec.write_text(_spec("fast: gemini-2.5-flash\n", "fast"))
        result = _run(spec)
    said = _said(result)
    assert result.exit_code == 1, said
    assert (f"agentspec: agent `helper`: model `gemini-2.5-flash` at {base} failed: "
            f"HTTP {status}: the server says {status}") in said
    assert "bug in agentspec" not in said
