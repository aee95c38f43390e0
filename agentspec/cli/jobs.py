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
    from agentspec.compiler import compile_spec
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
    from agentspec.runtime.jobs import StoreError
    from agentspec.runtime.jobs.stores import open_store

    options = ctx.obj
    if "url" not in options:
        options["url"] = _store_url(options["spec"], options["store"], options["environment"])
    try:
        return open_store(options["url"])
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
    rows = [("ID", "AGENT", "STATUS", "TRIES", "CREATED", "UPDATED", "INPUT", "LAST EVENT")] + [
        (j.id, j.agent, j.status, f"{j.attempts}/{j.max_attempts}", _when(j.created_at),
         _when(j.updated_at), _short(j.input, 32), _short(j.last_event or "", 40))
        for j in jobs]
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
        elif key == "usage":
            from agentspec.runtime.usage import Ledger

            value = Ledger.from_json(value).total.text() if value else "none recorded"
        click.echo(f"{key:>16}: {value if isinstance(value, str) else json.dumps(value)}")


def _where(function: Any) -> Any:
    """--spec, --store, --json and --env, taken before the subcommand or after it
    (`jobs --spec S list` and `jobs list --spec S`); the store is opened when used."""
    for option in reversed((
            click.option("--spec", type=click.Path(path_type=Path),
                         help="The spec whose store to use."),
            click.option("--store", metavar="URL", help="The store URL instead "
                         "(sqlite:///..., postgresql://...)."),
            click.option("--json", "as_json", is_flag=True, default=None,
                         help="JSON output."),
            environment_option)):
        function = option(function)
    return function


def _given(ctx: click.Context, spec: Path | None, store: str | None, as_json: bool | None,
           environment: str | None) -> None:
    given = {"spec": spec, "store": store, "json": as_json or None, "environment": environment}
    ctx.ensure_object(dict)
    for key, value in given.items():
        if value is not None or key not in ctx.obj:
            ctx.obj[key] = value if value is not None or key != "json" else False


@click.group(name="jobs")
@_where
@click.pass_context
def command(ctx: click.Context, spec: Path | None, store: str | None, as_json: bool | None,
            environment: str | None) -> None:
    """Background jobs of offline agents (see `agentspec worker`)."""
    _given(ctx, spec, store, as_json, environment)


@command.command(name="list")
@click.option("--status", type=click.Choice(["QUEUED", "RUNNING", "DONE", "FAILED",
                                             "CANCELLED"]), help="Only jobs with this status.")
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True)
@_where
@click.pass_context
def list_jobs(ctx: click.Context, /, status: str | None, limit: int, **where: Any) -> None:
    """The newest jobs."""
    _given(ctx, **where)
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


def _acts_on(job: Any, job_id: str, statuses: tuple[str, ...], done: str) -> None:
    """Exit 1 saying so when `job` is missing or its status is none of `statuses`."""
    if job is None:
        click.echo(f"agentspec: there is no job {job_id}", err=True)
        sys.exit(1)
    if job.status not in statuses:
        click.echo(f"agentspec: job {job_id} is {job.status}; only a "
                   f"{' or '.join(s for s in statuses if s != 'CANCELLED' or done != 'cancelled')}"
                   f" job can be {done}", err=True)
        sys.exit(1)


@command.command()
@click.argument("job_id")
@_where
@click.pass_context
def show(ctx: click.Context, /, job_id: str, **where: Any) -> None:
    """Everything about one job, and the calls it waits to have approved."""
    _given(ctx, **where)
    store = _open(ctx)
    job = store.get(job_id)
    waiting = store.approvals(job_id) if job is not None and hasattr(store, "approvals") \
        else []
    if job is not None and ctx.obj["json"]:
        click.echo(json.dumps({**job.to_dict(), "approvals": waiting}, indent=2, default=str))
        return
    _one(ctx, job, job_id)
    if waiting:
        from agentspec.runtime.harness.call_text import call_text

        click.echo(f"{'approvals':>16}: {len(waiting)} call(s) wait for a person "
                   f"(agentspec jobs answer {job_id} DECISION [--call N])")
        for number, call in enumerate(waiting, 1):
            click.echo(f"  [{number}] {call['agent']}: {call['question']}")
            for line in call_text(call["tool"], call["args"]).splitlines():
                click.echo(f"      {line}")
            click.echo(f"      decisions: {', '.join(call['decisions'])}")
            if call.get("answered"):
                click.echo(f"      answered: {call['answered']} (the job goes on once every "
                           "call is answered)")


