"""A `temporal://HOST:PORT/NAMESPACE?task_queue=Q` job store URL, read and checked.

Validate reports each problem at the `jobs.store` key (AS312, AS313), and the runtime opens
the store from the same parse, so what validate accepts is what the worker connects to.
Optional query parameters: `timeout` (seconds a connection or a request may take before the
store gives up with an error naming the server, 10 by default) and `heartbeat` (seconds
without a sign of life after which a job's worker is taken for dead and another one goes on
with the job, 10 by default).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

__all__ = ["SCHEME", "TemporalTarget", "TemporalUrlError", "parse_temporal_url"]

SCHEME = "temporal://"
#: Temporal's own limits: a namespace is a DNS-like label, a task queue any short text
_NAMESPACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$")
_TASK_QUEUE = re.compile(r"^[A-Za-z0-9._:/-]{1,200}$")
_HOST = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]{1,253})$")
_KNOWN = ("task_queue", "timeout", "heartbeat")


class TemporalUrlError(ValueError):
    """What is wrong with the URL; `part` is "address", "namespace" or "task_queue"."""

    def __init__(self, part: str, message: str, hint: str) -> None:
        super().__init__(message)
        self.part, self.hint = part, hint


@dataclass(frozen=True)
class TemporalTarget:
    host: str
    port: int
    namespace: str
    task_queue: str
    timeout: float = 10.0
    heartbeat: float = 10.0

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


def parse_temporal_url(url: str) -> TemporalTarget:
    """The server, namespace and task queue `url` names; `TemporalUrlError` says what is
    missing or malformed."""
    if not url.startswith(SCHEME):
        raise TemporalUrlError("address", f"`{url}` does not start with `{SCHEME}`",
                               "write `temporal://HOST:PORT/NAMESPACE?task_queue=QUEUE`")
    parts = urlsplit(url)
    if parts.username or parts.password:
        raise TemporalUrlError("address", "a temporal:// URL takes no user or password",
                               "connect to a server that trusts the worker's network, or "
                               "use an mTLS proxy")
    try:
        port = parts.port
    except ValueError:
        port = -1
    host = parts.hostname or ""
    if not host or not _HOST.match(parts.netloc.rsplit(":", 1)[0] if port else parts.netloc) \
            or port is None or port <= 0:
        raise TemporalUrlError("address", f"`{parts.netloc}` is not HOST:PORT",
                               "name the Temporal frontend, e.g. `temporal://localhost:7233/"
                               "default?task_queue=jobs` (the port is required)")
    namespace = parts.path.removeprefix("/")
    if not _NAMESPACE.match(namespace):
        raise TemporalUrlError("namespace", f"`{namespace}` is not a Temporal namespace"
                               if namespace else "the URL names no namespace",
                               "add the namespace as the path: `temporal://HOST:PORT/default"
                               "?task_queue=jobs`")
    if parts.fragment:
        raise TemporalUrlError("address", "a temporal:// URL has no `#` part",
                               "remove it")
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    unknown = sorted(set(query) - set(_KNOWN))
    if unknown:
        raise TemporalUrlError("task_queue", f"unknown parameter `{unknown[0]}`",
                               "a temporal:// URL takes `task_queue`, `timeout` and `heartbeat`")
    queue = query.get("task_queue", "")
    if not _TASK_QUEUE.match(queue):
        raise TemporalUrlError("task_queue", f"`{queue}` is not a task queue name" if queue
                               else "the URL names no task queue",
                               "add `?task_queue=NAME` (the queue this spec's workers poll)")
    seconds = {name: _seconds(name, query[name]) for name in ("timeout", "heartbeat")
               if name in query}
    return TemporalTarget(host=host, port=port, namespace=namespace, task_queue=queue,
                          **seconds)


def _seconds(name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 3600:
        raise TemporalUrlError("task_queue", f"`{name}={text}` is not a number of seconds",
                               f"write `{name}=10` (more than 0, at most 3600)")
    return value
