"""Options and output shared by the commands."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from agentspec.diagnostics import Diagnostic, normalize, render
from agentspec.ir.tree import FallbackChain, ModelNode, ModelRoute, PlainModel
from agentspec.source import SourceFile

__all__ = ["CREDENTIAL_KEYS", "Built", "built", "built_app", "environment_option",
           "print_diagnostics", "require_credentials", "services"]

CREDENTIAL_KEYS = ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI")

environment_option: Callable[[Any], Any] = click.option(
    "--env", "environment", metavar="NAME", help="Apply the overlay `environments.NAME`.")


def print_diagnostics(diagnostics: Sequence[Diagnostic], sources: Mapping[str, SourceFile],
                      fmt: str = "concise") -> None:
    click.echo(render(normalize(diagnostics), sources, fmt), nl=False, err=True)


@dataclass(frozen=True)
class Built:
    app: Any  # the ADK App
    sessions: str | None  # the spec's conversation store (`${env.X}` read); None: in memory
    gemini: bool = True  # whether any model it calls is Gemini (needs Google credentials)


def built(spec: Path, environment: str | None) -> Built:
    """The ADK App of SPEC and its conversation store, or exit 1 with the diagnostics."""
    from agentspec.compiler import build_objects, compile_spec
    from agentspec.runtime.env import MissingEnvironmentVariable, expand

    compiled = compile_spec(spec, environment=environment)
    if not compiled.ok or compiled.app is None:
        print_diagnostics(compiled.diagnostics, compiled.check.sources)
        sys.exit(1)
    app, problems = build_objects(compiled)
    if problems:
        print_diagnostics(problems, compiled.check.sources)
        sys.exit(1)
    from agentspec.ir.planning import app_models

    gemini = any(_calls_gemini(model) for model in app_models(compiled.app))
    store = compiled.app.sessions
    if store is None:
        return Built(app, None, gemini)
    if store.sqlite_path is not None:
        return Built(app, f"sqlite:///{(compiled.spec_dir / store.sqlite_path).resolve()}",
                     gemini)
    try:
        return Built(app, expand(store.url), gemini)
    except MissingEnvironmentVariable as exc:
        raise click.UsageError(f"sessions: {exc}") from exc


def _calls_gemini(model: ModelNode | None) -> bool:
    """Whether calls through `model` (None: ADK's default) may reach Gemini."""
    if model is None:
        return True
    if isinstance(model, FallbackChain | ModelRoute):
        return any(_calls_gemini(member) for member in model.members.values())
    if not isinstance(model, PlainModel):
        return False
    from google.adk.models import LLMRegistry
    from google.adk.models.google_llm import Gemini

    try:
        return issubclass(LLMRegistry.resolve(model.id), Gemini)
    except ValueError:
        return False


def built_app(spec: Path, environment: str | None) -> Any:
    """The ADK App of SPEC, or exit 1 with the diagnostics."""
    return built(spec, environment).app


def require_credentials(gemini: bool = True) -> None:
    """Exit 2 with a hint when a run without `--script` calls Gemini and no Google
    credentials are set (other providers' clients say what they miss themselves)."""
    if gemini and not any(os.environ.get(key) for key in CREDENTIAL_KEYS):
        click.echo("agentspec: no model credentials: set GOOGLE_API_KEY (or GEMINI_API_KEY, or "
                   "GOOGLE_GENAI_USE_VERTEXAI=1 with Vertex AI settings), or run offline with "
                   "--script FILE", err=True)
        sys.exit(2)


def services(url: str | None) -> tuple[Any, Any]:
    """The session and artifact services for a session store URL (None: in memory); a URL
    that cannot be opened exits 1, saying why without its password."""
    from agentspec.runtime.sessions import SessionsError, open_sessions

    try:
        return open_sessions(url)
    except SessionsError as exc:
        click.echo(f"agentspec: {exc}", err=True)
        sys.exit(1)
