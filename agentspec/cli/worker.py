"""`agentspec worker`: run the background jobs of a spec's offline agents."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

import click

from agentspec.cli.common import built, environment_option, require_credentials, services


def _reporter(quiet: bool, usage: dict[str, Any]) -> Any:
    def report(what: str, job: Any) -> None:
        spent = usage.pop(job.id, None) if what in ("done", "failed", "will retry") else None
        if quiet:
            return
        detail = f" ({job.error})" if what in ("failed", "will retry", "resume failed") and \
            job.error else ""
        tokens = f"  {spent.total.text()}" if spent is not None and spent.total.calls else ""
        click.echo(f"{what:>13}  {job.id}  {job.agent}  attempt {job.attempts}/"
                   f"{job.max_attempts}{tokens}{detail}")
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
@click.option("--session", "session_url", metavar="URL",
              help="The conversation store the parents of `jobs.on_done: resume` jobs are "
                   "resumed in: the front end's (default: AGENTSPEC_SESSIONS, else the "
                   "spec's `sessions:`).")
@click.option("--quiet", is_flag=True, help="Print nothing per job.")
@environment_option
def command(spec: Path, concurrency: int, until_idle: bool, script: Path | None, grace: float,
            session_url: str | None, quiet: bool, environment: str | None) -> None:
    """Claim and run the background jobs of SPEC's offline agents, and resume their parents
    when the spec says `jobs.on_done: resume` (Ctrl-C or SIGTERM stops: running jobs finish,
    or are released after --grace seconds)."""
    spec_built = built(spec, environment)
    app = spec_built.app
    from agentspec.runtime.jobs import StoreError
    from agentspec.runtime.jobs.delegation import app_job_settings, offline_agents
    from agentspec.runtime.jobs.resume import Resumer
    from agentspec.runtime.jobs.worker import Worker, run_agent
    from agentspec.runtime.sessions import SessionsError, reachable, redacted, sessions_url
    from agentspec.runtime.state import initial_state

    settings = app_job_settings(app)
    agents = offline_agents(app.root_agent)
    if settings is None or not agents:
        click.echo(f"agentspec: {spec} has no offline agents (`execution_mode: offline`) "
                   "behind a delegation, so there is nothing to run", err=True)
        sys.exit(1)
    models: dict[str, Any] = {}
    if script is not None:
        from agentspec.cli.run import load_script
        from agentspec.testing.scripted import ScriptError, install_script

        try:  # the offline agents' replies, and the resumed parents'
            models = install_script(app.root_agent, load_script(script).replies,
                                    app.events_compaction_config)
        except ScriptError as exc:
            raise click.UsageError(str(exc)) from exc
    else:
        require_credentials(spec_built.gemini)
    state = initial_state(app)
    from agentspec.runtime.observing import Observer, observer_of

    observer_of(app)  # each job's tokens, for its report line
    observers = [p for p in app.plugins if isinstance(p, Observer)]
    usage: dict[str, Any] = {}
    session_url = sessions_url(session_url, spec_built.sessions)
    resumer = None
    if session_url is not None:
        from agentspec.cli.run_output import describe

        sessions, artifacts = services(session_url)
        def show(event: Any) -> None:  # the resumed turns, as `agentspec run` shows turns
            for line in [] if quiet else describe(event):
                click.echo(line)

        resumer = Resumer(app, sessions, artifacts, on_event=show)
    worker: Any = Worker(agents, settings, concurrency=concurrency, grace_seconds=grace,
                         report=_reporter(quiet, usage), resumer=resumer, usage=usage,
                         run=lambda agent, request: run_agent(agent, request, state, observers))
    if settings.url.startswith("temporal://"):
        if until_idle:
            raise click.UsageError("--until-idle is for sqlite:// and postgresql:// stores: "
                                   "a Temporal worker serves its task queue until stopped")
        from agentspec.cli.temporal_worker import temporal_jobs

        worker = temporal_jobs(worker)
    if not quiet:
        resuming = "" if session_url is None else \
            f", resuming parents in {redacted(session_url)}"
        click.echo(f"worker {worker.owner}: {', '.join(sorted(agents))} from "
                   f"{redacted(settings.url)} (concurrency {concurrency}{resuming})")

    async def main() -> None:
        if resumer is not None:
            await reachable(resumer.sessions, session_url, app.name)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        await worker.serve(stop, until_idle=until_idle)

    try:
        asyncio.run(main())
    except (StoreError, SessionsError) as exc:
        click.echo(f"agentspec: {exc}", err=True)
        sys.exit(1)
    if not quiet:
        resumed = "" if resumer is None else f", {worker.resumed} resumed"
        click.echo(f"worker {worker.owner}: stopped ({worker.done} done, {worker.failed} "
                   f"failed{resumed})")
    problems = list(dict.fromkeys(p for m in models.values() for p in m.problems))
    if problems:  # a scripted agent met the end of its replies: the script is wrong
        for problem in problems:
            click.echo(f"agentspec: {problem}", err=True)
        sys.exit(1)
