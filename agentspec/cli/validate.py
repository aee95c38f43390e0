"""`agentspec validate`: check specs and report every problem."""

from __future__ import annotations

import glob
import os
import sys
from pathlib import Path

import click

from agentspec.diagnostics import FORMATS, Diagnostic, Severity, codes, normalize, render
from agentspec.diagnostics.render import summary
from agentspec.source import SourceFile


def expand(patterns: tuple[str, ...]) -> tuple[list[Path], set[Path], list[Diagnostic]]:
    """Files matched by `patterns`, the ones named outright, and a diagnostic for each glob
    that matches nothing."""
    files: list[Path] = []
    named: set[Path] = set()
    missing: list[Diagnostic] = []
    for pattern in patterns:
        if glob.has_magic(pattern):
            matches = sorted(glob.glob(pattern, recursive=True))
            if not matches:
                missing.append(codes.FILE_NOT_FOUND(f"no file matches `{pattern}`", None))
            files += [Path(m) for m in matches if Path(m).is_file()]
        else:
            files.append(Path(pattern))
            named.add(Path(pattern))
    return list(dict.fromkeys(files)), named, missing


@click.command(name="validate")
@click.argument("specs", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(sorted(FORMATS)), default="concise",
              show_default=True, help="How to print diagnostics.")
@click.option("--env", "environment", metavar="NAME",
              help="Check with this environment overlay applied (default: the base spec and "
              "every overlay).")
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option("--scenarios", "scenario_files", multiple=True, metavar="FILE",
              type=click.Path(path_type=Path),
              help="Also check this scenario file (repeatable); `scenarios/<spec file "
              "name>.yaml` beside each spec is checked without it.")
@click.option("--online", is_flag=True, help="Also fetch each remote agent's agent card "
              "(with its headers and timeout) and check that it is one.")
def command(specs: tuple[str, ...], fmt: str, environment: str | None, strict: bool,
            scenario_files: tuple[Path, ...], online: bool) -> None:
    """Check SPECS (files or globs) and report every problem at file:line:col, with the
    scenario file beside each spec (`scenarios/<spec file name>.yaml`) and those given.

    Exit status: 0 when clean, 1 when a spec has errors (or warnings with --strict),
    2 for a usage error (a named file that cannot be read) or an internal failure.
    """
    # validate runs no user code, so pydantic's plugin scan (entry points) is pure start-up cost
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from agentspec.testing.check import check_scenarios
    from agentspec.testing.discover import default_scenarios
    from agentspec.testing.names import SpecContext, loose_context, spec_context
    from agentspec.validate.check import check

    files, named, diagnostics = expand(specs)
    sources: dict[str, SourceFile] = {}
    unreadable = False
    scenarios: dict[Path, SpecContext] = {}  # scenario file -> what its spec tells of it
    for path in files:
        result = check(path, environment=environment)
        diagnostics += result.diagnostics
        if online:
            from agentspec.cli.online import remote_cards

            diagnostics += remote_cards(result)
        sources.update(result.sources)
        unreadable |= path in named and not result.readable
        context = spec_context(result)
        beside = default_scenarios(path) if result.readable else None
        for scenario_file in [*scenario_files, beside] if len(files) == 1 else [beside]:
            if scenario_file is not None:
                scenarios[scenario_file] = context
    for scenario_file in scenario_files if len(files) != 1 else ():
        scenarios.setdefault(scenario_file, loose_context())
    for scenario_file, context in scenarios.items():
        scenario_check = check_scenarios(scenario_file, context.required,
                                         project=context.project, names=context.names)
        diagnostics += scenario_check.diagnostics
        sources.update(scenario_check.sources)
        unreadable |= scenario_file in scenario_files and not scenario_check.readable
    if strict:
        diagnostics = [d.as_error() for d in diagnostics]
    diagnostics = normalize(diagnostics)
    click.echo(render(diagnostics, sources, fmt), nl=False)
    errors = sum(d.severity is Severity.ERROR for d in diagnostics)
    if fmt == "concise":
        checked = f"{len(files)} spec{'s' * (len(files) != 1)}" + (
            f", {len(scenarios)} scenario file{'s' * (len(scenarios) != 1)}"
            if scenarios else "")
        status = "ok" if not errors else "failed"
        click.echo(f"{status}: {checked}, {summary(diagnostics)}", err=True)
    sys.exit(2 if unreadable else 1 if errors else 0)
