"""Strings from ADK for a spec: instruction placeholders as agentspec reads them, `${`
escaped."""

from __future__ import annotations

import re

from agentspec.contract.placeholders import PLACEHOLDER

__all__ = ["escape", "instruction"]

_PREFIXES = ("app", "user", "temp")


def _state_name(name: str) -> bool:
    """ADK's rule (`_is_valid_state_name`): an identifier, optionally after a prefix."""
    prefix, _, rest = name.rpartition(":")
    return name.isidentifier() if not prefix else prefix in _PREFIXES and rest.isidentifier()


def escape(text: str) -> str:
    """Any string: `${` is agentspec's interpolation, so ADK's literal `${` becomes `$${`."""
    return text.replace("${", "$${")


def _placeholder(match: re.Match[str]) -> str:
    token = match.group(0)
    name = token.lstrip("{").rstrip("}").strip()
    key = name.removesuffix("?")
    if key.startswith("artifact.") or _state_name(key):
        return "{" + name + "}"
    return token  # ADK leaves anything else as written (a JSON example, say)


def instruction(text: str) -> str:
    """An ADK instruction as agentspec reads it: ADK fills any run of braces around a state
    name (`{{x}}` reads state `x`), agentspec one pair (`{{x}}` is the literal `{x}`)."""
    return escape(PLACEHOLDER.sub(_placeholder, text))
