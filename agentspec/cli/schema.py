"""`agentspec schema`: print the JSON Schema."""

from __future__ import annotations

import click

from agentspec.spec.schema import schema_text


@click.command(name="schema")
def command() -> None:
    """Print the JSON Schema of the spec language (the committed schemas/ file)."""
    click.echo(schema_text(), nl=False)
