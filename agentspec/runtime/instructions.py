"""Instruction templating: ADK's `{key}` / `{key?}` from session state, plus an escape.

ADK substitutes `{key}` in string instructions and has no escape, so `{{key}}` is replaced like
`{key}`. agentspec instructions keep ADK's placeholders and read `{{key}}` (or `{{key?}}`) as
the literal text `{key}`. Every other brace (JSON examples, `{"k": 1}`) reaches the model
verbatim. An instruction with an escape becomes an InstructionProvider, whose output ADK does
not template again; one without stays a plain string, exactly as ADK handles it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.utils.instructions_utils import inject_session_state

from agentspec.runtime.escapes import ESCAPE, has_escape

__all__ = ["Template", "template"]


class Template:
    """An InstructionProvider: placeholders from state, escapes as literal text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._parts = ESCAPE.split(text)  # even: templated text, odd: escaped names

    async def __call__(self, context: ReadonlyContext) -> str:
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
    return Template(text) if has_escape(text) else text
