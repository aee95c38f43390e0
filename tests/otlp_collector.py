"""A small OpenTelemetry collector on loopback: takes OTLP/HTTP trace exports (protobuf),
decodes them with the OpenTelemetry protocol's own classes, and keeps the spans and the
request headers for a test to read."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

__all__ = ["Collector", "Span", "collect"]


@dataclass(frozen=True)
class Span:
    name: str
    span_id: str
    parent_id: str  # "" for a root
    trace_id: str
    attributes: dict[str, Any]
    events: tuple[tuple[str, dict[str, Any]], ...]
    service: str


@dataclass
class Collector:
    url: str = ""
    spans: list[Span] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def named(self, name: str) -> list[Span]:
        return [span for span in self.spans if span.name == name]

    def parent(self, span: Span) -> Span | None:
        return next((s for s in self.spans if s.span_id == span.parent_id), None)

    def ancestors(self, span: Span) -> list[str]:
        names = []
        found = self.parent(span)
        while found is not None:
            names.append(found.name)
            found = self.parent(found)
        return names


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def _attributes(items: Any) -> dict[str, Any]:
    return {item.key: _value(item.value) for item in items}


def _decode(body: bytes) -> list[Span]:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans = []
    for resource_spans in request.resource_spans:
        service = str(_attributes(resource_spans.resource.attributes).get("service.name"))
        for scope in resource_spans.scope_spans:
            for span in scope.spans:
                spans.append(Span(
                    span.name, span.span_id.hex(), span.parent_span_id.hex(),
                    span.trace_id.hex(), _attributes(span.attributes),
                    tuple((e.name, _attributes(e.attributes)) for e in span.events), service))
    return spans


class _Handler(BaseHTTPRequestHandler):
    collector: Collector

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path != "/v1/traces":
            self.send_response(404)
            self.end_headers()
            return
        with self.collector.lock:
            self.collector.raw.append(body)
            self.collector.headers.append({k.lower(): v for k, v in self.headers.items()})
            self.collector.spans.extend(_decode(body))
        data = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextlib.contextmanager
def collect() -> Iterator[Collector]:
    """A collector on 127.0.0.1 at a free port (its `url`) until the block ends."""
    collector = Collector()
    handler = type("Handler", (_Handler,), {"collector": collector})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="otlp-collector", daemon=True)
    thread.start()
    collector.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield collector
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
