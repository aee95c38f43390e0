"""The `agentspec` command: thin commands, each in its own module, imported when used."""

from __future__ import annotations

import importlib
from typing import Any

import click

__all__ = ["main"]

COMMANDS = {
    "validate": ("agentspec.cli.validate", "Check specs and report every problem."),
    "schema": ("agentspec.cli.schema", "Print the JSON Schema of the spec language."),
    "explain": ("agentspec.cli.explain", "Explain a diagnostic code."),
}


class LazyGroup(click.Group):
    """Imports a command's module only when that command runs (keeps `validate` fast)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module = importlib.import_module(COMMANDS[name][0])
        command: click.Command = module.command
        return command

    def format_commands(self, ctx: click.Context, formatter: Any) -> None:
        rows = [(name, help_text) for name, (_, help_text) in sorted(COMMANDS.items())]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="agentspec", prog_name="agentspec")
def cli() -> None:
    """Author Google ADK agents in YAML: validate, build and review agent specs."""


def main() -> None:
    cli(prog_name="agentspec")
