"""`agentspec build`: compile a spec into a package that `adk run` and `adk web` load."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from agentspec.cli.common import environment_option, print_diagnostics

if TYPE_CHECKING:
    from agentspec.compiler import Compiled


@click.command(name="build")
@click.argument("spec", type=click.Path(path_type=Path))
@click.option("-o", "--output", "out_dir", type=click.Path(path_type=Path),
              help="Directory that receives the package `<name>/` (default: the spec's; "
                   "with --bundle, `dist/` beside the spec).")
@environment_option
@click.option("--check", "check_only", is_flag=True,
              help="Write nothing; exit 1 with a diff when the package on disk is stale.")
@click.option("--bundle", is_flag=True,
              help="A self-contained package for `adk deploy`: the spec's modules and the "
                   "files its agents read copied inside, and a requirements.txt that "
                   "installs agentspec from a wheel inside it.")
@click.option("--include", "include", multiple=True, type=click.Path(path_type=Path),
              help="With --bundle: ship this file or directory too (repeatable): a starting "
                   "file inside a backend root, whose data is otherwise left out, or a file "
                   "the secret checks leave out that you have checked.")
def command(spec: Path, out_dir: Path | None, environment: str | None, check_only: bool,
            bundle: bool, include: tuple[Path, ...]) -> None:
    """Compile SPEC into the package OUT/<name>/ (agent.py with `app` and `root_agent`)."""
    from agentspec.compiler import (
        build_objects,
        compile_spec,
        emit_package,
        stale_files,
        write_package,
    )

    # the generated files hold `${env.X}` references, never their values: a check needs no
    # secrets (a pull request from a fork has none)
    compiled = compile_spec(spec, environment=environment, unset_allowed=check_only)
    if not compiled.ok:
        print_diagnostics(compiled.diagnostics, compiled.check.sources)
        sys.exit(2 if not compiled.check.readable else 1)
    if check_only and compiled.unset:
        print_diagnostics(compiled.unset, compiled.check.sources)
        click.echo("note: the agents are not constructed (their modules not imported) while "
                   "a variable they read is unset; the generated files are compared", err=True)
    else:
        from agentspec.runtime.telemetry import TRACING

        tracing = TRACING.set(False)  # building traces nothing
        try:
            _, problems = build_objects(compiled)  # imports the user's modules: fail here
        finally:
            TRACING.reset(tracing)
        if problems:
            print_diagnostics(problems, compiled.check.sources)
            sys.exit(1)
    default = compiled.spec_dir / "dist" if bundle else compiled.spec_dir
    target = out_dir if out_dir is not None else default
    assert compiled.plan is not None
    package = target / compiled.plan.app_name
    if include and not bundle:
        raise click.UsageError("--include goes with --bundle")
    if bundle:
        (_check_bundle if check_only else _bundle)(compiled, target, include)
        return
    files = emit_package(compiled, target)
    if check_only:
        diffs = stale_files(files, target)
        for diff in diffs:
            click.echo(diff)
        click.echo(f"{'stale' if diffs else 'up to date'}: {package}", err=True)
        sys.exit(1 if diffs else 0)
    refused = write_package(files, target)
    if refused:
        print_diagnostics(refused, compiled.check.sources)
        sys.exit(1)
    for relative in sorted(files):
        click.echo(f"wrote {target / relative}")


def _bundle(compiled: Compiled, target: Path, include: tuple[Path, ...]) -> None:
    from agentspec.bundle import write_bundle
    from agentspec.compiler import agent_tree

    written, refused = write_bundle(compiled, target, include)
    if written is None:
        print_diagnostics(refused, compiled.check.sources)
        sys.exit(1)
    for note in written.contents.notes:
        click.echo(f"note: {note}", err=True)
    for path, why in written.copied.left_out:
        click.echo(f"left out `{path}`: {why}", err=True)
    extras = ", ".join(sorted(written.contents.extras)) or "none"
    if compiled.app is not None and any(
            agent.offline for agent in agent_tree(compiled.app.root)):
        click.echo(f"background jobs: cd {written.package} && agentspec worker {written.spec}")
    click.echo(f"wrote the bundle {written.package}: {written.copied.files} project files "
               f"({written.copied.size} bytes), {written.wheel} (extras: {extras})")


def _check_bundle(compiled: Compiled, target: Path, include: tuple[Path, ...]) -> None:
    from agentspec.bundle import stale_bundle

    assert compiled.plan is not None
    differences, refused = stale_bundle(compiled, target, include)
    if refused:
        print_diagnostics(refused, compiled.check.sources)
        sys.exit(1)
    for line in differences:
        click.echo(line)
    package = target / compiled.plan.app_name
    click.echo(f"{'stale' if differences else 'up to date'}: {package}", err=True)
    sys.exit(1 if differences else 0)
