"""`agentspec worker` on a `temporal://` store: the Temporal worker in place of the polling
one (the extra's absence is a plain message naming it)."""

from __future__ import annotations

import sys
from typing import Any

import click

from agentspec.contract.extras import install
from agentspec.runtime.jobs import StoreError


def temporal_jobs(worker: Any) -> Any:
    """A Temporal worker with the polling `worker`'s agents, settings and reporting."""
    try:
        from agentspec.runtime.jobs.temporal_worker import TemporalJobs
    except (ImportError, StoreError):
        click.echo("agentspec: a temporal:// job store needs the `temporal` extra: "
                   f"{install('temporal')}", err=True)
        sys.exit(1)
    jobs = TemporalJobs(worker.agents, worker.settings, worker.run,
                        concurrency=worker.concurrency, report=worker.report,
                        resumer=worker.resumer, owner=worker.owner)
    return jobs
