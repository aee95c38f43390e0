"""Serving an app's agent over A2A (the Agent2Agent protocol), through ADK's `to_a2a`.

`agentspec serve SPEC --a2a` and a generated package's `a2a_app` (`uvicorn pkg.agent:a2a_app`)
both come here. The agent card is ADK's, built from the agents the spec made: the served
agent's name and description, a skill per tool and sub-agent from their descriptions, text in
and out. Conversations live in the spec's `sessions:` store (ADK's executor keeps one session
per A2A context); a tool call waiting for a person's approval (`interrupt_on`) ends the task
in A2A's `input-required` state, and the caller answers it with the confirmation's function
response in its next message.

Nothing here imports a2a-sdk until a server is made, so a package imports without it.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from agentspec.contract.extras import install

__all__ = ["A2A_URL", "A2aUnavailable", "LazyA2aApp", "a2a_server", "served_agent",
           "starlette"]

#: ADK warns on every A2A request that its A2A support is experimental; serving chose it
warnings.filterwarnings("ignore", message=r"\[EXPERIMENTAL\].*A2A")

#: the URL a package's `a2a_app` advertises in its agent card (its server's address is not
#: known to the app: uvicorn chooses it)
A2A_URL = "AGENTSPEC_A2A_URL"
DEFAULT_URL = "http://127.0.0.1:8000/"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class A2aUnavailable(RuntimeError):
    """The `a2a` extra (a2a-sdk) is not installed, or the agent to serve is not in the app."""


def _require_sdk() -> None:
    try:
        import a2a  # noqa: F401
    except ImportError:
        raise A2aUnavailable(f"serving over A2A needs the a2a-sdk package: {install('a2a')}") \
            from None


def served_agent(app: Any, name: str | None) -> Any:
    """The app itself when `name` is None or its root's; else an app whose root is the agent
    `name` (with the app's plugins and settings)."""
    from agentspec.runtime.agents import walk

    if name is None or name == app.root_agent.name:
        return app
    found = [agent for agent in walk(app.root_agent) if getattr(agent, "name", None) == name]
    if not found:
        known = sorted({a.name for a in walk(app.root_agent) if getattr(a, "name", None)})
        raise A2aUnavailable(f"no agent `{name}` in the app `{app.name}`; its agents are "
                             + ", ".join(f"`{n}`" for n in known))
    return app.model_copy(update={"root_agent": found[0]})


def starlette(app: Any, *, url: str, session_service: Any, artifact_service: Any) -> Any:
    """The Starlette application that serves `app`'s root agent over A2A at `url` (the
    address its card advertises)."""
    _require_sdk()
    from urllib.parse import urlsplit

    from google.adk.a2a.utils.agent_to_a2a import to_a2a
    from google.adk.runners import Runner

    parts = urlsplit(url)
    runner = Runner(app=app, session_service=session_service,
                    artifact_service=artifact_service)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*EXPERIMENTAL.*")
        return to_a2a(app.root_agent, host=parts.hostname or "127.0.0.1",
                      port=parts.port or (443 if parts.scheme == "https" else 80),
                      protocol=parts.scheme or "http", rpc_path=parts.path.strip("/"),
                      runner=runner)


class LazyA2aApp:
    """An ASGI application made on its first call: a package that defines one imports
    without a2a-sdk, and reads its session store only when it is served."""

    def __init__(self, app: Any, *, sessions: str | None, store_elsewhere: bool) -> None:
        self._app = app
        self._sessions = sessions
        self._store_elsewhere = store_elsewhere
        self._inner: Any = None

    def _made(self) -> Any:
        if self._inner is None:
            from agentspec.runtime.env import expand
            from agentspec.runtime.sessions import open_sessions, sessions_url

            url = sessions_url(None, None if self._sessions is None
                               else expand(self._sessions))
            if url is None and self._store_elsewhere:
                raise A2aUnavailable(
                    "the spec keeps its conversations in a store whose URL is not written into "
                    "the package (it may hold a password): set AGENTSPEC_SESSIONS to it")
            session_service, artifact_service = open_sessions(url)
            self._inner = starlette(
                self._app, url=os.environ.get(A2A_URL) or DEFAULT_URL,
                session_service=session_service, artifact_service=artifact_service)
        return self._inner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._made()(scope, receive, send)


def a2a_server(app: Any, *, sessions: str | None = None,
               store_elsewhere: bool = False) -> LazyA2aApp:
    """What a generated package binds to `a2a_app`: `app` served over A2A when uvicorn (or any
    ASGI server) first calls it. `sessions` is the spec's store URL (`${env.X}` read then;
    `AGENTSPEC_SESSIONS` overrides it, as for `agentspec serve`; `store_elsewhere`: the spec
    names a store the package does not, which AGENTSPEC_SESSIONS must give); the card
    advertises `AGENTSPEC_A2A_URL` (default http://127.0.0.1:8000/)."""
    return LazyA2aApp(app, sessions=sessions, store_elsewhere=store_elsewhere)
