"""What `agentspec run` shows beside the conversation: token usage and cost (per turn with
`--usage`, the whole run at the end), the exact request each model receives (`--verbose`),
and, at a terminal, how long the agents have been working."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from agentspec.runtime.usage import Ledger

__all__ = ["Elapsed", "request_lines", "show_request", "streaming", "usage_lines"]


def usage_lines(ledger: Ledger, title: str) -> list[str]:
    lines = ledger.lines()
    return [lines[0].replace("usage:", f"{title}:", 1), *lines[1:]]


def request_lines(agent: str, request: Any) -> list[str]:
    """The request `agent`'s model receives: the model, the system instruction, the tools'
    declarations and the contents, as sent."""
    config = request.config
    lines = [f"[{agent}] request to {request.model}:"]
    system = config.system_instruction if config else None
    if system is not None:
        text = system if isinstance(system, str) else "\n".join(
            p.text or "" for p in getattr(system, "parts", None) or [])
        lines += ["  instruction:", *("    " + line for line in text.splitlines())]
    for tool in (config.tools if config else None) or []:
        for declaration in getattr(tool, "function_declarations", None) or []:
            dumped = declaration.model_dump(mode="json", exclude_none=True)
            lines.append(f"  tool: {json.dumps(dumped, ensure_ascii=False)}")
    for content in request.contents:
        dumped = content.model_dump(mode="json", exclude_none=True)
        lines.append(f"  {content.role}: {json.dumps(dumped.get('parts'), ensure_ascii=False)}")
    return lines


def streaming() -> Any:
    """ADK's run settings that stream answers as they are written, where the model can (a
    model that cannot answers whole)."""
    from google.adk.agents import RunConfig

    return RunConfig(streaming_mode="sse")  # StreamingMode.SSE (its module is private)


def show_request(agent: str, request: Any) -> None:
    from agentspec.runtime.harness.call_text import visible

    for line in request_lines(agent, request):
        click.echo(visible(line), err=True)


class Elapsed:
    """At a terminal, a line that counts the seconds while the agents work, rewritten in
    place and cleared before anything else is printed; elsewhere nothing."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream or sys.stderr
        self.active = bool(getattr(self.stream, "isatty", lambda: False)())
        self.lock = threading.Lock()
        self.shown = False
        self.held = False  # a person is being asked something: no ticking over the prompt

    @contextmanager
    def running(self) -> Iterator[None]:
        if not self.active:
            yield
            return
        stop = threading.Event()
        started = time.monotonic()

        def tick() -> None:
            while not stop.wait(0.5):
                with self.lock:
                    if self.held:
                        continue
                    self.stream.write(f"\r  working… {time.monotonic() - started:.0f}s ")
                    self.stream.flush()
                    self.shown = True

        thread = threading.Thread(target=tick, name="agentspec-elapsed", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
            self.clear()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """While a person is asked (an approval): the line is cleared and stays away."""
        self.clear()
        with self.lock:
            self.held = True
        try:
            yield
        finally:
            with self.lock:
                self.held = False

    def clear(self) -> None:
        """Before another line is printed."""
        if not self.active:
            return
        with self.lock:
            if self.shown:
                self.stream.write("\r\033[K")
                self.stream.flush()
                self.shown = False
