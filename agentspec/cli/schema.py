"""`agentspec schema`: print the JSON Schema, or write it into a project for editors."""

from __future__ import annotations

from pathlib import Path

import click

from agentspec import safefs
from agentspec.language.schema import schema_text


@click.command(name="schema")
@click.option("--scenario", is_flag=True, help="The schema of scenario files (`agentspec "
              "test`) instead: the committed schemas/scenario.schema.json.")
@click.option("--eval", "eval_files", is_flag=True, help="The schema of eval files "
              "(`agentspec eval`) instead: the committed schemas/eval.schema.json.")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the schema to this file (replacing an older one; its directory is "
                   "created) instead of printing it. Point the modeline "
                   "`# yaml-language-server: $schema=PATH` at it.")
def command(scenario: bool, eval_files: bool, output: Path | None) -> None:
    """Print the JSON Schema of the spec language (the committed schemas/agentspec.schema.json),
    or with --scenario that of scenario files, --eval that of eval files; -o writes it into a
    file instead."""
    if scenario and eval_files:
        raise click.UsageError("give --scenario or --eval, not both")
    if eval_files:
        from agentspec.evaluation.schema import eval_schema_text

        text = eval_schema_text()
    elif scenario:
        from agentspec.testing.schema import scenario_schema_text

        text = scenario_schema_text()
    else:
        text = schema_text()
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        with safefs.directory(output.parent, create=True) as folder:
            safefs.write_file(folder, output.name, text.encode("utf-8"),
                              shown=str(output), replace=True)
    except OSError as exc:
        raise click.ClickException(str(exc) if isinstance(exc, safefs.UnsafePath)
                                   else f"cannot write {output}: {exc.strerror or exc}") from exc
    click.echo(f"wrote {output}")
