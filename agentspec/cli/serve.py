"""`agentspec serve --a2a`: a spec's agent as an A2A service, with an agent card."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import click

from agentspec.cli.common import built, environment_option, require_credentials, services


def _sdk_or_exit() -> None:
    from agentspec.runtime.a2a_serve import A2aUnavailable, _require_sdk

    try:
        _require_sdk()
    except A2aUnavailable as exc:
        click.echo(f"agentspec: {exc}", err=True)
        sys.exit(1)


def _scripted(app: Any, script: Path) -> None:
    from agentspec.cli.run import load_script
    from agentspec.testing.scripted import ScriptError, install_script

    try:
        install_script(app.root_agent, load_script(script).replies, app.events_compaction_config)
    except ScriptError as exc:
        raise click.UsageError(str(exc)) from exc


@click.command(name="serve")
@click.argument("spec", type=click.Path(path_type=Path))
@click.option("--a2a", is_flag=True, help="Serve over the Agent2Agent protocol (the only "
              "protocol `serve` speaks; `adk api_server` serves ADK's own).")
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True,
              help="The port to listen on.")
@click.option("--agent", "agent_name", metavar="NAME",
              help="Serve this agent of the spec instead of its root.")
@click.option("--public-url", metavar="URL",
              help="The URL the agent card advertises (default: http://HOST:PORT/), for a "
                   "server behind a proxy.")
@click.option("--session", "session_url", metavar="URL",
              help="The conversation store (default: AGENTSPEC_SESSIONS, else the spec's "
                   "`sessions:`, else in memory).")
@click.option("--script", type=click.Path(path_type=Path),
              help="Answer with scripted replies instead of a model (see `run --script`).")
@environment_option
def command(spec: Path, a2a: bool, host: str, port: int, agent_name: str | None,
            public_url: str | None, session_url: str | None, script: Path | None,
            environment: str | None) -> None:
    """Serve SPEC's root agent (or --agent NAME) over A2A, with an agent card made from the
    spec at /.well-known/agent-card.json (Ctrl-C stops)."""
    if not a2a:
        raise click.UsageError("say --a2a: A2A is the protocol `serve` speaks (for ADK's own "
                               "API, build the spec and run `adk api_server`)")
    _sdk_or_exit()
    from agentspec.runtime.a2a_serve import A2aUnavailable, served_agent, starlette
    from agentspec.runtime.sessions import SessionsError, reachable, redacted, sessions_url

    spec_built = built(spec, environment)
    try:
        app = served_agent(spec_built.app, agent_name)
    except A2aUnavailable as exc:
        raise click.UsageError(str(exc)) from exc
    if script is not None:
        _scripted(app, script)
    else:
        require_credentials(spec_built.gemini)
    url = sessions_url(session_url, spec_built.sessions)
    session_service, artifact_service = services(url)
    try:
        asyncio.run(reachable(session_service, url, app.name))
    except SessionsError as exc:
        click.echo(f"agentspec: {exc}", err=True)
        sys.exit(1)
    shown = "localhost" if host in ("0.0.0.0", "::") else host
    advertised = public_url or f"http://{shown}:{port}/"
    server = starlette(app, url=advertised, session_service=session_service,
                       artifact_service=artifact_service)
    click.echo(f"agentspec: serving `{app.root_agent.name}` over A2A at {advertised} (card: "
               f"{advertised.rstrip('/')}/.well-known/agent-card.json; sessions: "
               f"{redacted(url) if url else 'in memory'})", err=True)
    import uvicorn

    uvicorn.run(server, host=host, port=port, log_level="warning")
