"""Tracing through ADK's own OpenTelemetry spans: the process's tracer provider, set up from a
spec's `telemetry:` section unless the `OTEL_*` environment (or the host program) already
decided, and `note`, which puts agentspec's facts on the span a runtime module runs in.

Export is a batch in a background thread, so a slow or unreachable collector never slows a
run; its first failure is one warning (without the headers, which may hold a key), and spans
are then dropped for a while instead of retried at every batch."""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from agentspec.runtime.models import MissingExtra

__all__ = ["CONTENT_VARIABLES", "TRACING", "TracingUnavailable", "install_tracing", "note",
           "set_attributes"]

WARNINGS = logging.getLogger("agentspec.telemetry")

#: what turns prompt and response text on ADK's spans on or off (ADK records it by default)
CONTENT_VARIABLES = ("ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS",
                     "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
#: seconds spans are dropped after an export failed, before the collector is tried again
RETRY_AFTER = 30.0
#: seconds one export may take, unless `OTEL_EXPORTER_OTLP[_TRACES]_TIMEOUT` says otherwise
EXPORT_TIMEOUT = 3.0

#: whether building an app sets up tracing (`agentspec build` only checks it can)
TRACING: ContextVar[bool] = ContextVar("agentspec_tracing", default=True)
_LOCK = threading.Lock()
_installed: list[str] = []  # the exporter this process traces to, once set up


class TracingUnavailable(MissingExtra):
    """The spec asks for an exporter whose package is not installed."""


def note(event: str, **attributes: Any) -> None:
    """An event with `attributes` on the current span (nothing when none is recorded)."""
    span = trace.get_current_span()
    if span.is_recording():
        span.add_event(event, {k: _value(v) for k, v in attributes.items() if v is not None})


def set_attributes(**attributes: Any) -> None:
    """`attributes` on the current span (dots for the underscores after `agentspec_`)."""
    span = trace.get_current_span()
    if span.is_recording():
        span.set_attributes({k: _value(v) for k, v in attributes.items() if v is not None})


def _value(value: Any) -> Any:
    if isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    return str(value)


def install_tracing(*, exporter: str, endpoint: str | None = None, protocol: str = "http",
                    headers: Mapping[str, str] | None = None, service_name: str,
                    sampling: float = 1.0, record_content: bool = False) -> None:
    """Sets up the process's tracer provider (once; a provider already set wins). Under
    `TRACING` false (`agentspec build`), only checks that the exporter can be made."""
    if not TRACING.get():
        if exporter == "otlp":
            _module("grpc" if protocol == "grpc" else "http")
        return
    for name in CONTENT_VARIABLES:  # the environment wins
        os.environ.setdefault(name, ("true" if name.startswith("ADK") else "SPAN_ONLY")
                              if record_content else ("false" if name.startswith("ADK")
                                                      else "NO_CONTENT"))
    with _LOCK:
        current = trace.get_tracer_provider()
        proxy = isinstance(current, trace.ProxyTracerProvider)
        if _installed or (not proxy and (_env_endpoint() or
                                         not hasattr(current, "add_span_processor"))):
            return  # set up already: by us, or from the OTEL_* environment
        if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
            return
        chosen = os.environ.get("OTEL_TRACES_EXPORTER", exporter).split(",")[0].strip()
        if chosen not in ("otlp", "console"):
            return
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

        span_exporter, where = _exporter(chosen, endpoint, protocol, headers or {})
        processor = BatchSpanProcessor(_Guarded(span_exporter, where))
        if not proxy:  # `adk web` / `adk api_server` set one up for their trace view
            current.add_span_processor(processor)  # type: ignore[attr-defined]
            _installed.append(where)
            return
        provider = TracerProvider(
            resource=Resource.create({} if os.environ.get("OTEL_SERVICE_NAME")
                                     else {"service.name": service_name}),
            sampler=None if os.environ.get("OTEL_TRACES_SAMPLER")
            else ParentBased(TraceIdRatioBased(sampling)))
        provider.add_span_processor(processor)
        trace.set_tracer_provider(provider)
        _installed.append(where)


def _env_endpoint() -> bool:
    return any(os.environ.get(f"OTEL_EXPORTER_OTLP{s}_ENDPOINT") for s in ("_TRACES", ""))


def _exporter(chosen: str, endpoint: str | None, protocol: str,
              headers: Mapping[str, str]) -> tuple[Any, str]:
    from agentspec.contract.urls import redacted

    if chosen == "console":
        import sys

        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter(out=sys.stderr), "the console"
    env_protocol = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
                                  os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL"))
    grpc = env_protocol == "grpc" if env_protocol else protocol == "grpc"
    env_endpoint = _env_endpoint()
    env_headers = any(os.environ.get(f"OTEL_EXPORTER_OTLP{s}_HEADERS") for s in ("_TRACES", ""))
    sent = None if env_headers else dict(headers) or None  # `${env.X}` read at load time
    timeout = None if any(os.environ.get(f"OTEL_EXPORTER_OTLP{s}_TIMEOUT")
                          for s in ("_TRACES", "")) else EXPORT_TIMEOUT
    url = None if env_endpoint else (endpoint or
                                     ("http://localhost:4317" if grpc else "http://localhost:4318"))
    module = _module("grpc" if grpc else "http")
    for name in ("opentelemetry.exporter.otlp.proto.http.trace_exporter",
                 "opentelemetry.exporter.otlp.proto.grpc.exporter",
                 "opentelemetry.sdk.trace.export"):
        logging.getLogger(name).setLevel(logging.CRITICAL)  # _Guarded says it once
    if url is not None and not grpc and not url.rstrip("/").endswith("/v1/traces"):
        url = url.rstrip("/") + "/v1/traces"
    made = module.OTLPSpanExporter(endpoint=url, headers=sent, timeout=timeout)
    shown = redacted(url) if url else "the collector of OTEL_EXPORTER_OTLP_ENDPOINT"
    return made, shown


def _module(kind: str) -> Any:
    """The OTLP exporter's module for `kind` (http, grpc), or what to install."""
    try:
        return importlib.import_module(f"opentelemetry.exporter.otlp.proto.{kind}."
                                       "trace_exporter")
    except ImportError as exc:
        from agentspec.contract.extras import install

        raise TracingUnavailable(
            f"`telemetry.exporter: otlp` needs the OpenTelemetry OTLP exporter: "
            f"{install('telemetry')}") from exc


class _Guarded(SpanExporter):
    """A span exporter that never raises, warns once, and drops spans for `RETRY_AFTER`
    seconds after a failure instead of trying at every batch."""

    def __init__(self, inner: Any, where: str) -> None:
        self.inner = inner
        self.where = where
        self.warned = False
        self.resting_until = 0.0

    def export(self, spans: Sequence[Any]) -> SpanExportResult:
        if time.monotonic() < self.resting_until:
            return SpanExportResult.FAILURE
        try:
            result: SpanExportResult = self.inner.export(spans)
            failure = None if result == SpanExportResult.SUCCESS else "the export failed"
        except Exception as exc:  # noqa: BLE001 - tracing never stops a run
            result, failure = SpanExportResult.FAILURE, f"{type(exc).__name__}"
        if failure is not None:
            self.resting_until = time.monotonic() + RETRY_AFTER
            if not self.warned:
                self.warned = True
                WARNINGS.warning("agentspec: traces could not be sent to %s (%s); the run "
                                 "goes on without them", self.where, failure)
        return result

    def shutdown(self) -> None:
        with contextlib.suppress(Exception):  # at exit, nothing is left to tell
            self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return bool(self.inner.force_flush(timeout_millis))
