"""The `agentspec` command group: thin commands, each in its own module, imported when used."""

from __future__ import annotations

import errno
import importlib
import os
import sys
import traceback
from typing import Any

import click

from agentspec.contract.extras import DISTRIBUTION

__all__ = ["COMMANDS", "cli"]

COMMANDS = {
    "validate": ("agentspec.cli.validate", "Check specs and report every problem."),
    "build": ("agentspec.cli.build", "Compile a spec into a package ADK loads."),
    "run": ("agentspec.cli.run", "Chat with a spec's agents, live or scripted."),
    "schema": ("agentspec.cli.schema", "Print the JSON Schema of the spec language."),
    "explain": ("agentspec.cli.explain", "Explain a diagnostic code."),
    "diff": ("agentspec.cli.diff", "Show what a spec change changes, with risks."),
    "graph": ("agentspec.cli.graph", "Draw a spec's agents as Mermaid or DOT."),
    "init": ("agentspec.cli.init", "Start a project from a template."),
    "test": ("agentspec.cli.test", "Run a spec's scenario tests offline."),
    "eval": ("agentspec.cli.eval", "Score a spec's agents on evaluation cases."),
    "worker": ("agentspec.cli.worker", "Run the background jobs of offline agents."),
    "jobs": ("agentspec.cli.jobs", "List, show, retry, cancel and deliver background jobs."),
    "import": ("agentspec.cli.import_", "Convert an ADK Agent Config into a spec."),
    "lsp": ("agentspec.cli.lsp", "Run the language server for editors (stdio)."),
    "serve": ("agentspec.cli.serve", "Serve a spec's agent over A2A, with an agent card."),
}


#: what a system refuses to write, whoever asks: a full disk or quota, a read-only or failing
#: device
_SYSTEM_REFUSALS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO}


def _refused_by_system(exc: Exception) -> str | None:
    """What to tell the user when `exc` is their system's refusal, not a bug of ours."""
    if isinstance(exc, OSError) and exc.errno in _SYSTEM_REFUSALS:
        where = f" to {exc.filename}" if exc.filename else ""
        return f"the system refused a write{where}: {exc.strerror}"
    streams = {(getattr(s, "encoding", None) or "").lower() for s in (sys.stdout, sys.stderr)}
    if isinstance(exc, UnicodeEncodeError) and exc.encoding.lower() in streams:
        return (f"the output holds characters the terminal's encoding ({exc.encoding}) "
                "cannot write: use a UTF-8 locale or set PYTHONIOENCODING=utf-8")
    return None


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

    def invoke(self, ctx: click.Context) -> Any:
        """An unexpected exception is an internal failure: exit 2 with a short message, not a
        traceback (AGENTSPEC_DEBUG=1 shows it)."""
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:  # the reader left (`explain --all | head`): click exits 1
            raise
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            if os.environ.get("AGENTSPEC_DEBUG"):
                traceback.print_exc()
            refused = _refused_by_system(exc)
            if refused is not None:
                click.echo(f"agentspec: {refused}", err=True)
                ctx.exit(2)
            click.echo(f"agentspec: internal error: {type(exc).__name__}: {exc}\n"
                       "This is a bug in agentspec; please report it with the spec that caused "
                       "it (AGENTSPEC_DEBUG=1 shows the traceback).", err=True)
            ctx.exit(2)

    def format_commands(self, ctx: click.Context, formatter: Any) -> None:
        rows = [(name, help_text) for name, (_, help_text) in sorted(COMMANDS.items())]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name=DISTRIBUTION, prog_name="agentspec")
def cli() -> None:
    """Author Google ADK agents in YAML: validate, build and review agent specs."""
