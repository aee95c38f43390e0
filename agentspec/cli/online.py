"""`validate --online`: what only the network can tell. Each remote agent's card is fetched,
with its headers and its timeout, and must be an A2A agent card that names an interface to
call. Nothing here runs without `--online`; headers' `${env.X}` are read from the
environment and sent, never shown."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from agentspec.contract.urls import redacted
from agentspec.diagnostics import Diagnostic, codes
from agentspec.language.agents import RemoteAgent
from agentspec.validate.check import CheckResult

__all__ = ["card_problem", "remote_cards"]


def _well_known(url: str) -> str:
    from urllib.parse import urlsplit

    if urlsplit(url).path in ("", "/"):
        return url.rstrip("/") + "/.well-known/agent-card.json"
    return url


def card_problem(card: Any) -> str | None:
    """Why `card` (parsed JSON) is no A2A agent card, or None."""
    if not isinstance(card, dict):
        return "the answer is not a JSON object"
    if not isinstance(card.get("name"), str) or not card["name"]:
        return "the answer has no `name`: it is no A2A agent card"
    interfaces = card.get("supportedInterfaces") or card.get("additionalInterfaces") or []
    urls = [card.get("url")] + [i.get("url") for i in interfaces if isinstance(i, dict)]
    if not any(isinstance(u, str) and u for u in urls):
        return "the card names no URL to send messages to"
    return None


def _fetch(url: str, headers: Mapping[str, str], timeout: float) -> str | None:
    import httpx

    try:
        answer = httpx.get(url, headers=dict(headers), timeout=timeout, follow_redirects=True)
    except httpx.TimeoutException:
        return f"no answer within {timeout:g} s (its `timeout`)"
    except httpx.HTTPError as error:
        return f"cannot reach it ({type(error).__name__}: {error})"
    if not answer.is_success:
        return f"it answered HTTP {answer.status_code}"
    try:
        return card_problem(json.loads(answer.text))
    except json.JSONDecodeError:
        return "the answer is not JSON: it is no A2A agent card"


def _headers(agent: RemoteAgent, environ: Mapping[str, str]) -> dict[str, str] | str:
    from agentspec.runtime.env import MissingEnvironmentVariable, expand

    try:
        return {key: expand(value, environ) for key, value in (agent.headers or {}).items()}
    except MissingEnvironmentVariable as missing:
        return str(missing)  # never the value of one that is set


def remote_cards(result: CheckResult, environ: Mapping[str, str] | None = None
                 ) -> list[Diagnostic]:
    """AS298 for each remote agent of a valid spec whose card cannot be read."""
    if result.spec is None or result.document is None or not result.ok:
        return []
    environ = os.environ if environ is None else environ
    found = []
    for name, agent in (result.spec.agents or {}).items():
        if not isinstance(agent, RemoteAgent) or agent.url is None:
            continue
        headers = _headers(agent, environ)
        if isinstance(headers, str):  # a variable not set: AS305 says so already
            continue
        url = _well_known(agent.url)
        problem = _fetch(url, headers, agent.timeout)
        if problem is not None:
            found.append(codes.REMOTE_UNREACHABLE(
                f"the card of remote agent `{name}` at {redacted(url)} cannot be read: "
                f"{problem}", result.document.value_span("agents", name, "url"),
                hint="start the remote agent or fix `url`; validate without `--online` "
                "does not touch the network"))
    return found
