"""`agentspec eval`: run evaluation cases on a spec's models and score them with ADK's
evaluators; `--base REV` compares with the spec at a revision, `--export-adk DIR` writes
them as ADK eval sets."""

from __future__ import annotations

import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import click

from agentspec.cli.common import environment_option, print_diagnostics


def _kind(path: Path) -> str:
    """`adk` (an ADK eval set), `eval` (an eval file) or `scenario`, by name and top keys."""
    if path.name.endswith(".json"):
        return "adk"
    from agentspec.parse import load

    value = load(path).value if path.is_file() else None
    return "scenario" if isinstance(value, dict) and "cases" not in value and (
        "messages" in value or "scenarios" in value) else "eval"


def _files(spec: Path, given: tuple[Path, ...], export: bool) -> list[Path]:
    from agentspec.evaluation.discover import default_evals
    from agentspec.testing.discover import default_scenarios

    if given:
        return list(given)
    found = [default_evals(spec)] + ([default_scenarios(spec)] if export else [])
    files = [path for path in found if path is not None]
    if not files:
        where = spec.parent / "evals" / f"{spec.stem}.yaml"
        raise click.UsageError(f"no eval files given and no {where} beside the spec")
    return files


def _context(specs: list[Path], environment: str | None) -> Any:
    """What the specs tell the check of eval files: the first's required state and project;
    the names of all of them (`--base`: a case may name a tool the change removes)."""
    import dataclasses

    from agentspec.testing.names import SpecNames
    from agentspec.testing.runner import spec_context_of as context_of

    found = [context_of(spec, environment) for spec in specs]
    known = [c.names for c in found if c.names is not None]
    if len(known) != len(found):
        return dataclasses.replace(found[0], names=None)
    names = SpecNames(set().union(*(n.agents for n in known)),
                      set().union(*(n.scripted for n in known)),
                      set().union(*(n.tools for n in known)), any(n.opaque for n in known),
                      set().union(*(n.patterns for n in known)))
    return dataclasses.replace(found[0], names=names)


def load_cases(spec: Path, files: list[Path], environment: str | None,
               base: Path | None = None) -> list[Any]:
    """The cases of every file, each checked first (all files, before any case runs) against
    the spec (and the spec at the base revision); a usage error after the diagnostics when
    one has errors."""
    from agentspec.evaluation.adk_sets import read_adk_set, scenario_cases
    from agentspec.evaluation.cases import cases_of
    from agentspec.evaluation.check import check_evals
    from agentspec.testing.runner import ScenarioFileError, load_scenarios

    context = _context([spec] + ([base] if base is not None and base.is_file() else []),
                       environment)
    cases: list[Any] = []
    bad: list[Path] = []
    for path in files:
        kind = _kind(path)
        if kind == "scenario":
            try:
                cases += scenario_cases(load_scenarios(path, context), str(path))
            except ScenarioFileError as exc:
                print_diagnostics(exc.diagnostics, exc.sources)
                bad.append(path)
        elif kind == "adk":
            found, problems = read_adk_set(path)
            print_diagnostics(problems, {})
            bad += [path] if any(d.is_error for d in problems) else []
            cases += found
        else:
            checked = check_evals(path, context.required, project=context.project,
                                  names=context.names)
            print_diagnostics(checked.diagnostics, checked.sources)
            if not checked.ok:
                bad.append(path)
            else:
                cases += cases_of(checked.data, str(path))
    if bad:
        raise click.UsageError(f"{', '.join(map(str, bad))}: not a valid eval file "
                               "(see above)")
    return cases


def _export(spec: Path, cases: list[Any], directory: Path, environment: str | None) -> None:
    from agentspec.evaluation.adk_sets import export
    from agentspec.validate.check import check

    result = check(spec, environment=environment)
    name = result.spec.name if result.spec is not None else spec.stem
    by_source: dict[str, list[Any]] = {}
    for case in cases:
        by_source.setdefault(case.source, []).append(case)
    for source, group in by_source.items():
        stem = Path(source).name.removesuffix(".evalset.json").removesuffix(".yaml")
        kind = "scenarios" if all(c.replies is not None for c in group) and \
            "scenarios" in Path(source).parts else "evals"
        for folder in export(group, name, directory, f"{kind}_{stem}"):
            click.echo(f"wrote {folder}/")


