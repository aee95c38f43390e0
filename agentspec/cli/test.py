"""`agentspec test`: run a spec's scenario files offline and check what happened."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from agentspec.cli.common import environment_option, print_diagnostics


@click.command(name="test")
@click.argument("spec", type=click.Path(path_type=Path))
@click.argument("scenario_files", nargs=-1, type=click.Path(path_type=Path))
@click.option("--format", "output", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="`json`: one document with each scenario's result, "
              "failures and token usage.")
@environment_option
def command(spec: Path, scenario_files: tuple[Path, ...], output: str,
            environment: str | None) -> None:
    """Run SPEC's scenarios (default: scenarios/<spec file name>.yaml beside it) with
    scripted models, offline, and check their expectations. Exit 1 when one fails."""
    from agentspec.testing.runner import ScenarioFileError, ScenarioResult, run_scenarios

    if not spec.is_file():
        raise click.UsageError(f"{spec} does not exist")
    started = time.monotonic()

    def report(result: ScenarioResult) -> None:
        if output == "json":
            return
        label = f"{result.file}::{result.name}"
        click.echo(f"{label} {'PASSED' if result.passed else 'FAILED'}")
        for failure in result.failures:
            click.echo(f"    {failure}")

    try:
        run = run_scenarios(spec, scenario_files, environment=environment, on_result=report)
    except ScenarioFileError as exc:
        if not exc.diagnostics:
            raise click.UsageError(f"no scenarios given and no {exc.path} beside the "
                                   "spec") from None
        print_diagnostics(exc.diagnostics, exc.sources)  # the file's fault, not the command's
        click.echo(f"agentspec: {exc}", err=True)
        sys.exit(2)
    if output == "json":
        scenarios = [{"file": str(r.file), "scenario": r.name, "passed": r.passed,
                      "failures": list(r.failures), "usage": r.usage.as_json()}
                     for r in run.results]
        click.echo(json.dumps({"passed": run.passed, "failed": run.failed,
                               "scenarios": scenarios, "usage": run.usage.as_json()},
                              indent=2))
    else:
        summary = f"{run.passed} passed" + (f", {run.failed} failed" if run.failed else "")
        click.echo(f"{'=' * 10} {summary} in {time.monotonic() - started:.2f}s {'=' * 10}")
    if run.failed:
        _spec_errors(spec, environment)
        sys.exit(1)


def _spec_errors(spec: Path, environment: str | None) -> None:
    """A failed run on a spec with errors: where to fix them, with their hints (a scenario
    names only the code and message). Only after the run: each scenario compiles the spec in
    its own `env:`, which the command's environment may lack."""
    from agentspec.validate.check import check

    checked = check(spec, environment=environment, all_environments=False)
    errors = [d for d in checked.diagnostics if d.is_error]
    if errors:
        click.echo(f"agentspec: {spec} has errors:", err=True)
        print_diagnostics(errors, checked.sources)
