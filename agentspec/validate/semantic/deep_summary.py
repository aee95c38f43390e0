"""The default summarization of deep agents: AS236, a deep agent whose model's window is
unknown keeps it off; AS323, `summarization: false` where there is no default to turn off."""

from __future__ import annotations

from agentspec.diagnostics import codes
from agentspec.language.agents import DeepAgent
from agentspec.language.deep_summary import unknown_windows
from agentspec.validate.semantic.context import Context

__all__ = ["check_deep_summary"]


def check_deep_summary(ctx: Context) -> None:
    for found in unknown_windows(ctx.spec):
        base = ("agents", found.agent)
        where = ctx.at(*base, "model") if found.model is not None else ctx.key_at(*base)
        model = f"`{found.model}`" if found.model is not None else "its model (none is named)"
        ctx.report(codes.SUMMARY_WINDOW_UNKNOWN(
            f"deep agent `{found.agent}` is not summarized: the context window of {model} is "
            "unknown", where,
            hint="add `context_window:` to the model under `models:`, or set "
            "`summarization:`"))
    if ctx.spec.summarization is False and not any(
            isinstance(agent, DeepAgent) for agent in ctx.spec.agents.values()):
        ctx.report(codes.SUMMARIZATION_OFF_UNUSED(
            "`summarization: false` changes nothing: no agent is `kind: deep`, so nothing is "
            "summarized by default", ctx.at("summarization"),
            hint="remove `summarization: false`"))
