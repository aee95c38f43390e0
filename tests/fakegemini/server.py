"""A fake Gemini API on loopback: answers `generateContent` and `streamGenerateContent?alt=sse`
from a script, after checking each request against the API's rules (`rules.problems`).

A request that breaks a rule gets the 400 the real service gives (`INVALID_ARGUMENT` and the
rule's message), so google-genai raises its `ClientError` exactly as in production; the
problem is also kept in `violations` for the test to show. The script is the one scenarios
use (`replies: {agent: [...]}`, see `agentspec.testing.scripted`): a request is answered for
the agent that sent it, which ADK names in the system instruction (`Your internal name is
"..."`); `when:` replies match the request's text; `fail:` answers a 503 `UNAVAILABLE`
(or the `status:` given beside it: google-genai retries 429 and 5xx when asked to, as ADK's
evaluators do, for minutes).
A reply that calls a function the request does not declare is a script error (a real model
can only call declared functions).

Besides the script, `rules` answer by the prompt: the first rule whose pattern is found in
the request's last turn (the user's text, or the tool results it answers) gives its reply,
every time it matches, whichever agent asks (or only `agent`'s requests). A judge model
(ADK's evaluators) has no identity line: rules are how it is answered, deterministically.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakegemini.rules import problems

__all__ = ["FakeGemini", "Recorded", "Rule", "serve"]

PATH = re.compile(r"/(?P<version>v1beta|v1|v1alpha)/models/(?P<model>[^/:]+):"
                  r"(?P<method>generateContent|streamGenerateContent)")
AGENT = re.compile(r'Your internal name is "(?P<name>[^"]+)"')


@dataclass
class Recorded:
    """One request the fake received."""

    model: str
    agent: str | None
    stream: bool
    body: Any
    problems: list[str]


@dataclass(frozen=True)
class Rule:
    """Answers a request whose last turn contains `pattern` (a regular expression) with
    `reply` (a script step: `text`, `call`, `transfer` or `fail`); `agent`: only that
    agent's requests (None: any request, a judge's too)."""

    pattern: str
    reply: Mapping[str, Any]
    agent: str | None = None

    def matches(self, agent: str | None, body: Any) -> bool:
        return (self.agent is None or self.agent == agent) and \
            re.search(self.pattern, _last_turn(body)) is not None


@dataclass
class FakeGemini:
    """The script and what happened; `url` once serving."""

    replies: dict[str, list[Any]] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)  # rules broken, with the agent
    script_problems: list[str] = field(default_factory=list)
    #: agents ADK does not name (a `single_turn` agent has no identity line): a text of their
    #: own instruction that tells their requests apart
    probes: dict[str, str] = field(default_factory=dict)
    #: the script's name for an agent made at run time (a planner's nodes' role agents)
    alias: Callable[[str], str] = field(default=lambda name: name)
    rules: list[Rule] = field(default_factory=list)
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: the `usageMetadata` every response reports
    usage: dict[str, int] = field(default_factory=lambda: {
        "promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15})

    def load(self, replies: Mapping[str, list[Any]],
             probes: Mapping[str, str] | None = None) -> None:
        """A new script (each scenario brings its own); what was recorded is kept."""
        with self.lock:
            self.replies = {name: list(steps) for name, steps in replies.items()}
            self.probes = dict(probes or {})

    def agent(self, body: Any) -> str | None:
        """The agent that sent the request: ADK's identity line, else its probe."""
        if not isinstance(body, Mapping):
            return None
        system = _system(body)
        found = AGENT.search(system)
        if found:
            return self.alias(found["name"])
        matched = [name for name, probe in self.probes.items() if probe and probe in system]
        return matched[0] if len(matched) == 1 else None

    # --- answering --------------------------------------------------------------------------

    def answer(self, model: str, stream: bool, body: Any) -> tuple[int, Any]:
        agent = self.agent(body)
        found = problems(body, model)
        with self.lock:
            self.requests.append(Recorded(model, agent, stream, body, found))
            if found:
                self.violations += [f"{agent or model}: {p}" for p in found]
                return 400, _error(400, "INVALID_ARGUMENT", "\n".join(found))
            ruled = next((r.reply for r in self.rules if r.matches(agent, body)), None)
            step = ruled if ruled is not None else self._scripted(agent, body)
            if isinstance(step, tuple):
                return step
        if "fail" in step:
            code = int(step.get("status", 503))
            return code, _error(code, _STATUSES[code], f"{agent}: {step['fail']}")
        part = _part(step)
        call = part.get("functionCall")
        if call is not None and call["name"] not in _declared(body):
            return self._script_problem(f"the script has `{agent}` call {call['name']}, which "
                                        "its request does not declare")
        return 200, part

    def _scripted(self, agent: str | None, body: Any) -> Mapping[str, Any] | tuple[int, Any]:
        """The agent's next scripted reply, or the error answer of a script problem."""
        if agent is None:
            return self._script_problem("a request the fake cannot tell the agent of "
                                        f"(no identity line, no single probe, no rule): "
                                        f"{_system(body)[:200]!r}")
        step = self._next(agent, body)
        if step is None:
            return self._script_problem(
                f"the script has no more replies for agent `{agent}`"
                + (" that match this request" if self.replies.get(agent) else ""))
        return step

    def _script_problem(self, problem: str) -> tuple[int, Any]:
        self.script_problems.append(problem)
        return 500, _error(500, "INTERNAL", problem)

    def _next(self, agent: str, body: Any) -> Mapping[str, Any] | None:
        steps = self.replies.get(agent) or []
        text: str | None = None
        for index, step in enumerate(steps):
            when = step.get("when") if isinstance(step, Mapping) else None
            if when is not None:
                text = _text(body) if text is None else text
                if str(when) not in text:
                    continue
            chosen: Mapping[str, Any] = steps.pop(index)
            return chosen
        return None


