"""Instruction placeholders `{key}` whose state nothing in the spec provides.

A required `{key}` is filled from session state when the agent runs, and a session without
the key stops the run. The spec provides a key when `state:` declares it or an agent writes
it through `output_key`; anything else (a tool or callback writing state, a caller starting
the session with it) is invisible here, so it is declared under `state:`, or the placeholder
is written `{key?}`.
"""

from __future__ import annotations

from agentspec.contract.escapes import ESCAPE
from agentspec.contract.placeholders import INTERNAL_PREFIX, internal_keys, placeholders
from agentspec.diagnostics import codes, did_you_mean
from agentspec.kindapi import kind_for_spec
from agentspec.project_files import is_file
from agentspec.source import Span, find_in, occurrence
from agentspec.validate.semantic.context import Context
from agentspec.validate.semantic.files import read_text_file

__all__ = ["check_placeholders"]


def _internal(ctx: Context, text: str, span: Span, where: str) -> None:
    if INTERNAL_PREFIX not in text:
        return
    source = ctx.sources.get(span.file)
    planners = {name: answer(agent) for name, agent in ctx.agents()
                if (answer := kind_for_spec(agent).plan_state) is not None}
    for found in internal_keys(text):
        at = find_in(source, span, found.token, occurrence(text, found.token, found.start)) \
            if source else span
        node = found.key.removeprefix("agentspec:plan:")
        planner = next((p for p in planners if node == p or node.startswith(p + "_")), None)
        key = planners.get(planner) if planner is not None else None
        hint = (f"`{planner}` writes its answer to `{key}`: write `{{{key}}}`" if key
                else f"give `{planner}` an `output_key` and write `{{that_key}}`" if planner
                else "write the value under a state key of your own")
        ctx.report(codes.INTERNAL_KEY_PLACEHOLDER(
            f"`{found.token}` in {where} is never filled: `{found.key}` is agentspec's own "
            "state, not a placeholder ADK replaces", at, hint=hint))


def _check_text(ctx: Context, text: str, span: Span, known: set[str], where: str) -> None:
    _check_braces(ctx, text, span, known, where)
    _internal(ctx, text, span, where)
    source = ctx.sources.get(span.file)
    for found in placeholders(text):
        key = found.key
        if found.optional or found.artifact or key.startswith("temp:") or key in known:
            continue
        nth = occurrence(text, found.token, found.start)
        at = find_in(source, span, found.token, nth) if source else span
        ctx.report(codes.UNKNOWN_PLACEHOLDER(
            f"`{found.token}` in {where} names state that neither `state:` declares nor an "
            "agent writes through `output_key`", at,
            hint=did_you_mean(key, known) or f"declare it under `state:` with an initial "
            f"value (also when a tool or callback sets it: validate cannot see code), write "
            f"`{{{key}?}}` if it may be absent, or `{{{{{key}}}}}` for the literal text"))


def _check_braces(ctx: Context, text: str, span: Span, known: set[str], where: str) -> None:
    """`{{key}}` of a key the spec provides: literal text here, state in ADK (AS245)."""
    source = ctx.sources.get(span.file)
    for match in ESCAPE.finditer(text):
        name = match.group(1)
        key = name.removesuffix("?")
        if key not in known:
            continue
        token = match.group(0)
        nth = occurrence(text, token, match.start())
        at = find_in(source, span, token, nth) if source else span
        ctx.report(codes.ADK_BRACES(
            f"`{token}` in {where} is the literal text `{{{name}}}`, though `{key}` is state "
            "the spec provides", at,
            hint=f"write `{{{name}}}` to read the state (ADK reads `{token}` as state too), or "
            f"keep `{token}` for the literal braces"))


def _provided(ctx: Context) -> set[str] | None:
    """The state keys the spec declares (also when invalid: that is reported once, at the
    key) or an agent writes; None when `state` is not a mapping, so nothing can be told."""
    declared = ctx.doc.data.get("state")
    if declared is not None and not isinstance(declared, dict):
        return None
    return {str(key) for key in declared or {}} | {
        str(agent[field]) for agent in ctx.doc.section("agents").values()
        for field in ("output_key", "results_key")
        if isinstance(agent, dict) and isinstance(agent.get(field), str)}


def check_placeholders(ctx: Context) -> None:
    known = _provided(ctx)
    if known is None:
        return
    for name, agent in ctx.llm_agents():
        if agent.instruction is not None:
            _check_text(ctx, agent.instruction, ctx.at("agents", name, "instruction"), known,
                        f"`{name}`'s instruction")
        if agent.instruction_file is not None:
            span = ctx.at("agents", name, "instruction_file")
            target = ctx.directory_of(span) / agent.instruction_file
            source = read_text_file(ctx, target) if is_file(target) else None
            if source is not None:
                whole = Span.at(source.name, 1, 1)
                _check_text(ctx, source.text, whole, known, f"`{agent.instruction_file}`")
    for name, agent in ctx.agents():  # e.g. a planner's roles are filled from state too
        for path, what, text in kind_for_spec(agent).instructions(name, agent):
            _check_text(ctx, text, ctx.at(*path), known, what)
    if ctx.spec.global_instruction:
        _check_text(ctx, ctx.spec.global_instruction, ctx.at("global_instruction"), known,
                    "the global instruction")
