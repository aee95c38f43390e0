"""`agentspec jobs`: look at and act on the background jobs of a spec's job store."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import click

from agentspec.cli.common import environment_option, print_diagnostics


def _store_url(spec: Path | None, store: str | None, environment: str | None) -> str:
    if store is not None:
        return store
    from agentspec.runtime.jobs.delegation import STORE_OVERRIDE

    if os.environ.get(STORE_OVERRIDE):
        return os.environ[STORE_OVERRIDE]
    if spec is None:
        raise click.UsageError("give the spec (--spec SPEC) or the store (--store URL)")
    from agentspec.build import compile_spec
    from agentspec.runtime.env import MissingEnvironmentVariable, expand

    compiled = compile_spec(spec, environment=environment)
    if not compiled.ok or compiled.app is None:
        print_diagnostics(compiled.diagnostics, compiled.check.sources)
        sys.exit(1)
    jobs = compiled.app.jobs
    if jobs is None:
        raise click.UsageError(f"{spec} has no offline agents and no `jobs` section")
    if jobs.sqlite_path is not None:
        return f"sqlite:///{(compiled.spec_dir / jobs.sqlite_path).resolve()}"
    try:
        return expand(jobs.store)
    except MissingEnvironmentVariable as exc:
        raise click.UsageError(str(exc)) from exc


def _open(ctx: click.Context) -> Any:
    from agentspec.runtime.jobs import StoreError, open_store

    try:
        return open_store(ctx.obj["url"])
    except StoreError as exc:
        click.echo(f"agentspec: {exc}", err=True)
        sys.exit(1)


def _when(moment: float | None) -> str:
    return "-" if moment is None else time.strftime("%Y-%m-%d %H:%M:%S",
                                                   time.localtime(moment))


def _short(value: Any, limit: int = 48) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _table(jobs: list[Any]) -> None:
    rows = [("ID", "AGENT", "STATUS", "TRIES", "CREATED", "INPUT")] + [
        (j.id, j.agent, j.status, f"{j.attempts}/{j.max_attempts}", _when(j.created_at),
         _short(j.input)) for j in jobs]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths,
                                                                       strict=True)).rstrip())


def _emit(ctx: click.Context, job: Any) -> None:
    if ctx.obj["json"]:
        click.echo(json.dumps(job.to_dict(), indent=2, default=str))
        return
    for key, value in job.to_dict().items():
        if key.endswith("_at"):
            value = _when(value)
        click.echo(f"{key:>16}: {value if isinstance(value, str) else json.dumps(value)}")


@click.group(name="jobs")
@click.option("--spec", type=click.Path(path_type=Path), help="The spec whose store to use.")
@click.option("--store", metavar="URL", help="The store URL instead (sqlite:///..., "
              "postgresql://...).")
@click.option("--json", "as_json", is_flag=True, help="JSON output.")
@environment_option
@click.pass_context
def command(ctx: click.Context, spec: Path | None, store: str | None, as_json: bool,
            environment: str | None) -> None:
    """Background jobs of offline agents (see `agentspec worker`)."""
    ctx.obj = {"url": _store_url(spec, store, environment), "json": as_json}


@command.command(name="list")
@click.option("--status", type=click.Choice(["QUEUED", "RUNNING", "DONE", "FAILED",
                                             "CANCELLED"]), help="Only jobs with this status.")
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True)
@click.pass_context
def list_jobs(ctx: click.Context, status: str | None, limit: int) -> None:
    """The newest jobs."""
    jobs = _open(ctx).recent(status=status, limit=limit)
    if ctx.obj["json"]:
        click.echo(json.dumps([j.to_dict() for j in jobs], indent=2, default=str))
    elif jobs:
        _table(jobs)
    else:
        click.echo("no jobs")


def _one(ctx: click.Context, job: Any, job_id: str) -> None:
    if job is None:
        click.echo(f"agentspec: there is no job {job_id}", err=True)
        sys.exit(1)
    _emit(ctx, job)


@command.command()
@click.argument("job_id")
@click.pass_context
def show(ctx: click.Context, job_id: str) -> None:
    """Everything about one job."""
    _one(ctx, _open(ctx).get(job_id), job_id)


@command.command()
@click.argument("job_id")
@click.pass_context
def retry(ctx: click.Context, job_id: str) -> None:
    """Queue a FAILED or CANCELLED job again, with fresh attempts."""
    _one(ctx, _open(ctx).retry(job_id), job_id)


@command.command()
@click.argument("job_id")
@click.pass_context
def cancel(ctx: click.Context, job_id: str) -> None:
    """Cancel a QUEUED or RUNNING job (a running one finishes, but its result is dropped)."""
    _one(ctx, _open(ctx).cancel(job_id), job_id)


@command.command()
@click.option("--session", "session_url", metavar="URL", required=True,
              help="The conversation store of `agentspec run --session` (or the spec's "
                   "`sessions:`).")
@click.pass_context
def deliver(ctx: click.Context, session_url: str) -> None:
    """Put every finished, undelivered job into its conversation now (otherwise that happens
    when the conversation next runs); jobs that resume their parent are left to the worker."""
    from agentspec.cli.common import services
    from agentspec.runtime.jobs.delegation import JobSettings, deliver

    store = _open(ctx)
    sessions, _ = services(session_url)
    conversations = {(job.app_name, job.user_id, job.session_id)
                     for status in ("DONE", "FAILED")
                     for job in store.recent(status=status, limit=10_000)
                     if job.delivered_at is None}

    async def main() -> int:
        count = 0
        for app_name, user_id, session_id in sorted(conversations):
            session = await sessions.get_session(app_name=app_name, user_id=user_id,
                                                 session_id=session_id)
            if session is None:
                continue
            for event in await deliver(JobSettings(ctx.obj["url"]), sessions, session,
                                       "agentspec-jobs-deliver"):
                job = (event.custom_metadata or {})["agentspec_job"]
                click.echo(f"delivered {job['job_id']} ({event.author}, {job['status']}) to "
                           f"session {session_id}")
                count += 1
        return count

    click.echo(f"{asyncio.run(main())} job(s) delivered")
