"""`agentspec test`: run a spec's scenario files offline and check what happened."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import click

from agentspec.cli.common import environment_option, print_diagnostics


def _files(spec: Path, given: tuple[Path, ...]) -> list[Path]:
    if given:
        return list(given)
    default = spec.parent / "scenarios" / f"{spec.stem}.yaml"
    if not default.is_file():
        raise click.UsageError(f"no scenarios given and no {default} beside the spec")
    return [default]


def _load(path: Path) -> list[Any]:
    from agentspec.parse import load
    from agentspec.runtime.scenarios import ScenarioError, parse_scenarios
    from agentspec.runtime.scripted import ScriptError, parse_decision

    parsed = load(path)
    if not parsed.ok:
        print_diagnostics(parsed.diagnostics, {parsed.source.name: parsed.source})
        raise click.UsageError(f"{path} is not a readable scenario file")
    try:
        scenarios = parse_scenarios(parsed.value, path.stem)
        for scenario in scenarios:
            if scenario.decisions is not None:
                scenario.decisions = [parse_decision(d) for d in scenario.decisions]
    except (ScenarioError, ScriptError) as exc:
        raise click.UsageError(f"{path}: {exc}") from exc
    return scenarios


async def _play(app: Any, scenario: Any) -> Any:
    from google.adk.artifacts import InMemoryArtifactService
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    from agentspec.runtime.conversation import turn
    from agentspec.runtime.jobs.delegation import JobDelivery
    from agentspec.runtime.scenarios import Outcome

    outcome = Outcome()
    decisions = None if scenario.decisions is None else list(scenario.decisions)

    def decide(pending: Any) -> Any:
        if not decisions:
            raise AssertionError(f"{pending.agent} asked to approve {pending.tool}, and the "
                                 "scenario has no decision left for it")
        return decisions.pop(0)

    runner = Runner(app=app, session_service=InMemorySessionService(),
                    artifact_service=InMemoryArtifactService())
    try:
        session = await runner.session_service.create_session(
            app_name=app.name, user_id="user", state=dict(scenario.state))
        for message in scenario.messages:
            left = await turn(runner, session.id, message, decide=decide,
                              on_event=outcome.record)
            if left:
                raise AssertionError(f"{left[0].tool} is still waiting for approval")
        stored = await runner.session_service.get_session(app_name=app.name, user_id="user",
                                                          session_id=session.id)
    finally:
        await runner.close()
    outcome.state = dict(stored.state) if stored else {}
    for plugin in app.plugins or ():
        if isinstance(plugin, JobDelivery):
            outcome.jobs = [job.to_dict() for job in plugin.settings.open().recent()]
    return outcome


def _run_one(compiled: Any, scenario: Any, index: int) -> list[str]:
    from agentspec.build import build_objects
    from agentspec.runtime.scenarios import StubTools, check
    from agentspec.runtime.scripted import ScriptedFailure, ScriptError, install_script

    os.environ["AGENTSPEC_JOBS_STORE"] = f"memory://scenario-{index}"  # jobs of its own
    app, problems = build_objects(compiled)
    if problems:
        return [f"cannot build: {p.code} {p.message}" for p in problems]
    try:
        install_script(app.root_agent, scenario.replies)
        if scenario.stubs:
            app.plugins.append(StubTools(scenario.stubs))
        outcome = asyncio.run(_play(app, scenario))
    except (AssertionError, ScriptError, ScriptedFailure) as exc:
        return [str(exc)]
    except Exception as exc:  # noqa: BLE001 - an agent's failure fails the scenario
        return [f"the run failed: {type(exc).__name__}: {exc}"]
    return check(scenario.expect, outcome)


@click.command(name="test")
@click.argument("spec", type=click.Path(path_type=Path))
@click.argument("scenario_files", nargs=-1, type=click.Path(path_type=Path))
@environment_option
def command(spec: Path, scenario_files: tuple[Path, ...], environment: str | None) -> None:
    """Run SPEC's scenarios (default: scenarios/<spec name>.yaml beside it) with scripted
    models, offline, and check their expectations. Exit 1 when one fails."""
    from agentspec.build import compile_spec

    compiled = compile_spec(spec, environment=environment)
    if not compiled.ok:
        print_diagnostics(compiled.diagnostics, compiled.check.sources)
        sys.exit(1)
    started = time.monotonic()
    saved = os.environ.get("AGENTSPEC_JOBS_STORE")
    passed = failed = 0
    try:
        for path in _files(spec, scenario_files):
            for index, scenario in enumerate(_load(path)):
                failures = _run_one(compiled, scenario, passed + failed + index)
                label = f"{path}::{scenario.name}"
                if failures:
                    failed += 1
                    click.echo(f"{label} FAILED")
                    for failure in failures:
                        click.echo(f"    {failure}")
                else:
                    passed += 1
                    click.echo(f"{label} PASSED")
    finally:
        if saved is None:
            os.environ.pop("AGENTSPEC_JOBS_STORE", None)
        else:
            os.environ["AGENTSPEC_JOBS_STORE"] = saved
    summary = f"{passed} passed" + (f", {failed} failed" if failed else "")
    click.echo(f"{'=' * 10} {summary} in {time.monotonic() - started:.2f}s {'=' * 10}")
    if failed:
        sys.exit(1)
