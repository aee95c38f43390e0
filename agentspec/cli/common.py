"""Options and output shared by the commands."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from agentspec.diagnostics import Diagnostic, normalize, render
from agentspec.source import SourceFile

__all__ = ["CREDENTIAL_KEYS", "built_app", "environment_option", "print_diagnostics",
           "require_credentials", "services"]

CREDENTIAL_KEYS = ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI")

environment_option: Callable[[Any], Any] = click.option(
    "--env", "environment", metavar="NAME", help="Apply the overlay `environments.NAME`.")


def print_diagnostics(diagnostics: Sequence[Diagnostic], sources: Mapping[str, SourceFile],
                      fmt: str = "concise") -> None:
    click.echo(render(normalize(diagnostics), sources, fmt), nl=False, err=True)


def built_app(spec: Path, environment: str | None) -> Any:
    """The ADK App of SPEC, or exit 1 with the diagnostics."""
    from agentspec.build import build_objects, compile_spec

    compiled = compile_spec(spec, environment=environment)
    if not compiled.ok:
        print_diagnostics(compiled.diagnostics, compiled.check.sources)
        sys.exit(1)
    app, problems = build_objects(compiled)
    if problems:
        print_diagnostics(problems, compiled.check.sources)
        sys.exit(1)
    return app


def require_credentials() -> None:
    """Exit 2 with a hint when no model credentials are set (a run without `--script`)."""
    if not any(os.environ.get(key) for key in CREDENTIAL_KEYS):
        click.echo("agentspec: no model credentials: set GOOGLE_API_KEY (or GEMINI_API_KEY, or "
                   "GOOGLE_GENAI_USE_VERTEXAI=1 with Vertex AI settings), or run offline with "
                   "--script FILE", err=True)
        sys.exit(2)


def services(url: str | None) -> tuple[Any, Any]:
    """The session and artifact services: in memory, or kept on disk for `sqlite:///PATH`
    (artifacts in the directory `PATH.artifacts` beside the database)."""
    if url is None:
        from google.adk.artifacts import InMemoryArtifactService
        from google.adk.sessions import InMemorySessionService

        return InMemorySessionService(), InMemoryArtifactService()
    if not url.startswith("sqlite:///"):
        raise click.UsageError("--session takes sqlite:///path/to/sessions.db")
    from google.adk.artifacts.file_artifact_service import FileArtifactService
    from google.adk.sessions.sqlite_session_service import SqliteSessionService

    path = Path(url.removeprefix("sqlite:///"))
    path.parent.mkdir(parents=True, exist_ok=True)
    artifacts = path.with_name(path.name + ".artifacts")
    return SqliteSessionService(str(path)), FileArtifactService(artifacts)
