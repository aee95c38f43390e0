"""Checks of a `temporal://` job store URL (the form only: validate opens no connection)."""

from __future__ import annotations

import importlib.util

from agentspec.contract.extras import install
from agentspec.contract.temporal_url import SCHEME, TemporalUrlError, parse_temporal_url
from agentspec.diagnostics import codes
from agentspec.validate.semantic.context import Context

__all__ = ["check_temporal_store", "is_temporal"]


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
