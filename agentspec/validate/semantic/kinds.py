"""Rules of each agent kind, and of the sections that are not agents."""

from __future__ import annotations

import re

from agentspec.diagnostics import codes
from agentspec.kindapi import kind_for_spec
from agentspec.language.document import FractionTrigger, Jobs, KeepEvents, KeepInvocations
from agentspec.language.models import ModelDef
from agentspec.resolve.interpolate import has_env_ref
from agentspec.validate.semantic.context import Context
from agentspec.validate.semantic.models import check_thinking
from agentspec.validate.semantic.temporal import (
    check_offline_approvals,
    check_temporal_store,
    is_temporal,
)

__all__ = ["check_kinds", "check_sections"]

_STORE = re.compile(r"^(memory://|sqlite:///.+|postgres(ql)?(\+\w+)?://.+)$")


def check_kinds(ctx: Context) -> None:
    for name, agent in ctx.agents():
        kind_for_spec(agent).check(ctx, name, agent)


def _context_windows(ctx: Context) -> list[int]:
    models = ctx.spec.models or {}
    windows = []
    for _, agent in ctx.llm_agents():
        definition = models.get(agent.model or "")
        if isinstance(definition, ModelDef) and definition.context_window:
            windows.append(definition.context_window)
    return windows


def _summarization(ctx: Context) -> None:
    summary = ctx.spec.summarization
    if not summary:  # none, or `false`
        return
    if isinstance(summary.trigger, FractionTrigger) and not _context_windows(ctx):
        ctx.report(codes.FRACTION_NEEDS_WINDOW(
            "a `fraction` trigger needs a `context_window` on the models the agents use",
            ctx.at("summarization", "trigger", "fraction"),
            hint="add `context_window:` to the model definition, or use `{tokens: N}`"))
    by_tokens = not hasattr(summary.trigger, "invocations")
    keep = summary.keep
    if (by_tokens and isinstance(keep, KeepInvocations)) or (
            not by_tokens and isinstance(keep, KeepEvents)):
        wanted = "events" if by_tokens else "invocations"
        ctx.report(codes.ONE_OF(
            f"this trigger keeps `{wanted}`, not `{'invocations' if by_tokens else 'events'}`",
            ctx.at("summarization", "keep"),
            hint=f"write `keep: {{{wanted}: N}}` (ADK pairs token triggers with kept events "
            "and invocation triggers with kept invocations)"))


def check_sections(ctx: Context) -> None:
    _summarization(ctx)
    for name, model in (ctx.spec.models or {}).items():
        if isinstance(model, ModelDef):
            check_thinking(ctx, model.thinking, "models", name, "thinking")
    jobs = ctx.spec.jobs
    check_offline_approvals(ctx, (jobs or Jobs()).store)
    if jobs is not None and not has_env_ref(jobs.store) and is_temporal(jobs.store):
        check_temporal_store(ctx, jobs.store)
    elif jobs is not None and not has_env_ref(jobs.store) and not _STORE.match(jobs.store):
        ctx.report(codes.INVALID_STORE_URL(
            f"`{jobs.store}` is not a job store URL", ctx.at("jobs", "store"),
            hint="use `memory://`, `sqlite:///path/jobs.db`, `postgresql://host/db` or "
            "`temporal://host:7233/namespace?task_queue=jobs`"))
