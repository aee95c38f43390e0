"""`agentspec graph`: the agent tree of a spec, as Mermaid or Graphviz DOT."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import click

from agentspec.cli.common import environment_option, print_diagnostics


@click.command(name="graph")
@click.argument("spec", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["mermaid", "dot"]),
              help="Default: dot for -o FILE.dot or FILE.gv (and rendered images), else "
                   "mermaid.")
@click.option("--output", "-o", type=click.Path(path_type=Path),
              help="Write to this file; .svg, .png or .pdf renders with Graphviz (`dot`).")
@environment_option
def command(spec: Path, fmt: str | None, output: Path | None,
            environment: str | None) -> None:
    """Draw SPEC's agents: kinds, models, tools (approvals marked), backends, offline
    agents, and how they connect."""
    from agentspec.compiler import compile_spec
    from agentspec.review.graph import graph, to_dot, to_mermaid

    compiled = compile_spec(spec, environment=environment)
    if not compiled.ok or compiled.app is None:
        print_diagnostics(compiled.diagnostics, compiled.check.sources)
        sys.exit(1)
    drawn = graph(compiled.app)
    suffix = output.suffix.lower() if output is not None else ""
    rendered = suffix in (".svg", ".png", ".pdf")
    dot_text = fmt == "dot" or rendered or (fmt is None and suffix in (".dot", ".gv"))
    text = to_dot(drawn) if dot_text else to_mermaid(drawn)
    if output is None:
        click.echo(text, nl=False)
        return
    if not rendered:
        output.write_text(text, encoding="utf-8")
        return
    dot = shutil.which("dot")
    if dot is None:
        click.echo(f"agentspec: rendering {output.suffix} needs Graphviz's `dot`: install it "
                   "(apt-get install graphviz, brew install graphviz), or write DOT or "
                   "Mermaid text with -o FILE.dot / FILE.mmd", err=True)
        sys.exit(2)
    done = subprocess.run([dot, f"-T{output.suffix.lower()[1:]}", "-o", str(output)],
                          input=text, text=True, capture_output=True, check=False)
    if done.returncode != 0:
        click.echo(f"agentspec: dot failed: {done.stderr.strip()}", err=True)
        sys.exit(1)
