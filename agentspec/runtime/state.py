"""The spec's `state:`: the initial state of every session, however the session was made.

`adk web`, `adk api_server` and other callers create sessions without it, so the App seeds
it: before each run, every key the session lacks is set from `state:` in one state-only
event. A key the session has (from the caller, a scenario, an agent or an earlier run) is
left as it is, and a key added to the spec later reaches old sessions on their next run.

A key the spec marks `required` has no value to seed: the session's creator supplies it
(`agentspec run` asks for it); an instruction that reads it in a session without it stops
the run with the plain error of `agentspec.runtime.instructions`. Plugins cannot stop a run
with their own error (ADK turns it into a RuntimeError with a traceback in its log).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event, EventActions
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types

__all__ = ["InitialState", "initial_state", "required_inputs"]


class InitialState(BasePlugin):
    """Sets the keys of the spec's `state:` that a session lacks, before each run; knows
    the keys the session's creator supplies (`required`), for whoever creates sessions."""

    def __init__(self, state: Mapping[str, Any],
                 required: Mapping[str, str | None] | None = None) -> None:
        super().__init__(name="agentspec_initial_state")
        self.state = dict(state)
        self.required = dict(required or {})

    def missing(self, session_state: Mapping[str, Any]) -> dict[str, Any]:
        """The entries `session_state` lacks, as fresh copies (a session may change its
        lists and mappings in place; another session must not see that)."""
        return {key: copy.deepcopy(value) for key, value in self.state.items()
                if key not in session_state}

    async def before_run_callback(self, *, invocation_context: InvocationContext
                                  ) -> types.Content | None:
        session = invocation_context.session
        missing = self.missing(session.state)
        if missing:
            await invocation_context.session_service.append_event(session, Event(
                invocation_id=invocation_context.invocation_id, author="user",
                actions=EventActions(state_delta=missing)))
        return None


def initial_state(app: Any) -> Mapping[str, Any]:
    """The initial state of a built App (empty when its spec declares none)."""
    for plugin in getattr(app, "plugins", None) or ():
        if isinstance(plugin, InitialState):
            return plugin.state
    return {}


def required_inputs(app: Any) -> Mapping[str, str | None]:
    """The state keys a built App's sessions must be created with: key -> description."""
    for plugin in getattr(app, "plugins", None) or ():
        if isinstance(plugin, InitialState):
            return plugin.required
    return {}
