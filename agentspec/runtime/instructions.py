"""Instruction templating: ADK's `{key}` / `{key?}` from session state, plus an escape.

ADK substitutes `{key}` in string instructions and has no escape, so `{{key}}` is replaced like
`{key}`. agentspec instructions keep ADK's placeholders and read `{{key}}` (or `{{key?}}`) as
the literal text `{key}`. Every other brace (JSON examples, `{"k": 1}`) reaches the model
verbatim. ADK reports a required `{key}` the session lacks as a bare KeyError, so an
instruction with one, or with an escape, becomes a Template (an InstructionProvider, whose
output ADK does not template again) that says which agent, which key and how to fix it; any
other instruction stays a plain string, exactly as ADK handles it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.utils.instructions_utils import inject_session_state

from agentspec.contract.escapes import ESCAPE
from agentspec.contract.placeholders import needs_template, placeholders

__all__ = ["PlaceholderError", "Template", "template"]


class PlaceholderError(LookupError):
    """An instruction names state that the session does not have: a mistake in the spec or
    in how the session was started, not in agentspec."""

    def __init__(self, agent: str, token: str, key: str) -> None:
        self.agent, self.key = agent, key
        super().__init__(
            f"agent `{agent}`'s instruction uses `{token}`, but the session state has no "
            f"`{key}`: write `{{{key}?}}` if it may be absent, give it an initial value under "
            f"the spec's `state:` (or in the session's state), or have an agent that runs "
            f"before it write it with `output_key: {key}`")

    def __str__(self) -> str:  # LookupError would quote the message like a KeyError's key
        return str(self.args[0])


class Template:
    """An InstructionProvider: placeholders from state, escapes as literal text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._parts = ESCAPE.split(text)  # even: templated text, odd: escaped names
        self._required = [p for part in self._parts[::2] for p in placeholders(part)
                          if not p.optional and not p.artifact]

    async def __call__(self, context: ReadonlyContext) -> str:
        state = context.state
        for placeholder in self._required:
            if placeholder.key not in state:
                raise PlaceholderError(context.agent_name, placeholder.token, placeholder.key)
        rendered = []
        for index, part in enumerate(self._parts):
            if index % 2:
                rendered.append("{" + part + "}")
            elif part:
                rendered.append(await inject_session_state(part, context))
        return "".join(rendered)

    def __repr__(self) -> str:
        return f"template({self.text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Template) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


def template(text: str) -> str | Callable[[ReadonlyContext], Awaitable[str]]:
    """The instruction to hand to ADK for `text`."""
    return Template(text) if needs_template(text) else text
