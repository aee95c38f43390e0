"""`agentspec run`: talk to a spec's agents, with a real model or a script."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import click

from agentspec.cli.common import environment_option, print_diagnostics

_KEYS = ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI")


def _short(value: Any, limit: int = 300) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(event: Any) -> list[str]:
    """Readable lines for one event: tool calls, results and answers."""
    lines = []
    for part in (event.content.parts if event.content else None) or ():
        if part.function_call:
            call = part.function_call
            if call.name == "transfer_to_agent":
                lines.append(f"[{event.author}] -> transfers to {call.args.get('agent_name')}")
            else:
                lines.append(f"[{event.author}] calls {call.name}({_short(call.args)})")
        elif part.function_response and part.function_response.name != "transfer_to_agent":
            response = part.function_response
            lines.append(f"[{event.author}] {response.name} returned {_short(response.response)}")
        elif part.text and not part.thought:
            lines.append(f"[{event.author}] {part.text}")
    return lines


def _session_service(url: str | None) -> Any:
    if url is None:
        from google.adk.sessions import InMemorySessionService

        return InMemorySessionService()
    if not url.startswith("sqlite:///"):
        raise click.UsageError("--session takes sqlite:///path/to/sessions.db")
    from google.adk.sessions.sqlite_session_service import SqliteSessionService

    path = Path(url.removeprefix("sqlite:///"))
    path.parent.mkdir(parents=True, exist_ok=True)
    return SqliteSessionService(str(path))


async def _session(runner: Any, session_id: str) -> str:
    service = runner.session_service
    found = await service.get_session(app_name=runner.app_name, user_id="user",
                                      session_id=session_id)
    if found is None:
        await service.create_session(app_name=runner.app_name, user_id="user",
                                     session_id=session_id)
    return session_id


async def _turn(runner: Any, session_id: str, message: str) -> None:
    from google.genai import types

    content = types.Content(role="user", parts=[types.Part(text=message)])
    async for event in runner.run_async(user_id="user", session_id=session_id,
                                        new_message=content):
        for line in describe(event):
            click.echo(line)


async def _chat(app: Any, service: Any, session_id: str, messages: list[str]) -> None:
    from google.adk.runners import Runner

    runner = Runner(app=app, session_service=service)
    try:
        await _session(runner, session_id)
        if messages:
            for message in messages:
                click.echo(f"you> {message}")
                await _turn(runner, session_id, message)
            return
        while True:
            try:
                message = input("you> ")
            except EOFError:
                return
            if message.strip() in ("/quit", "/exit"):
                return
            if message.strip():
                await _turn(runner, session_id, message)
    finally:
        await runner.close()


def _load_script(path: Path) -> tuple[dict[str, list[Any]], list[str]]:
    from agentspec.parse import load

    parsed = load(path)
    if not parsed.ok or not isinstance(parsed.value, dict):
        print_diagnostics(parsed.diagnostics, {parsed.source.name: parsed.source})
        raise click.UsageError(f"{path} is not a readable script")
    replies = parsed.value.get("replies") or {}
    messages = parsed.value.get("messages") or []
    if not isinstance(replies, dict) or not isinstance(messages, list):
        raise click.UsageError(
            f"{path}: `replies` is a mapping of agent -> list, `messages` a list")
    return replies, [str(m) for m in messages]


@click.command(name="run")
@click.argument("spec", type=click.Path(path_type=Path))
@click.argument("message", required=False)
@click.option("--script", type=click.Path(path_type=Path),
              help="Run offline: scripted replies per agent (see README).")
@click.option("--session", "session_url", metavar="sqlite:///PATH",
              help="Keep the conversation in an SQLite file across runs.")
@click.option("--session-id", default="default", show_default=True,
              help="Which conversation in --session to continue.")
@environment_option
def command(spec: Path, message: str | None, script: Path | None, session_url: str | None,
            session_id: str, environment: str | None) -> None:
    """Send MESSAGE to SPEC's root agent, or chat in the terminal when MESSAGE is omitted."""
    from agentspec.build import build_objects, compile_spec

    compiled = compile_spec(spec, environment=environment)
    if not compiled.ok:
        print_diagnostics(compiled.diagnostics, compiled.check.sources)
        sys.exit(1)
    app, problems = build_objects(compiled)
    if problems:
        print_diagnostics(problems, compiled.check.sources)
        sys.exit(1)
    messages = [message] if message else []
    if script is not None:
        from agentspec.runtime.scripted import ScriptError, install_script

        replies, scripted_messages = _load_script(script)
        messages = messages or scripted_messages
        try:
            install_script(app.root_agent, replies)
        except ScriptError as exc:
            raise click.UsageError(str(exc)) from exc
    elif not any(os.environ.get(key) for key in _KEYS):
        click.echo("agentspec: no model credentials: set GOOGLE_API_KEY (or GEMINI_API_KEY, or "
                   "GOOGLE_GENAI_USE_VERTEXAI=1 with Vertex AI settings), or run offline with "
                   "--script FILE", err=True)
        sys.exit(2)
    import httpx
    from google.genai.errors import APIError

    from agentspec.runtime.env import MissingEnvironmentVariable
    from agentspec.runtime.scripted import ScriptError

    try:
        asyncio.run(_chat(app, _session_service(session_url), session_id, messages))
    except (APIError, ScriptError, MissingEnvironmentVariable) as exc:
        source = "the model service" if isinstance(exc, APIError) else "the run"
        click.echo(f"agentspec: {source} failed: {exc}", err=True)
        sys.exit(1)
    except (httpx.HTTPError, ConnectionError) as exc:
        click.echo(f"agentspec: cannot reach the model service: {exc}", err=True)
        sys.exit(1)
    except ValueError as exc:  # e.g. ADK: "API key must be set ..." or "Model ... not found"
        click.echo(f"agentspec: {exc}", err=True)
        sys.exit(1)
