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
           "require_credentials"]

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
