#!/usr/bin/env python
"""Benchmark A2A: the time one remote call (`kind: remote`) adds over the same agent run in
process, on loopback.

    .venv/bin/python bench/a2a.py [--calls N]

The agent answers a fixed text without a model, so the figures are the protocol's cost: the
card fetch (once per agent), then per call the JSON-RPC request, the server's task and
session bookkeeping, the streamed events and their conversion back to ADK events. The server
runs in its own process (`agentspec`'s `a2a_serve.starlette` under uvicorn). It prints
figures and asserts nothing about speed. Needs the `a2a` extra.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import AsyncGenerator
from typing import Any

# run as a script, this file's directory comes first on sys.path, where this file would be
# imported as a2a-sdk's `a2a` package
sys.path = [p for p in sys.path if os.path.realpath(p or ".") !=
            os.path.dirname(os.path.realpath(__file__))]

ANSWER = "BENCH-ANSWER"


def _agent(name: str) -> Any:
    from google.adk.agents import BaseAgent
    from google.adk.events import Event
    from google.genai import types

    class Answers(BaseAgent):
        async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
            yield Event(author=self.name, invocation_id=ctx.invocation_id,
                        content=types.Content(role="model", parts=[types.Part(text=ANSWER)]))

    return Answers(name=name, description="Answers a fixed text.")


def serve(port: int) -> None:
    """The server process: the answering agent over A2A on 127.0.0.1:`port`."""
    import uvicorn
    from google.adk.apps import App
    from google.adk.artifacts import InMemoryArtifactService
    from google.adk.sessions import InMemorySessionService

    from agentspec.runtime.a2a_serve import starlette

    app = App(name="bench_remote", root_agent=_agent("remote_answers"))
    server = starlette(app, url=f"http://127.0.0.1:{port}/",
                       session_service=InMemorySessionService(),
                       artifact_service=InMemoryArtifactService())
    uvicorn.run(server, host="127.0.0.1", port=port, log_level="warning")


async def _calls(root: Any, calls: int) -> list[float]:
    """Seconds per turn, one message each, in one session (the first is left out)."""
    from google.adk.apps import App
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    runner = Runner(app=App(name="bench_caller", root_agent=root),
                    session_service=InMemorySessionService())
    session = await runner.session_service.create_session(app_name="bench_caller",
                                                          user_id="user")
    seconds = []
    try:
        for index in range(calls + 1):
            message = types.Content(role="user", parts=[types.Part(text=f"call {index}")])
            start = time.perf_counter()
            texts = [p.text async for e in runner.run_async(
                user_id="user", session_id=session.id, new_message=message)
                for p in (e.content.parts if e.content else None) or () if p.text]
            seconds.append(time.perf_counter() - start)
            assert ANSWER in texts, texts
    finally:
        await runner.close()
    return seconds[1:]


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait(url: str, process: subprocess.Popen[bytes]) -> None:
    import httpx

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(url + ".well-known/agent-card.json", timeout=5).is_success:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    sys.exit("the A2A server did not start")


def _row(name: str, seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p90 = ms[int(len(ms) * 0.9) - 1] if len(ms) >= 10 else ms[-1]
    return f"{name:<28} {statistics.median(ms):>9.2f} {statistics.mean(ms):>9.2f} {p90:>9.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    if args.serve:
        serve(args.serve)
        return
    from agentspec.runtime.remote import remote_agent

    port = _port()
    url = f"http://127.0.0.1:{port}/"
    process = subprocess.Popen([sys.executable, __file__, "--serve", str(port)],
                               env={**os.environ, "PYTHONWARNINGS": "ignore"})
    try:
        _wait(url, process)
        local = asyncio.run(_calls(_agent("local_answers"), args.calls))
        remote = asyncio.run(_calls(remote_agent(name="remote_answers", card=url,
                                                 timeout=30), args.calls))
    finally:
        process.terminate()
        process.wait(30)
    print(f"A2A on loopback, {args.calls} calls each (after one warm-up call), ms per call")
    print(f"{'agent':<28} {'median':>9} {'mean':>9} {'p90':>9}")
    print(_row("in process", local))
    print(_row("remote (A2A, own process)", remote))
    added = statistics.median(remote) - statistics.median(local)
    print(f"added per remote call (median): {added * 1000:.2f} ms")


if __name__ == "__main__":
    main()
