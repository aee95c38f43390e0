"""agentspec's facts on the span a runtime module runs in: a command's exit status, a model
fallback. Each test records into a tracer provider of its own (never the process's)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@pytest.fixture
def spans() -> Iterator[tuple[Any, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider.get_tracer("test"), exporter
    provider.shutdown()


def _only(exporter: InMemorySpanExporter) -> ReadableSpan:
    [span] = exporter.get_finished_spans()
    return span


def test_a_commands_exit_status_is_on_its_span(spans: tuple[Any, InMemorySpanExporter],
                                                tmp_path: Path) -> None:
    from agentspec.runtime.harness.files import _execute
    from tests.spec_defaults import spec_shell

    tracer, exporter = spans
    with tracer.start_as_current_span("execute_tool execute"):
        result = _execute(spec_shell(tmp_path), "exit 3")
    assert result["exit_code"] == 3
    attributes = dict(_only(exporter).attributes or {})
    assert attributes["agentspec.command.exit_code"] == 3
    assert attributes["agentspec.command.timed_out"] is False


def test_a_model_fallback_is_an_event_on_the_call(
        spans: tuple[Any, InMemorySpanExporter]) -> None:
    from google.adk.models.llm_request import LlmRequest
    from google.genai import types

    from agentspec.runtime.model_routing import fallback
    from agentspec.runtime.usage import ANSWERED_BY
    from agentspec.testing.scripted import ScriptedModel

    down = ScriptedModel(agent="a", replies=[{"fail": "unavailable"}])
    up = ScriptedModel(model="backup-model", agent="a", replies=[{"text": "hi"}])
    chain = fallback(name="chain", models={"down": down, "up": up}, order=["down", "up"])
    request = LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text="x")])])
    tracer, exporter = spans

    async def call() -> tuple[list[Any], str | None]:
        with tracer.start_as_current_span("call_llm"):
            answers = [r async for r in chain.generate_content_async(request)]
            return answers, ANSWERED_BY.get()

    answers, answered_by = asyncio.run(call())
    assert answers and answered_by == "backup-model"  # the usage is the member's
    [(name, attributes)] = [(e.name, dict(e.attributes or {}))
                            for e in _only(exporter).events]
    assert name == "agentspec.model.fallback"
    assert attributes == {"agentspec.model.failed": "down", "agentspec.model.next": "up"}
