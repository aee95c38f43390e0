"""A fake OpenAI-compatible server on loopback: `POST /v1/chat/completions`, plain JSON or SSE
streaming, checking the bearer token of every request."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Server:
    url: str
    key: str
    answer: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released): connections are refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def openai_server(key: str, answer: str) -> Iterator[Server]:
    state = Server("", key, answer)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(body)
            if self.path != "/v1/chat/completions":
                state.problems.append(f"unexpected path {self.path}")
                self._send(404, {"error": {"message": "not found"}})
                return
            if self.headers.get("Authorization") != f"Bearer {state.key}":
                state.problems.append(f"Authorization was {self.headers.get('Authorization')!r}")
                self._send(401, {"error": {"message": "bad key", "type": "auth"}})
                return
            if body.get("stream"):
                self._stream(body)
            else:
                self._send(200, {
                    "id": "chatcmpl-1", "object": "chat.completion", "created": 0,
                    "model": body["model"], "choices": [{
                        "index": 0, "finish_reason": "stop",
                        "message": {"role": "assistant", "content": state.answer}}],
                    "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}})

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, body: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            words = state.answer.split(" ")
            for index, word in enumerate(words):
                chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0,
                         "model": body["model"], "choices": [{
                             "index": 0, "finish_reason": None,
                             "delta": {"role": "assistant",
                                       "content": word + (" " if index < len(words) - 1
                                                          else "")}}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            last = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0,
                    "model": body["model"],
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
            self.wfile.write(f"data: {json.dumps(last)}\n\ndata: [DONE]\n\n".encode())
            self.wfile.flush()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextmanager
def failing_server(status: int | None) -> Iterator[str]:
    """A loopback server answering every POST with `status` and an error body, or (None)
    reading the request and never answering. Yields its base URL (`.../v1`)."""
    release = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if status is None:
                release.wait()  # until the test ends: the client's timeout fires first
                return
            data = json.dumps({"error": {"message": f"the server says {status}",
                                         "code": status, "status": "FAILED"}}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        release.set()
        server.shutdown()
        server.server_close()
        thread.join()
