"""`agentspec schema`: print the JSON Schema."""

from __future__ import annotations

import click

from agentspec.spec.schema import schema_text


@click.command(name="schema")
@click.option("--scenario", is_flag=True, help="The schema of scenario files (`agentspec "
              "test`) instead: the committed schemas/scenario.schema.json.")
def command(scenario: bool) -> None:
    """Print the JSON Schema of the spec language (the committed schemas/agentspec.schema.json),
    or with --scenario that of scenario files."""
    if scenario:
        from agentspec.testing.schema import scenario_schema_text

        click.echo(scenario_schema_text(), nl=False)
    else:
        click.echo(schema_text(), nl=False)
