"""`agentspec import adk`: convert an ADK Agent Config to a spec."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from agentspec.cli.common import print_diagnostics
from agentspec.diagnostics import FORMATS


@click.group(name="import")
def command() -> None:
    """Convert agents written for another tool into a spec."""


@command.command(name="adk")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), metavar="SPEC",
              help="Where to write the spec (default: <folder>.agentspec.yaml beside the agent "
              "folder, so its Python modules import the same way).")
@click.option("--allow-loss", is_flag=True, help="Convert settings the spec language lacks "
              "by dropping them, with a warning and a comment, instead of refusing.")
@click.option("--write-shims", is_flag=True, help="Write adk_shims.py beside the spec for tools "
              "ADK builds from `args` (a tool class or factory with arguments).")
@click.option("--force", is_flag=True, help="Replace the output file (and adk_shims.py) when "
              "it exists.")
@click.option("--format", "fmt", type=click.Choice(sorted(FORMATS)), default="concise",
              show_default=True, help="How to print diagnostics.")
def adk(path: Path, output: Path | None, allow_loss: bool, write_shims: bool, force: bool,
        fmt: str) -> None:
    """Convert the ADK Agent Config at PATH (an agent folder or a YAML file) into one spec.

    Exit status: 0 converted (perhaps with warnings and notes), 1 refused or the written spec
    has errors, 2 usage.
    """
    from agentspec.adkimport import import_adk

    result = import_adk(path, output=output, allow_loss=allow_loss, write_shims=write_shims,
                        force=force)
    print_diagnostics(result.diagnostics, result.sources, fmt)
    for written in result.written:
        click.echo(f"wrote {written}", err=True)
    if not result.written:
        click.echo("refused: nothing written", err=True)
    sys.exit(0 if result.ok else 1)