def _render(results: list[Any], runs: int, fmt: str) -> str:
    from agentspec.evaluation import report

    if fmt == "json":
        return report.json_report(results, runs)
    return report.markdown(results, runs) if fmt == "markdown" else report.table(results, runs)


def _compare(spec: Path, base: str, files: list[Path], runs: int, fmt: str,
             environment: str | None) -> bool:
    """Runs the cases at `base` and here; prints the delta; whether this side passed."""
    import json

    from agentspec.cli.diff import _materialize
    from agentspec.evaluation import report
    from agentspec.evaluation.runner import evaluate

    if not base or base.startswith("-"):  # never an option to git
        raise click.UsageError(f"--base {base!r} is not a revision")
    with ExitStack() as stack:
        at_base = str(spec.resolve()) if spec.is_absolute() else f"./{spec}"
        old, _ = _materialize(base, at_base, stack)
        if not old.is_file():
            raise click.UsageError(f"{spec} does not exist at {base}")
        cases = load_cases(spec, files, environment, old)
        before = evaluate(old, cases, environment=environment, runs=runs)
    after = evaluate(spec, cases, environment=environment, runs=runs)
    found = report.deltas(before, after)
    if fmt == "json":
        click.echo(json.dumps({"base": base, "runs": runs,
                               "passed": all(r.passed for r in after),
                               "cases": [d.to_dict() for d in found]}, indent=2))
    elif fmt == "markdown":
        click.echo(report.delta_markdown(found, base), nl=False)
    else:
        click.echo(report.delta_table(found, base), nl=False)
    return all(r.passed for r in after)


@click.command(name="eval")
@click.argument("spec", type=click.Path(path_type=Path))
@click.argument("eval_files", nargs=-1, type=click.Path(path_type=Path))
@click.option("--runs", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Run each case this many times; scores are the runs' mean (and spread).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]),
              default="table", show_default=True, help="How to print the results.")
@click.option("--base", metavar="REV", help="Also run the cases on the spec at git REV and "
              "print the change per case and criterion.")
@click.option("--export-adk", "export_dir", metavar="DIR", type=click.Path(path_type=Path),
              help="Write the cases (and the spec's scenarios) as ADK eval sets with their "
              "test_config.json into DIR, for `adk eval`, instead of running them.")
@environment_option
def command(spec: Path, eval_files: tuple[Path, ...], runs: int, fmt: str, base: str | None,
            export_dir: Path | None, environment: str | None) -> None:
    """Run SPEC's evaluation cases (default: evals/<spec file name>.yaml beside it; also
    ADK *.evalset.json files and scenario files) on its models and score them with ADK's
    evaluators. Exit 1 when a case scores below a threshold."""
    from agentspec.evaluation.app import SpecError
    from agentspec.evaluation.runner import evaluate

    if not spec.is_file():
        raise click.UsageError(f"{spec} does not exist")
    for path in eval_files:
        if not path.is_file():
            raise click.UsageError(f"{path} does not exist")
    files = _files(spec, eval_files, export_dir is not None)
    if export_dir is not None:
        try:
            _export(spec, load_cases(spec, files, environment), export_dir, environment)
        except OSError as exc:
            raise click.ClickException(f"cannot write {export_dir}: {exc}") from None
        return
    try:
        if base is not None:
            passed = _compare(spec, base, files, runs, fmt, environment)
        else:
            cases = load_cases(spec, files, environment)
            results = evaluate(spec, cases, environment=environment, runs=runs)
            click.echo(_render(results, runs, fmt), nl=False)
            passed = all(r.passed for r in results)
    except SpecError as exc:
        raise click.ClickException(f"{spec} cannot run: {exc}") from None
    if not passed:
        sys.exit(1)