_STATUSES = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
             429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


def _error(code: int, status: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status}}


def _part(step: Mapping[str, Any]) -> dict[str, Any]:
    if "text" in step:
        return {"text": str(step["text"])}
    if "call" in step:
        return {"functionCall": {"name": str(step["call"]), "args": dict(step.get("args") or {})}}
    if "transfer" in step:
        return {"functionCall": {"name": "transfer_to_agent",
                                 "args": {"agent_name": str(step["transfer"])}}}
    raise ValueError(f"a reply needs `text`, `call`, `transfer` or `fail`: {step!r}")


def _get(value: Mapping[str, Any], camel: str) -> Any:
    snake = re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel)
    return value.get(camel, value.get(snake))


def _system(body: Mapping[str, Any]) -> str:
    system = _get(body, "systemInstruction") or {}
    return "\n".join(p.get("text", "") for p in system.get("parts") or [])


def _text(body: Mapping[str, Any]) -> str:
    """What `when:` looks in: the system instruction, texts and function responses."""
    texts = [_system(body)]
    for content in body.get("contents") or []:
        for part in content.get("parts") or []:
            texts.append(part.get("text") or "")
            answer = _get(part, "functionResponse")
            if answer is not None:
                texts.append(json.dumps(answer.get("response"), default=str))
    return "\n".join(texts)


def _last_turn(body: Any) -> str:
    """The text of a request's last turn: the user's message, or the tool results."""
    contents = body.get("contents") if isinstance(body, Mapping) else None
    if not isinstance(contents, list) or not contents or not isinstance(contents[-1], Mapping):
        return ""
    texts = []
    for part in contents[-1].get("parts") or []:
        texts.append(part.get("text") or "")
        answer = _get(part, "functionResponse")
        if answer is not None:
            texts.append(json.dumps(answer.get("response"), default=str))
    return "\n".join(texts)


def _declared(body: Mapping[str, Any]) -> set[str]:
    return {d.get("name") for tool in body.get("tools") or []
            for d in _get(tool, "functionDeclarations") or []}


def _response(part: dict[str, Any], usage: dict[str, int], *, last: bool = True
              ) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": [part]}, "index": 0}
    if last:
        candidate["finishReason"] = "STOP"
    return {"candidates": [candidate], "modelVersion": "fake-gemini", "usageMetadata": usage}


class _Handler(BaseHTTPRequestHandler):
    fake: FakeGemini

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        matched = PATH.fullmatch(self.path.split("?", 1)[0])
        if matched is None:
            self._json(404, _error(404, "NOT_FOUND", f"no such method: {self.path}"))
            return
        if not self.headers.get("x-goog-api-key") and "key=" not in self.path:
            self._json(403, _error(403, "PERMISSION_DENIED", "Method doesn't allow "
                                   "unregistered callers. Please use an API key."))
            return
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"null")
        except json.JSONDecodeError as exc:
            self._json(400, _error(400, "INVALID_ARGUMENT", f"Invalid JSON payload: {exc}"))
            return
        stream = matched["method"] == "streamGenerateContent"
        status, answer = self.fake.answer(matched["model"], stream, body)
        if status != 200:
            self._json(status, answer)
        elif stream and "alt=sse" in self.path:
            self._sse(answer)
        else:
            reply = _response(answer, self.fake.usage)
            self._json(200, reply if not stream else [reply])

    def _json(self, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json; charset=UTF-8")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, part: dict[str, Any]) -> None:
        """A text arrives in two chunks (as the real stream splits it); a call in one."""
        text = part.get("text")
        usage = self.fake.usage
        chunks = [_response({"text": text[:len(text) // 2]}, usage, last=False),
                  _response({"text": text[len(text) // 2:]}, usage)] if text \
            else [_response(part, usage)]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
            self.wfile.flush()


@contextlib.contextmanager
def serve(fake: FakeGemini | None = None) -> Iterator[FakeGemini]:
    """Serves `fake` on 127.0.0.1 at a free port (its `url`) until the block ends."""
    fake = fake or FakeGemini()
    handler = type("Handler", (_Handler,), {"fake": fake})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="fake-gemini", daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
