"""`agentspec validate`: check specs and report every problem."""

from __future__ import annotations

import glob
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from agentspec.cli import remembered
from agentspec.diagnostics import (
    FORMATS,
    REGISTRY,
    Diagnostic,
    Severity,
    codes,
    did_you_mean,
    normalize,
    render,
)
from agentspec.diagnostics.render import summary
from agentspec.diagnostics.selectors import Selection, Selector, selector, split
from agentspec.diagnostics.suppress import hear
from agentspec.source import SourceFile

if TYPE_CHECKING:
    from agentspec.testing.names import SpecContext


def selectors(values: tuple[str, ...], option: str, notes: list[str]) -> tuple[Selector, ...]:
    """`--select`/`--ignore` entries as selectors; one that names no code is a usage
    error. Warnings for the user go to `notes`."""
    found: list[Selector] = []
    for entry in split(values):
        parsed = selector(entry)
        if parsed is None:
            names = [*REGISTRY, *(c.name for c in REGISTRY.values())]
            hint = did_you_mean(entry.upper() if entry[:2].lower() == "as" else entry, names)
            raise click.UsageError(f"{option} {entry!r} names no code"
                                   + (f" ({hint})" if hint else ""))
        if parsed.only_errors and option == "--ignore":
            notes.append(f"agentspec: warning: --ignore {entry} names only errors, which are "
                         "always reported\n")
        found.append(parsed)
    if values and not found:
        raise click.UsageError(f"{option} names nothing")
    return tuple(found)


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
@click.option("--select", "select", multiple=True, metavar="CODES",
              help="Report only these warnings and information: codes, names or prefixes "
              "such as AS2, comma-separated (repeatable); replaces the config file's "
              "`select`. Errors are always reported.")
@click.option("--ignore", "ignore", multiple=True, metavar="CODES",
              help="Do not report these warnings and information (codes, names or "
              "prefixes; repeatable); adds to the config file's `ignore`.")
@click.option("--online", is_flag=True, help="Also fetch each remote agent's agent card "
              "(with its headers and timeout) and check that it is one.")
def command(specs: tuple[str, ...], fmt: str, environment: str | None, strict: bool,
            scenario_files: tuple[Path, ...], select: tuple[str, ...],
            ignore: tuple[str, ...], online: bool) -> None:
    """Check SPECS (files or globs) and report every problem at file:line:col, with the
    scenario file beside each spec (`scenarios/<spec file name>.yaml`) and those given, and
    the eval file beside each spec (`evals/<spec file name>.yaml`).

    A `# agentspec: ignore[CODE]` comment on a line hides the warnings of CODE there;
    `agentspec.toml` or `[tool.agentspec]` in `pyproject.toml` sets project defaults.

    Exit status: 0 when clean, 1 when a spec has errors (or warnings with --strict),
    2 for a usage error (a named file that cannot be read) or an internal failure.
    """
    from agentspec.language.prebuilt import without_plugins

    without_plugins()
    from agentspec.evaluation.discover import default_evals
    from agentspec.testing.discover import default_scenarios
    from agentspec.validate.check import check

    notes: list[str] = []  # what goes to standard error
    chosen = (selectors(select, "--select", notes) if select else None,
              selectors(ignore, "--ignore", notes))
    files, named, diagnostics = expand(specs)
    sources: dict[str, SourceFile] = {}
    unreadable = False
    scenarios: dict[Path, SpecContext] = {}  # scenario file -> what its spec tells of it
    heard: dict[Path, Selection] = {}  # scenario file -> what its spec's project hears
    evals: dict[Path, SpecContext] = {}  # eval file -> what its spec tells of it
    for path in files:
        result = check(path, environment=environment, select=chosen[0], ignore=chosen[1])
        diagnostics += result.diagnostics
        if online:
            from agentspec.cli.online import remote_cards

            diagnostics += remote_cards(result)
        sources.update(result.sources)
        unreadable |= path in named and not result.readable
        beside = default_scenarios(path) if result.readable else None
        told = [f for f in ([*scenario_files, beside] if len(files) == 1 else [beside])
                if f is not None]
        eval_file = default_evals(path) if result.readable else None
        if told or eval_file is not None:  # the spec lowered for its names only when needed
            from agentspec.testing.names import spec_context

            context = spec_context(result)
            for scenario_file in told:
                scenarios[scenario_file] = context
                heard[scenario_file] = result.selection
            if eval_file is not None:
                evals[eval_file] = context
                heard[eval_file] = result.selection
    if scenario_files and len(files) != 1:
        from agentspec.testing.names import loose_context

        for scenario_file in scenario_files:
            scenarios.setdefault(scenario_file, loose_context())
    if scenarios:
        from agentspec.testing.check import check_scenarios
    for scenario_file, context in scenarios.items():
        scenario_check = check_scenarios(scenario_file, context.required,
                                         project=context.project, names=context.names)
        diagnostics += hear(scenario_check.diagnostics, scenario_check.sources,
                            heard.get(scenario_file, Selection(*(c or () for c in chosen))))
        sources.update(scenario_check.sources)
        unreadable |= scenario_file in scenario_files and not scenario_check.readable
    for eval_file, context in evals.items():
        from agentspec.evaluation.check import check_evals

        eval_check = check_evals(eval_file, context.required, project=context.project,
                                 names=context.names)
        diagnostics += hear(eval_check.diagnostics, eval_check.sources,
                            heard.get(eval_file, Selection(*(c or () for c in chosen))))
        sources.update(eval_check.sources)
    if strict:
        diagnostics = [d.as_error() for d in diagnostics]
    diagnostics = normalize(diagnostics)
    out = render(diagnostics, sources, fmt)
    errors = sum(d.severity is Severity.ERROR for d in diagnostics)
    if fmt == "concise":
        checked = f"{len(files)} spec{'s' * (len(files) != 1)}" + (
            f", {len(scenarios)} scenario file{'s' * (len(scenarios) != 1)}"
            if scenarios else "") + (
            f", {len(evals)} eval file{'s' * (len(evals) != 1)}" if evals else "")
        verdict = "ok" if not errors else "failed"
        notes.append(f"{verdict}: {checked}, {summary(diagnostics)}\n")
    status = 2 if unreadable else 1 if errors else 0
    remembered.keep(out, "".join(notes), status)
    click.echo(out, nl=False)
    click.echo("".join(notes), err=True, nl=False)
    sys.exit(status)