@command.command()
@click.argument("job_id")
@click.argument("decision", type=click.Choice(["approve", "edit", "reject"]))
@click.option("--call", "number", type=click.IntRange(1), metavar="N",
              help="Which waiting call (as `jobs show` numbers them); needed when several "
                   "wait.")
@click.option("--args", "edited", metavar="JSON",
              help="With `edit`: the arguments the call runs with instead (a JSON object).")
@click.option("--message", help="With `reject`: why, for the agent.")
@_where
@click.pass_context
def answer(ctx: click.Context, /, job_id: str, decision: str, number: int | None,
           edited: str | None, message: str | None, **where: Any) -> None:
    """Approve, edit or reject a call a job waits on (temporal:// stores).

    A job whose agent calls a tool under `interrupt_on` waits for a person; `jobs show`
    lists its waiting calls. The job goes on once each of them is answered."""
    _given(ctx, **where)
    if (edited is not None) != (decision == "edit"):
        raise click.UsageError("give --args JSON with `edit`, and only with it")
    if message is not None and decision != "reject":
        raise click.UsageError("--message goes with `reject`")
    args = None
    if edited is not None:
        try:
            args = json.loads(edited)
        except json.JSONDecodeError as exc:
            raise click.UsageError(f"--args is not JSON: {exc}") from exc
        if not isinstance(args, dict):
            raise click.UsageError("--args must be a JSON object of the call's arguments")
    from agentspec.runtime.jobs import StoreError

    store = _open(ctx)
    if not hasattr(store, "answer"):
        click.echo("agentspec: only jobs on a temporal:// store wait for approvals; on this "
                   "store a job whose agent asks for one does not wait", err=True)
        sys.exit(1)
    try:
        call = store.answer(job_id, number, decision, edit=args, message=message)
    except StoreError as exc:
        click.echo(f"agentspec: {exc}", err=True)
        sys.exit(1)
    click.echo(f"{decision}: the call to `{call['tool']}` of job {job_id} (the job goes on "
               "once a worker runs it)")


@command.command()
@click.argument("job_id")
@_where
@click.pass_context
def retry(ctx: click.Context, /, job_id: str, **where: Any) -> None:
    """Queue a FAILED or CANCELLED job again, with fresh attempts."""
    _given(ctx, **where)
    store = _open(ctx)
    _acts_on(store.get(job_id), job_id, ("FAILED", "CANCELLED"), "retried")
    _one(ctx, store.retry(job_id), job_id)


@command.command()
@click.argument("job_id")
@_where
@click.pass_context
def cancel(ctx: click.Context, /, job_id: str, **where: Any) -> None:
    """Cancel a QUEUED or RUNNING job (a running one finishes, but its result is dropped)."""
    _given(ctx, **where)
    store = _open(ctx)
    _acts_on(store.get(job_id), job_id, ("QUEUED", "RUNNING", "CANCELLED"), "cancelled")
    _one(ctx, store.cancel(job_id), job_id)


@command.command()
@click.option("--session", "session_url", metavar="URL", required=True,
              help="The conversation store of `agentspec run --session` (or the spec's "
                   "`sessions:`).")
@_where
@click.pass_context
def deliver(ctx: click.Context, /, session_url: str, **where: Any) -> None:
    """Put every finished, undelivered job into its conversation now (otherwise that happens
    when the conversation next runs); jobs that resume their parent are left to the worker."""
    _given(ctx, **where)
    from agentspec.cli.common import services
    from agentspec.runtime.jobs.delegation import StoreAt, deliver

    store = _open(ctx)
    store_url = ctx.obj["url"]
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
            for event in await deliver(StoreAt(store_url), sessions, session,
                                       "agentspec-jobs-deliver"):
                job = (event.custom_metadata or {})["agentspec_job"]
                click.echo(f"delivered {job['job_id']} ({event.author}, {job['status']}) to "
                           f"session {session_id}")
                count += 1
        return count

    click.echo(f"{asyncio.run(main())} job(s) delivered")
