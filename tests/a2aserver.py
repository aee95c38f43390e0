"""An A2A agent on loopback, in a thread: it answers every message with one text, no model.
For tests and benchmarks that need a remote agent to call (`kind: remote`)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
import warnings
from collections.abc import AsyncGenerator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

__all__ = ["Served", "answering"]


@dataclass(frozen=True)
class Served:
    url: str  # its base URL
    card: str  # its agent card, as JSON text


def _agent(name: str, text: str) -> Any:
    from google.adk.agents import BaseAgent
    from google.adk.events import Event
    from google.genai import types

    class Answers(BaseAgent):
        async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
            yield Event(author=self.name, invocation_id=ctx.invocation_id,
                        content=types.Content(role="model", parts=[types.Part(text=text)]))

    return Answers(name=name, description=f"Answers {text}.")


@contextlib.contextmanager
def answering(text: str, name: str = "answers") -> Iterator[Served]:
    """Serves an agent that answers `text` over A2A on a free loopback port."""
    import uvicorn
    from google.adk.a2a.utils.agent_to_a2a import to_a2a

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*EXPERIMENTAL.*")
        app = to_a2a(_agent(name, text), host="127.0.0.1", port=port)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])),
                              daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60  # a readiness deadline, not a check
        while True:
            with contextlib.suppress(httpx.HTTPError):
                answer = httpx.get(url + ".well-known/agent-card.json", timeout=5)
                if answer.is_success:
                    break
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the A2A test server never answered")
            time.sleep(0.05)
        yield Served(url, answer.text)
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
