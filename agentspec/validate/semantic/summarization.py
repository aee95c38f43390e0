"""`summarization.history`: a directory of the root agent's file tools, on disk."""

from __future__ import annotations

from agentspec.contract.backends import keeps_history, routed
from agentspec.contract.virtual_paths import BackendError, normalize
from agentspec.diagnostics import codes
from agentspec.language.agents import LlmAgent
from agentspec.language.effective import DEFAULT_STATE_BACKEND, harness
from agentspec.validate.semantic.context import Context
from agentspec.validate.semantic.history_access import check_history_access

__all__ = ["check_history"]


def check_history(ctx: Context, root: str | None) -> None:
    summary = ctx.spec.summarization
    if not summary or summary.history is None or root is None:
        return
    where = ctx.at("summarization", "history")
    try:
        path = normalize(summary.history)
    except BackendError as error:
        ctx.report(codes.HISTORY_PATH(str(error), where, hint="write a directory such as "
                                      "`/conversation_history`"))
        return
    if path == "/" or not summary.history.startswith("/"):
        ctx.report(codes.HISTORY_PATH(
            f"`{summary.history}` is not a directory below `/`", where,
            hint="write a directory such as `/conversation_history`"))
        return
    agent = ctx.spec.agents.get(root)
    backends = ctx.spec.backends or {}
    backend = harness(agent, backends).backend if isinstance(agent, LlmAgent) else None
    if backend is None or not isinstance(agent, LlmAgent):
        ctx.report(codes.HISTORY_NEEDS_FILES(
            f"the root agent `{root}` has no file tools to keep the history in", where,
            hint=f"give `{root}` `filesystem: <backend>` on a filesystem backend, or drop "
            "`history`"))
        return
    if summary.model is None and (agent.model or (ctx.spec.defaults.model if ctx.spec.defaults
                                                  else None)) is None:
        ctx.report(codes.HISTORY_NEEDS_FILES(
            f"nothing says which model summarizes: the root agent `{root}` has no model",
            where, hint="set `summarization.model`"))
    landed, _ = routed(backend, path, backends)
    definition = backends.get(landed)
    if definition is not None and keeps_history(definition.type):
        check_history_access(ctx, backend, path, backends)
    if definition is not None and not keeps_history(definition.type):
        ctx.report(codes.HISTORY_NOT_ON_DISK(
            f"`{summary.history}` lands on backend `{landed}`, a `{definition.type}` backend, "
            "not a directory on disk", where,
            hint="route the history directory to a `filesystem` backend (a `composite` "
            "route), or give the root agent a filesystem backend"))
    elif landed == DEFAULT_STATE_BACKEND:  # the implicit state backend of `kind: deep`
        ctx.report(codes.HISTORY_NOT_ON_DISK(
            f"`{summary.history}` lands on the root agent's default state backend, not on "
            "disk", where, hint="give the root agent `filesystem:` a `filesystem` backend"))
