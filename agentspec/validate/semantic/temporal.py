"""Checks of a `temporal://` job store URL (the form only: validate opens no connection)."""

from __future__ import annotations

import importlib.util

from agentspec.contract.extras import install
from agentspec.contract.temporal_url import SCHEME, TemporalUrlError, parse_temporal_url
from agentspec.diagnostics import codes
from agentspec.resolve.interpolate import has_env_ref
from agentspec.validate.semantic.context import Context

__all__ = ["check_offline_approvals", "check_temporal_store", "is_temporal"]


def is_temporal(url: str) -> bool:
    return url.startswith(SCHEME)


def _installed() -> bool:
    """Whether the `temporal` extra is there (found, not imported)."""
    try:
        return importlib.util.find_spec("temporalio") is not None
    except (ImportError, ValueError):
        return False


def check_temporal_store(ctx: Context, url: str) -> None:
    where = ctx.at("jobs", "store")
    try:
        parse_temporal_url(url)
    except TemporalUrlError as error:
        code = codes.TEMPORAL_TASK_QUEUE if error.part == "task_queue" else \
            codes.TEMPORAL_ADDRESS
        ctx.report(code(str(error), where, hint=error.hint))
        return
    if not _installed():
        ctx.report(codes.TEMPORAL_EXTRA(
            "jobs on Temporal need the `temporal` extra, which is not installed", where,
            hint=f"run `{install('temporal')}`"))


def check_offline_approvals(ctx: Context, store: str) -> None:
    """AS335: an offline agent's `interrupt_on` on a job store (literal, not Temporal) where
    its job would fail at the first approval instead of waiting."""
    if has_env_ref(store) or is_temporal(store):
        return
    for name, agent in (ctx.spec.agents or {}).items():
        asked = [tool for tool, setting in (getattr(agent, "interrupt_on", None) or {}).items()
                 if setting is not False]
        if getattr(agent, "execution_mode", None) == "offline" and asked:
            ctx.report(codes.APPROVAL_IN_JOB_WITHOUT_WAIT(
                f"`{name}` runs offline and asks for approvals (`{asked[0]}`), which a job on a "
                f"`{store.split(':', 1)[0]}` store cannot wait for: the job fails when it asks",
                ctx.at("agents", name, "interrupt_on"),
                hint="put the jobs on Temporal (`jobs.store: temporal://...`), where `agentspec "
                "jobs answer` answers them, or leave these tools out of the offline agent"))
