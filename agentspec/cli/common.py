"""Options and output shared by the commands."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import click

from agentspec.diagnostics import Diagnostic, normalize, render
from agentspec.source import SourceFile

__all__ = ["environment_option", "print_diagnostics"]

environment_option: Callable[[Any], Any] = click.option(
    "--env", "environment", metavar="NAME", help="Apply the overlay `environments.NAME`.")


def print_diagnostics(diagnostics: Sequence[Diagnostic], sources: Mapping[str, SourceFile],
                      fmt: str = "concise") -> None:
    click.echo(render(normalize(diagnostics), sources, fmt), nl=False, err=True)
