"""Harness fields: approvals name real tools, `execute` needs a backend that runs commands."""

from __future__ import annotations

from agentspec.diagnostics import codes, did_you_mean
from agentspec.language.agents import FilesystemConfig, LlmAgent
from agentspec.language.effective import (
    DEFAULT_STATE_BACKEND,
    MODEL_SIDE_BUILTINS,
    can_execute,
    harness,
    tool_names,
)
from agentspec.language.tools import AgentTool
from agentspec.source import Span
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
            hint="use a `type: shell` or `type: sandbox` backend, or drop `execute`"))


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
        hint="use a `type: shell` or `type: sandbox` backend"))


def _asks(agent: LlmAgent) -> set[str]:
    return {tool for tool, setting in (agent.interrupt_on or {}).items() if setting is not False}


def _delegations(ctx: Context, name: str, agent: LlmAgent) -> dict[str, list[str]]:
    """Tool name -> the agents calling it starts (`name` itself for general-purpose)."""
    found: dict[str, list[str]] = {}
    kit = harness(agent, ctx.spec.backends or {})
    if kit.task is not None:
        found["task"] = [*kit.task.agents, *([name] if kit.task.general_purpose else [])]
    tools = ctx.spec.tools or {}
    for entry in agent.tools or ():
        definition = tools.get(entry) if isinstance(entry, str) else entry
        if isinstance(definition, AgentTool):
            found[definition.agent] = [definition.agent]
            if isinstance(entry, str):
                found[entry] = [definition.agent]
    for child, mode in _sub_agent_modes(ctx, agent).items():
        if mode in ("single_turn", "task"):
            found[child] = [child]
    return found


def _started_approvals(ctx: Context, starts: list[str], origin: str) -> str | None:
    """The first agent among `starts` (or any they delegate to) that asks for approvals.
    `origin` among them is its general-purpose copy: no `task` tool and no sub-agents."""
    todo, seen = list(starts), set()
    while todo:
        current = todo.pop()
        agent = ctx.spec.agents.get(current)
        if current in seen or not isinstance(agent, LlmAgent):
            continue
        seen.add(current)
        delegations = _delegations(ctx, current, agent)
        asks = _asks(agent)
        if current == origin:  # the copy keeps the tools, and their approvals, only
            copied = {t for t in delegations if t != "task" and t not in
                      _sub_agent_modes(ctx, agent)}
            delegations = {t: a for t, a in delegations.items() if t in copied}
            asks -= {"task", *_sub_agent_modes(ctx, agent)}
        if asks:
            return current
        todo += [a for started in delegations.values() for a in started]
    return None


def _nested_approvals(ctx: Context, name: str, agent: LlmAgent) -> None:
    asked = _asks(agent)
    for tool, starts in _delegations(ctx, name, agent).items():
        if tool not in asked:
            continue
        inner = _started_approvals(ctx, starts, name)
        if inner is None:
            continue
        if inner == name:
            what = "the general-purpose agent it starts, which has this agent's approvals"
            fix = "turn the general-purpose agent off (`general_purpose: false` in `task`)"
        else:
            what, fix = f"`{inner}`, which it starts", f"drop the approvals of `{inner}`"
        ctx.report(codes.NESTED_APPROVAL(
            f"approving `{tool}` cannot be combined with the approvals of {what}: those could "
            "never resume", ctx.key_at("agents", name, "interrupt_on", tool),
            hint=f"remove `{tool}` from `interrupt_on`, or {fix}"))


def _results_readable_by_commands(ctx: Context, name: str, agent: LlmAgent) -> None:
    """Large results are kept per user, but a command run by `execute` reads the whole
    root: other users' commands can read them, unless the spec says they are shared."""
    backends = ctx.spec.backends or {}
    kit = harness(agent, backends)
    if kit.result_limit is None or kit.backend is None or agent.tool_result_limit is None or \
            not {"execute", "read_file"} <= set(kit.file_tools):
        return
    backend: str | None = kit.backend
    seen: set[str] = set()
    while backend is not None and backend not in seen:  # the composite, then its default
        seen.add(backend)
        definition = backends.get(backend)
        if getattr(definition, "conversation_files", None) == "shared":
            return
        backend = getattr(definition, "default", None)
    ctx.report(codes.CONVERSATION_FILES_EXECUTE(
        f"`{name}` keeps each user's large tool results on backend `{kit.backend}`, whose "
        "`execute` commands can read every user's", ctx.key_at("agents", name,
                                                                "tool_result_limit"),
        hint="give the agent a backend without `execute` for them, or set "
        f"`conversation_files: shared` on `{kit.backend}` if users may read each other's"))


def check_harness(ctx: Context) -> None:
    for name, agent in ctx.llm_agents():
        _execute(ctx, name, agent)
        _results_readable_by_commands(ctx, name, agent)
        if name not in ctx.broken:  # its tools may have been cut out
            _approvals(ctx, name, agent)
            _nested_approvals(ctx, name, agent)
