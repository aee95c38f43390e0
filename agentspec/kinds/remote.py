"""`kind: remote`: an agent served elsewhere over A2A, named by its agent card (a `url` or a
`card` file). It runs wherever an agent can; the runtime half is `agentspec.runtime.remote`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from agentspec.contract.frozen import FrozenMap
from agentspec.contract.secrets import secret_name
from agentspec.contract.urls import endpoint_problem, redacted, url_secrets
from agentspec.diagnostics import codes
from agentspec.diagnostics.model import Risk
from agentspec.ir.tree import LlmFields, LlmNode, ModelNode, RemoteNode, ToolNode
from agentspec.kindapi import Kind, Site
from agentspec.kindapi.rule import Found, Rule
from agentspec.language.agents import TOOL_ERRORS_DEFAULT, RemoteAgent

if TYPE_CHECKING:
    from agentspec.ir.lower import Lowering
    from agentspec.ir.plan import Call, Value
    from agentspec.ir.planning import PlanBuilder
    from agentspec.review.ruletypes import AgentPair
    from agentspec.validate.semantic.context import Context

__all__ = ["KIND"]


def check(ctx: Context, name: str, agent: RemoteAgent) -> None:
    base = ("agents", name)
    if (agent.url is None) == (agent.card is None):
        ctx.report(codes.REMOTE_SOURCE(
            f"remote agent `{name}` needs exactly one of `url` and `card`",
            ctx.key_at(*base, "url") if agent.url is not None else ctx.at(*base),
            hint="give `url: http://HOST:PORT/.well-known/agent-card.json`, or `card: FILE`"))
    if agent.url is not None:
        problem = endpoint_problem(agent.url)
        if problem is not None:
            ctx.report(codes.REMOTE_SOURCE(
                f"`url` of `{name}` is no agent card URL: {problem}", ctx.at(*base, "url"),
                hint="give the card's `http://` or `https://` URL"))
        for what in url_secrets(agent.url):
            ctx.report(codes.API_KEY_LITERAL(
                f"`url` of `{name}` writes {what} in the spec", ctx.at(*base, "url"),
                hint="send credentials in `headers`, as `${env.NAME}`"))
    for header, value in (agent.headers or {}).items():
        if not _TOKEN.fullmatch(header) or any(c in value for c in "\r\n\0"):
            ctx.report(codes.INVALID_VALUE(
                f"header `{header[:80]}` of `{name}` is no HTTP header: a name is a token "
                "(letters, digits, `-`), a value one line", ctx.key_at(*base, "headers", header),
                hint="write the header on one line, such as `X-Api-Key: ${env.API_KEY}`"))
            continue
        if "${env." not in value and (secret_name(header) or header.lower() in _CREDENTIALS):
            ctx.report(codes.API_KEY_LITERAL(
                f"header `{header}` of `{name}` holds a credential written in the spec",
                ctx.at(*base, "headers", header),
                hint="write it as `${env.NAME}` and set NAME in the environment"))


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_CREDENTIALS = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key"})


def lower(lowering: Lowering, name: str, agent: RemoteAgent, site: Site) -> RemoteNode:
    card = None if agent.card is None else lowering.spec_relative(
        agent.card, "agents", name, "card")
    return RemoteNode(**site.common, mode=site.mode, url=agent.url, card=card,
                      headers=FrozenMap(sorted((agent.headers or {}).items())),
                      timeout=agent.timeout)


def plan(builder: PlanBuilder, node: RemoteNode, children: list[Value]) -> Call:
    # deferred: validate imports every kind, and plans nothing
    from agentspec.ir.plan import Call, Import, SpecPath
    from agentspec.ir.values import kwargs, lit

    del children  # a remote agent has none
    card: Value = lit(node.url) if node.url is not None else SpecPath(node.card or "")
    return Call(Import("agentspec.runtime.remote", "remote_agent"), kwargs(
        name=node.name, card=card, description=lit(node.description),
        headers=lit(dict(node.headers)) if node.headers else None, timeout=node.timeout,
        mode=node.mode, **builder.callbacks(node)))


def label(node: RemoteNode) -> list[str]:
    return [node.name, "remote (A2A)", *(["offline (background job)"] if node.offline else []),
            redacted(node.url) if node.url is not None else f"card {node.card}"]


def _target_changed(pair: AgentPair) -> Iterator[Found]:
    was, now = pair.before, pair.after
    if not isinstance(now, RemoteNode):
        return
    if not isinstance(was, RemoteNode):
        yield Found(Risk.HIGH, f"`{pair.name}` now calls the remote agent at "
                    f"{_shown(now.url or now.card)}", None, ("kind",))
        return
    for field in ("url", "card"):
        if getattr(was, field) != getattr(now, field):
            yield Found(Risk.HIGH, f"the remote agent's `{field}` changed from "
                        f"{_shown(getattr(was, field))} to {_shown(getattr(now, field))}",
                        (field,), (field,))
    if was.headers != now.headers:  # values may be `${env.X}`: names only are shown
        names = sorted(set(was.headers) ^ set(now.headers)
                       | {k for k, v in now.headers.items() if was.headers.get(k) != v})
        yield Found(Risk.HIGH, "the headers sent to the remote agent changed: "
                    + ", ".join(f"`{n}`" for n in names), ("headers",), ("headers",))


def _shown(value: str | None) -> str:
    return "none" if value is None else redacted(value)


def _timeout_changed(pair: AgentPair) -> Iterator[Found]:
    was, now = pair.before, pair.after
    if isinstance(was, RemoteNode) and isinstance(now, RemoteNode) and \
            was.timeout != now.timeout:
        yield Found(Risk.LOW, f"the remote agent's timeout changed from {was.timeout:g} s to "
                    f"{now.timeout:g} s", ("timeout",), ("timeout",))


def _models(node: RemoteNode) -> tuple[ModelNode | None, ...]:
    return ()  # its models are the remote service's


def _tools(node: RemoteNode) -> tuple[ToolNode, ...]:
    return ()


def _as_llm(node: RemoteNode) -> LlmFields:
    return LlmNode(name=node.name, file=node.file, line=node.line,
                   tool_errors=TOOL_ERRORS_DEFAULT)


def _example(name: str, model: str, children: tuple[str, ...]) -> dict[str, Any]:
    """The smallest remote agent: a card file beside the spec (its server answers)."""
    del model, children
    return {"kind": name, "card": "agent_card.json"}


KIND: Kind[RemoteAgent, RemoteNode] = Kind(
    names=("remote",), spec=(RemoteAgent,), node=RemoteNode, name_of=lambda node: "remote",
    check=check, lower=lower, plan=plan, models=_models, tools=_tools, as_llm=_as_llm,
    label=label, edge=lambda node: "sub-agent", example=_example,
    answers=lambda name, text: {}, references=Kind.none, python_refs=Kind.nothing,
    instructions=Kind.nothing, plan_state=None, tools_at=("tools",), model_agents=Kind.nothing,
    runs_agents=Kind.none, marks=Kind.nothing,
    codes=(codes.REMOTE_SOURCE, codes.REMOTE_UNREACHABLE, codes.REMOTE_TARGET_CHANGED,
           codes.REMOTE_TIMEOUT_CHANGED),
    rules=(Rule(codes.REMOTE_TARGET_CHANGED,
                ("RemoteNode.url", "RemoteNode.card", "RemoteNode.headers"), _target_changed),
           Rule(codes.REMOTE_TIMEOUT_CHANGED, ("RemoteNode.timeout",), _timeout_changed)))
