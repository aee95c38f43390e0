"""Harness fields: approvals name real tools, `execute` needs a backend that runs commands."""

from __future__ import annotations

from agentspec.diagnostics import codes, did_you_mean
from agentspec.source import Span
from agentspec.spec.agents import FilesystemConfig, LlmAgent
from agentspec.spec.effective import (
    DEFAULT_STATE_BACKEND,
    MODEL_SIDE_BUILTINS,
    can_execute,
    harness,
    tool_names,
)
from agentspec.validate.semantic.context import Context

__all__ = ["check_harness"]


def _sub_agent_modes(ctx: Context, agent: LlmAgent) -> dict[str, str | None]:
    modes: dict[str, str | None] = {}
    for child in agent.sub_agents or ():
        if isinstance(child, str) and child in ctx.spec.agents:
            modes[child] = getattr(ctx.spec.agents[child], "mode", None)
    return modes


def _execute(ctx: Context, name: str, agent: LlmAgent) -> None:
    fs = agent.filesystem
    backends = ctx.spec.backends or {}
    if isinstance(fs, FilesystemConfig) and fs.tools and "execute" in fs.tools and \
            fs.backend in backends and not can_execute(fs.backend, backends):
        index = fs.tools.index("execute")
        ctx.report(codes.EXECUTE_WITHOUT_SHELL(
            f"backend `{fs.backend}` cannot run commands, so `execute` is not available",
            ctx.at("agents", name, "filesystem", "tools", index),
            hint="use a `type: shell` backend, or drop `execute`"))


def _approvals(ctx: Context, name: str, agent: LlmAgent) -> None:
    backends = ctx.spec.backends or {}
    known = tool_names(agent, ctx.spec.tools or {}, backends, _sub_agent_modes(ctx, agent))
    kit = harness(agent, backends)
    for tool in agent.interrupt_on or {}:
        if tool in known.names:
            continue
        span = ctx.key_at("agents", name, "interrupt_on", tool)
        if tool == "execute" and kit.backend is not None:
            _execute_approval(ctx, kit.backend, span)
            continue
        if tool in MODEL_SIDE_BUILTINS:
            ctx.report(codes.INTERRUPT_UNKNOWN_TOOL(
                f"`{tool}` runs inside the model, not as a call the agent makes, so it cannot "
                "wait for approval", span, hint="remove this entry"))
            continue
        hint = did_you_mean(tool, known.names)
        if known.opaque and hint is None:
            continue  # a toolset or an unfiltered MCP server may provide it
        ctx.report(codes.INTERRUPT_UNKNOWN_TOOL(
            f"`{name}` will not have a tool named `{tool}`, so this approval never applies",
            span, hint=hint or f"its tools: {', '.join(sorted(known.names)) or 'none'}"))


def _execute_approval(ctx: Context, backend: str, span: Span) -> None:
    if can_execute(backend, ctx.spec.backends or {}):
        ctx.report(codes.INTERRUPT_UNKNOWN_TOOL(
            "approval asked for `execute`, which is not among the file tools chosen in "
            "`filesystem.tools`", span, hint="add `execute` to `filesystem.tools`"))
        return
    shown = "the default state backend" if backend == DEFAULT_STATE_BACKEND \
        else f"backend `{backend}`"
    ctx.report(codes.EXECUTE_WITHOUT_SHELL(
        f"approval asked for `execute`, but {shown} cannot run commands", span,
        hint="use a `type: shell` backend"))


def check_harness(ctx: Context) -> None:
    for name, agent in ctx.llm_agents():
        _execute(ctx, name, agent)
        if name not in ctx.broken:  # its tools may have been cut out
            _approvals(ctx, name, agent)
