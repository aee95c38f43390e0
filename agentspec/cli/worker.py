"""`agentspec worker`: run the background jobs of a spec's offline agents."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

import click

from agentspec.cli.common import built_app, environment_option, require_credentials


def _reporter(quiet: bool) -> Any:
    def report(what: str, job: Any) -> None:
        if quiet:
            return
        detail = f" ({job.error})" if what in ("failed", "will retry") and job.error else ""
        click.echo(f"{what:>13}  {job.id}  {job.agent}  attempt {job.attempts}/"
                   f"{job.max_attempts}{detail}")
    return report


@click.command(name="worker")
@click.argument("spec", type=click.Path(path_type=Path))
@click.option("--concurrency", type=click.IntRange(1, 256), default=1, show_default=True,
              help="Jobs run at the same time.")
@click.option("--until-idle", is_flag=True, help="Stop when no job is left to run.")
@click.option("--script", type=click.Path(path_type=Path),
              help="Run the agents offline with scripted replies (see `run --script`).")
@click.option("--grace", type=float, default=30.0, show_default=True,
              help="Seconds running jobs get to finish after SIGTERM before they are "
                   "released to other workers.")
@click.option("--quiet", is_flag=True, help="Print nothing per job.")
@environment_option
def command(spec: Path, concurrency: int, until_idle: bool, script: Path | None, grace: float,
            quiet: bool, environment: str | None) -> None:
    """Claim and run the background jobs of SPEC's offline agents (Ctrl-C or SIGTERM stops:
    running jobs finish, or are released after --grace seconds)."""
    app = built_app(spec, environment)
    from agentspec.runtime.jobs import StoreError
    from agentspec.runtime.jobs.delegation import app_job_settings, offline_agents
    from agentspec.runtime.jobs.worker import Worker, run_agent
    from agentspec.runtime.state import initial_state

    settings = app_job_settings(app)
    agents = offline_agents(app.root_agent)
    if settings is None or not agents:
        click.echo(f"agentspec: {spec} has no offline agents (`execution_mode: offline`) "
                   "behind a delegation, so there is nothing to run", err=True)
        sys.exit(1)
    if script is not None:
        from agentspec.cli.run import load_script
        from agentspec.testing.scripted import ScriptError, install_script

        try:
            install_script(app.root_agent, load_script(script).replies,
                           app.events_compaction_config)
        except ScriptError as exc:
            raise click.UsageError(str(exc)) from exc
    else:
        require_credentials()
    state = initial_state(app)
    worker = Worker(agents, settings, concurrency=concurrency, grace_seconds=grace,
                    report=_reporter(quiet),
                    run=lambda agent, request: run_agent(agent, request, state))
    if not quiet:
        click.echo(f"worker {worker.owner}: {', '.join(sorted(agents))} from {settings.url} "
                   f"(concurrency {concurrency})")

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        await worker.serve(stop, until_idle=until_idle)

    try:
        asyncio.run(main())
    except StoreError as exc:
        click.echo(f"agentspec: {exc}", err=True)
        sys.exit(1)
    if not quiet:
        click.echo(f"worker {worker.owner}: stopped ({worker.done} done, {worker.failed} "
                   "failed)")
