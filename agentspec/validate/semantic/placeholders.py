"""Instruction placeholders `{key}` that no agent fills through `output_key`."""

from __future__ import annotations

import re
from collections.abc import Iterator

from agentspec.diagnostics import codes
from agentspec.paths import is_file
from agentspec.source import Span, find_in, occurrence
from agentspec.validate.semantic.context import Context
from agentspec.validate.semantic.files import read_text_file

__all__ = ["PLACEHOLDER", "check_placeholders", "placeholders"]

#: ADK's own pattern (google.adk.utils.instructions_utils); `{{...}}` is agentspec's escape
PLACEHOLDER = re.compile(r"(?<![\$\{\\]){+[^{}]*}+")
_PREFIXES = ("app:", "user:", "temp:", "artifact.")


def placeholders(text: str) -> Iterator[tuple[str, str, bool, int]]:
    """(token, state key, optional, occurrence of the token in `text`) for each state
    placeholder; escapes are skipped."""
    for match in PLACEHOLDER.finditer(text):
        token = match.group(0)
        if token.startswith("{{"):
            continue
        key = token.strip("{}").strip()
        optional = key.endswith("?")
        key = key.rstrip("?")
        if key.startswith(_PREFIXES) or not key.isidentifier():
            continue
        yield token, key, optional, occurrence(text, token, match.start())


def _check_text(ctx: Context, text: str, span: Span, known: set[str], where: str) -> None:
    source = ctx.sources.get(span.file)
    for token, key, optional, nth in placeholders(text):
        if optional or key in known:
            continue
        at = find_in(source, span, token, nth) if source else span
        ctx.report(codes.UNKNOWN_PLACEHOLDER(
            f"`{token}` in {where} names state no agent sets through `output_key`", at,
            hint=f"write `{{{key}?}}` if it may be absent, or `{{{{{key}}}}}` for the literal "
            "text"))


def check_placeholders(ctx: Context) -> None:
    known = {str(a["output_key"]) for a in ctx.doc.section("agents").values()
             if isinstance(a, dict) and isinstance(a.get("output_key"), str)}
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
    if ctx.spec.global_instruction:
        _check_text(ctx, ctx.spec.global_instruction, ctx.at("global_instruction"), known,
                    "the global instruction")
