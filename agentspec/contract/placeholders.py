"""Instruction placeholders as ADK fills them, without importing ADK (the compiler reads them
too): `{key}` and `{key?}` from session state, `{artifact.name}` from the session's
artifacts."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from agentspec.contract.escapes import has_escape

__all__ = ["INTERNAL_PREFIX", "PLACEHOLDER", "Placeholder", "internal_keys", "needs_template",
           "placeholders"]

#: ADK's own pattern (google.adk.flows.llm_flows.prompt._instructions_utils)
PLACEHOLDER = re.compile(r"(?<![\$\{\\]){+[^{}]*}+")
_ARTIFACT = "artifact."
_PREFIXES = ("app", "user", "temp")
#: agentspec's own state keys (`agentspec:plan:<node>`, `agentspec:todos`, `agentspec:files`)
INTERNAL_PREFIX = "agentspec:"


@dataclass(frozen=True)
class Placeholder:
    token: str  # as written, braces included
    key: str  # the state key, or `artifact.NAME`
    optional: bool  # `{key?}`: empty when absent
    start: int  # where the token starts in the text

    @property
    def artifact(self) -> bool:
        return self.key.startswith(_ARTIFACT)


def _state_name(name: str) -> bool:
    """ADK's rule: an identifier, or `app:`, `user:` or `temp:` and an identifier."""
    prefix, _, rest = name.rpartition(":")
    if not prefix:
        return name.isidentifier()
    return prefix in _PREFIXES and rest.isidentifier()


def _braced(text: str) -> Iterator[Placeholder]:
    """Every run of braces ADK's pattern matches, but agentspec's escape `{{key}}`."""
    for match in PLACEHOLDER.finditer(text):
        token = match.group(0)
        if token.startswith("{{"):
            continue
        name = token.lstrip("{").rstrip("}").strip()
        optional = name.endswith("?")
        yield Placeholder(token, name.removesuffix("?"), optional, match.start())


def placeholders(text: str) -> Iterator[Placeholder]:
    """The placeholders ADK fills in `text`; agentspec's escape `{{key}}` and braces around
    anything else (a JSON example) are text."""
    return (p for p in _braced(text) if p.key.startswith(_ARTIFACT) or _state_name(p.key))


def internal_keys(text: str) -> Iterator[Placeholder]:
    """Braces around one of agentspec's own state keys (`{agentspec:plan:lead}`): text that
    looks like a placeholder and is never filled, since ADK fills only the names above."""
    return (p for p in _braced(text) if p.key.startswith(INTERNAL_PREFIX))


def needs_template(text: str) -> bool:
    """Whether an instruction is handed to ADK as agentspec's Template: it has an escape, or
    a required state placeholder, whose absence the Template reports as the user's error."""
    return has_escape(text) or any(not p.optional and not p.artifact
                                   for p in placeholders(text))
