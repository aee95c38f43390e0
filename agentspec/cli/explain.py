"""`agentspec explain CODE`: what a diagnostic means and what to do about it."""

from __future__ import annotations

import sys

import click

from agentspec.diagnostics import REGISTRY, did_you_mean, lookup
from agentspec.diagnostics.model import State


@click.command(name="explain")
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every code.")
def command(code: str | None, show_all: bool) -> None:
    """Explain a diagnostic CODE (`AS201` or its name `unknown-agent`); a prefix such as
    `AS2` or `AS21` (as `--select` takes) lists the codes that start with it."""
    from agentspec.diagnostics.selectors import selector
    from agentspec.kindapi import kinds

    kinds()  # the codes the agent kinds define in their own modules
    found = lookup(code) if code is not None and not show_all else None
    chosen = selector(code) if code is not None and found is None else None
    if show_all or code is None or chosen is not None:
        prefix = chosen.prefix if chosen is not None and not show_all else "AS"
        for entry in REGISTRY.values():
            if not entry.code.startswith(prefix):
                continue
            level = f" (diff, risk: {entry.risk}, {entry.category})" if entry.risk else \
                "" if entry.severity.value == "error" else f" ({entry.severity.value})"
            state = "" if entry.state is State.STABLE else f" [{entry.state}]"
            click.echo(f"{entry.code}  {entry.name:<30} {entry.summary}{level}{state}")
        return
    if found is None:
        names = [*REGISTRY, *(c.name for c in REGISTRY.values())]
        hint = did_you_mean(code.upper() if code[:2].lower() == "as" else code, names)
        click.echo(f"agentspec: unknown code `{code}`" + (f" ({hint})" if hint else ""),
                   err=True)
        sys.exit(2)
    level = f"a diff change; risk: {found.risk}; category: {found.category}" if found.risk \
        else found.severity.value
    click.echo(f"{found.code} {found.name} ({level}; {found.state})\n\n{found.summary}.\n\n"
               f"{found.explanation}" + _STATES.get(found.state, ""))


#: what a code's state means, said after its explanation
_STATES = {
    State.PREVIEW: "\n\nThis code is in preview: its wording, position or conditions may "
                   "still change in a minor release.",
    State.DEPRECATED: "\n\nThis code is deprecated: agentspec no longer reports it; it stays "
                      "registered so that suppressions and selections naming it keep working.",
}
