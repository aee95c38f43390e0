"""The rules about background jobs: their store, limits, webhook and what a finished job
does."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agentspec.diagnostics import codes
from agentspec.diagnostics.model import Risk
from agentspec.review.ruletypes import AppPair, Found, Rule, limit

__all__ = ["RULES"]


def _jobs(pair: AppPair) -> tuple[Any, Any]:
    return (pair.old.app.jobs if pair.old.app else None,
            pair.new.app.jobs if pair.new.app else None)


def _jobs_store(pair: AppPair) -> Iterator[Found]:
    """Another store (a store that appears or goes with offline agents is AS519's)."""
    was, now = _jobs(pair)
    if was is not None and now is not None and (was.store, was.sqlite_path) != (
            now.store, now.sqlite_path):
        yield Found(Risk.MEDIUM, f"jobs are kept in {now.store} (was {was.store})",
                    ("jobs", "store"), ("jobs", "store"))


def _jobs_limits(pair: AppPair) -> Iterator[Found]:
    was, now = _jobs(pair)
    if was is not None and now is not None:
        for key in ("max_attempts", "lease_seconds"):
            yield from limit(f"jobs {key}", getattr(was, key), getattr(now, key),
                              ("jobs", key), ("jobs", key))


def _jobs_webhook(pair: AppPair) -> Iterator[Found]:
    was, now = _jobs(pair)
    old_hook, new_hook = (was.webhook if was else None), (now.webhook if now else None)
    old_headers = dict(was.headers) if was else {}
    new_headers = dict(now.headers) if now else {}
    where = ("jobs", "notify")
    if new_hook and old_hook != new_hook:
        yield Found(Risk.HIGH, f"job results are now posted to {new_hook}"
                    + (f" (was {old_hook})" if old_hook else ""), where, where)
    elif old_hook and not new_hook:
        yield Found(Risk.LOW, f"job results are no longer posted to {old_hook}", where, where)
    elif new_hook and old_headers != new_headers:
        yield Found(Risk.HIGH, f"the headers posted to {new_hook} changed ({sorted(old_headers)}"
                    f" -> {sorted(new_headers)}; values are not shown)", where, where)


def _on_done(pair: AppPair) -> Iterator[Found]:
    """What a finished job does (no job store: nothing waits, as with `wait`)."""
    was, now = _jobs(pair)
    before = was.on_done if was is not None else "wait"
    after = now.on_done if now is not None else "wait"
    if before != after:
        reason = ("a worker now runs the parent for a turn, with no user message, as soon as "
                  "a job finishes" if after == "resume" else "finished jobs now wait for the "
                  "conversation's next turn; no worker runs the parent")
        yield Found(Risk.MEDIUM, f"{reason} (`jobs.on_done: {after}`, was `{before}`)",
                    ("jobs", "on_done"), ("jobs", "on_done"))


RULES: tuple[Rule[AppPair], ...] = (
    Rule(codes.JOBS_STORE_CHANGED, ("AppNode.jobs", "JobsNode.store", "JobsNode.sqlite_path"),
         _jobs_store),
    Rule(codes.LIMIT_CHANGED, ("JobsNode.max_attempts", "JobsNode.lease_seconds"), _jobs_limits),
    Rule(codes.JOBS_WEBHOOK_CHANGED, ("JobsNode.webhook", "JobsNode.headers"), _jobs_webhook,
         on_new_spec=True),
    Rule(codes.ON_DONE_CHANGED, ("JobsNode.on_done",), _on_done),
)
