"""`${vars.x}`, `${env.X}`, `${env.X:-default}` and `$${` in string values.

Variables are substituted here. Environment references are checked but left in place, so
later stages read them at run time and secrets never reach generated files; `$${` also stays
until then, because it must not turn into a reference on the way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentspec.diagnostics import Diagnostic, codes, did_you_mean
from agentspec.parse import PosNode
from agentspec.resolve.document import Document
from agentspec.source import SourceFile, Span, find_in, occurrence

__all__ = ["ENV_REF", "TOKEN", "UNINTERPOLATED", "has_env_ref", "interpolate"]

#: the top-level keys whose strings are not interpolated (`outside_project` is literal)
UNINTERPOLATED = ("vars", "environments", "outside_project")

TOKEN = re.compile(r"\$\$\{|\$\{([^}]*)\}|\$\{")
ENV_REF = re.compile(r"^env\.([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$", re.DOTALL)
MAX_VAR_DEPTH = 32
#: characters that substituting variables may add to a spec (nested variables grow
#: geometrically: nine levels of ten uses each is a billion characters)
MAX_EXPANSION = 1_000_000
_VAR_REF = re.compile(r"^vars\.([A-Za-z_][A-Za-z0-9_]*)$")


@dataclass
class _Context:
    doc: Document
    environ: Mapping[str, str]
    vars: dict[str, Any]
    resolved: dict[str, Any] = field(default_factory=dict)
    resolving: list[str] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    expanded: int = 0  # characters added so far by substitution

    def spend(self, added: int, span: Span) -> bool:
        """Count `added` characters against MAX_EXPANSION; False (reported once) when that
        would pass it, and the value stays as it is written."""
        if self.expanded > MAX_EXPANSION:
            return False
        self.expanded += max(added, 0)
        if self.expanded <= MAX_EXPANSION:
            return True
        self.diagnostics.append(codes.VAR_EXPANSION(
            f"substituting variables adds more than {MAX_EXPANSION:,} characters to the spec",
            span, hint="variables that use other variables many times grow geometrically; "
            "use fewer, flatter variables"))
        return False


class _Interpolator:
    def __init__(self, ctx: _Context, sources: Mapping[str, SourceFile]) -> None:
        self.ctx = ctx
        self.sources = sources

    def span_of(self, span: Span, token: str, nth: int = 0) -> Span:
        """Point at the `${...}` itself inside the value."""
        source = self.sources.get(span.file)
        return find_in(source, span, token, nth) if source else span

    def string(self, text: str, span: Span) -> Any:
        whole = TOKEN.fullmatch(text)
        if whole and whole.group(1) is not None and _VAR_REF.match(whole.group(1)):
            name = whole.group(1).removeprefix("vars.")
            value = self.var(name, self.span_of(span, text))
            added = len(value) - len(text) if isinstance(value, str) else 0
            return value if self.ctx.spend(added, span) else text
        return TOKEN.sub(lambda m: self.substitute(m, span, text), text)

    def substitute(self, match: re.Match[str], value_span: Span, text: str) -> str:
        replacement = self.token(match, value_span, text)
        added = len(replacement) - len(match.group(0))
        return replacement if self.ctx.spend(added, value_span) else match.group(0)

    def token(self, match: re.Match[str], value_span: Span, text: str) -> str:
        token, body = match.group(0), match.group(1)
        if token == "$${":
            return token
        span = self.span_of(value_span, token, occurrence(text, token, match.start()))
        if body is None:
            self.ctx.diagnostics.append(codes.BAD_INTERPOLATION(
                "`${` is not closed by `}`", span, hint="write `$${` for a literal `${`"))
            return token
        if (var := _VAR_REF.match(body)) is not None:
            return _as_text(self.var(var.group(1), span))
        if (env := ENV_REF.match(body)) is not None:
            self.check_env(env.group(1), env.group(2), span)
            return token
        self.ctx.diagnostics.append(codes.BAD_INTERPOLATION(
            f"`{token}` is not `${{vars.NAME}}`, `${{env.NAME}}` or `${{env.NAME:-default}}`",
            span, hint="write `$${` for a literal `${`"))
        return token

    def var(self, name: str, span: Span) -> Any:
        """The value of variable `name`; `span` is where it is used (for diagnostics)."""
        ctx = self.ctx
        if name in ctx.resolved:
            return ctx.resolved[name]
        if name not in ctx.vars:
            ctx.diagnostics.append(codes.UNKNOWN_VAR(
                f"`{name}` is not defined in `vars`", span,
                hint=did_you_mean(name, ctx.vars) or "add it under `vars`"))
            return f"${{vars.{name}}}"
        value = ctx.vars[name]
        if isinstance(value, (dict, list)):
            return f"${{vars.{name}}}"  # structural validation reports the variable's type
        if name in ctx.resolving or len(ctx.resolving) >= MAX_VAR_DEPTH:
            looped = name in ctx.resolving
            chain = " -> ".join([*ctx.resolving[ctx.resolving.index(name):], name] if looped
                                else [*ctx.resolving[:3], "...", name])
            ctx.diagnostics.append(codes.VAR_CYCLE(
                f"variable cycle: {chain}" if looped
                else f"variables refer to each other more than {MAX_VAR_DEPTH} deep: {chain}",
                ctx.doc.value_span("vars", name)))
            return f"${{vars.{name}}}"
        ctx.resolving.append(name)
        if isinstance(value, str):
            value = self.string(value, ctx.doc.value_span("vars", name))
        ctx.resolving.pop()
        ctx.resolved[name] = value
        return value

    def check_env(self, name: str, default: str | None, span: Span) -> None:
        if default is None and name not in self.ctx.environ:
            self.ctx.diagnostics.append(codes.ENV_UNSET(
                f"the environment variable `{name}` is not set", span,
                hint=f"set it, or give a default: `${{env.{name}:-value}}`"))

    def walk(self, value: Any, pos: PosNode) -> Any:
        """`value` with its strings interpolated, every mapping and list a new one."""
        if isinstance(value, str):
            return self.string(value, pos.value) if "${" in value else value
        if isinstance(value, dict):
            children = pos.children
            return {k: self.walk(v, children.get(k) or pos) for k, v in value.items()}
        if isinstance(value, list):
            children = pos.children
            return [self.walk(v, children.get(i) or pos) for i, v in enumerate(value)]
        return value


def has_env_ref(value: str) -> bool:
    """Whether `value` keeps an `${env.X}` that is only read at run time."""
    return "${env." in value


def _as_text(value: Any) -> str:
    """A variable's value inside a longer string, spelt as YAML spells it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def interpolate(doc: Document, environ: Mapping[str, str],
                sources: Mapping[str, SourceFile]) -> list[Diagnostic]:
    """Substitute variables in every string value of `doc` (in place) and check env refs."""
    raw_vars = doc.data.get("vars")
    ctx = _Context(doc, environ, raw_vars if isinstance(raw_vars, dict) else {})
    interpolator = _Interpolator(ctx, sources)
    for key in list(doc.data):
        if key in UNINTERPOLATED:
            continue
        doc.data[key] = interpolator.walk(doc.data[key], doc.pos.children[key])
    for name in ctx.vars:  # report problems in unused variables too
        interpolator.var(name, doc.value_span("vars", name))
    return ctx.diagnostics
