"""`kind: remote`: an A2A agent served elsewhere, called through ADK's `RemoteA2aAgent`.

ADK's agent turns a failed call (card unreachable, an error answer, a timeout) into an event
carrying `error_message`, which a parent reads as the remote's answer. Here a failure is a
`RemoteAgentError` naming the agent and its URL instead, so a run ends with a plain error and
a router's fallback takes over. Header values (`${env.X}`) are read when the agent is built and
live only in its HTTP client, never in its repr.
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncGenerator, Mapping
from typing import Any

from agentspec.contract.extras import install

__all__ = ["RemoteAgentError", "remote_agent"]

#: ADK warns on every A2A call that its A2A support is experimental; a spec chose it
warnings.filterwarnings("ignore", message=r"\[EXPERIMENTAL\].*A2A")


class RemoteAgentError(RuntimeError):
    """A remote agent's call failed for a reason outside agentspec: its server is down, slow
    or answered with an error."""

    def __init__(self, agent: str, where: str, cause: str) -> None:
        self.agent, self.where, self.cause = agent, where, cause
        super().__init__(f"remote agent `{agent}` at {where} failed: {cause}")


def _card_url(card: str) -> str:
    """A base URL is the card's well-known place (what `agentspec serve` prints)."""
    from urllib.parse import urlsplit

    if "://" in card and urlsplit(card).path in ("", "/"):
        return card.rstrip("/") + "/.well-known/agent-card.json"
    return card


def _file_description(path: str) -> str | None:
    """The description of the agent card file at `path`, if it has one (a card that cannot
    be read fails on the first call, naming the agent)."""
    import json

    try:
        with open(path, encoding="utf-8") as file:
            found = json.load(file).get("description")
    except (OSError, ValueError, AttributeError):
        return None
    return found if isinstance(found, str) else None


def _cause(message: str, name: str) -> str:
    """ADK's message without its repeated preambles."""
    for preamble in ("Failed to initialize remote A2A agent: ",
                     f"Failed to initialize remote A2A agent {name}: "):
        message = message.replace(preamble, "")
    return message


def _failed_task(event: Any) -> bool:
    """Whether `event` carries an A2A task in the failed or rejected state (ADK records the
    response it came from in the event's metadata)."""
    for key, value in (getattr(event, "custom_metadata", None) or {}).items():
        if key.endswith("response") and isinstance(value, dict):
            state = str((value.get("status") or {}).get("state", "")).lower()
            if state.endswith(("failed", "rejected")):
                return True
    return False


def _agent_class() -> type[Any]:
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r".*EXPERIMENTAL.*")
            from google.adk.agents.remote_a2a_agent import RemoteA2aAgent
    except ImportError:
        from agentspec.runtime.models import MissingExtra

        raise MissingExtra(f"a `kind: remote` agent needs the a2a-sdk package: "
                           f"{install('a2a')}") from None

    from pydantic import PrivateAttr

    from agentspec.runtime.workflows import NodeEntry

    class RemoteAgent(NodeEntry, RemoteA2aAgent):
        """ADK's remote agent whose failures are exceptions naming it and its URL. Like the
        workflow agents, it runs as a node whose output is its answer, so it can be called
        like a tool (`mode: single_turn`: an `{agent: x}` tool, `task`); ADK's own takes
        only `task` mode, which needs a remote that calls `finish_task`."""

        mode: str | None = None  # type: ignore[assignment]
        #: the card's URL or file and the timeout, as given (for the errors)
        _where: str = PrivateAttr("its agent card")
        _wait: float = PrivateAttr(0.0)

        async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Any, None]:
            where = self._where
            from agentspec.contract.urls import redacted

            async for event in super()._run_async_impl(ctx):
                if getattr(event, "error_message", None):
                    cause = _cause(str(event.error_message), self.name)
                    if cause.endswith(": "):  # httpx's timeouts have no text
                        cause += f"no answer within {self._wait:g} s (its `timeout`)"
                    raise RemoteAgentError(self.name, redacted(where), cause)
                if _failed_task(event):  # a failed task's answer is its error, not a reply
                    text = " ".join(p.text for p in (event.content.parts if event.content
                                                     else None) or () if p.text)
                    raise RemoteAgentError(self.name, redacted(where),
                                           f"its task failed: {text or 'no reason given'}")
                yield event

    return RemoteAgent


def remote_agent(*, name: str, card: str, description: str | None = None,
                 headers: Mapping[str, str] | None = None, timeout: float = 120.0,
                 **agent: Any) -> Any:
    """The agent that calls the A2A agent whose card is at `card` (a URL or a file path):
    every request sends `headers` (their `${env.X}` read as the app loads) and waits
    `timeout` seconds at most; `agent`: ADK agent fields (`mode`, callbacks)."""
    import httpx

    if not description and "://" not in card:  # a card file: its description now (ADK
        description = _file_description(card)  # fills it in only on the first call)
    client = httpx.AsyncClient(headers=dict(headers or {}), timeout=httpx.Timeout(timeout))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*EXPERIMENTAL.*")
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        made = _agent_class()(name=name, agent_card=_card_url(card),
                              description=description or "", httpx_client=client,
                              timeout=timeout,
                              **{key: value for key, value in agent.items() if value is not None})
    made._where, made._wait = _card_url(card), timeout
    return made
