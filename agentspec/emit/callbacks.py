"""`build` checks each callback the spec names against the call ADK makes: a function that
cannot take ADK's arguments would fail only when the callback first runs, as a TypeError
raised inside ADK, naming neither the callback nor the agent (AS415)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

from agentspec.diagnostics import Diagnostic, codes
from agentspec.ir.plan import Import
from agentspec.ir.tree import AgentNode, AppNode, agents_called
from agentspec.source import Span

__all__ = ["ADK_CALLS", "callback_problems"]

#: hook -> the keyword arguments ADK 2.13 calls it with (or, when those do not bind, the
#: same values by position in this order: `google.adk.utils._callback_pipeline`)
ADK_CALLS: dict[str, tuple[str, ...]] = {
    "before_agent": ("callback_context",),
    "after_agent": ("callback_context",),
    "before_model": ("callback_context", "llm_request"),
    "after_model": ("callback_context", "llm_response"),
    "on_model_error": ("callback_context", "llm_request", "error"),
    "before_tool": ("tool", "args", "tool_context"),
    "after_tool": ("tool", "args", "tool_context", "tool_response"),
    "on_tool_error": ("tool", "args", "tool_context", "error"),
}


def callback_problems(app: AppNode, document: Any) -> list[Diagnostic]:
    """AS415 for each callback (already importable: `build` built the App) that ADK's call
    cannot bind to; `document` gives the spec line that names it."""
    from agentspec.emit.objects import resolve_import

    problems = []
    for agent in _agents(app.root):
        for hook, refs in agent.callbacks.items():
            for index, ref in enumerate(refs):
                if ref.args is not None or hook not in ADK_CALLS:
                    continue  # a factory's product: its signature is known only once called
                function = resolve_import(Import(ref.module, ref.attr))
                wrong = _mismatch(function, ADK_CALLS[hook])
                if wrong is not None:
                    problems.append(codes.CALLBACK_SIGNATURE(
                        f"callback `{ref.ref}` ({_where(function)}) of agent `{agent.name}` "
                        f"cannot take ADK's `{hook}` call "
                        f"({', '.join(ADK_CALLS[hook])}): {wrong}",
                        _span(document, agent, hook, index),
                        hint=f"define it as `def {ref.attr.rsplit('.', 1)[-1]}("
                             f"{', '.join(ADK_CALLS[hook])})` (it may be async)"))
    return problems


def _agents(root: AgentNode) -> Iterator[AgentNode]:
    seen: set[int] = set()
    todo = [root]
    while todo:
        node = todo.pop()
        if id(node) not in seen:
            seen.add(id(node))
            yield node
            todo += agents_called(node)


def _mismatch(function: Any, names: tuple[str, ...]) -> str | None:
    """Why ADK's call cannot bind to `function` (by keyword, then by position); None if it
    can, or if its signature cannot be read."""
    if not callable(function):
        return f"it is a {type(function).__name__}, not a function"
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    try:
        signature.bind(**dict.fromkeys(names))
        return None
    except TypeError as by_name:
        try:
            signature.bind(*names)
            return None
        except TypeError:
            return f"its signature is `{signature}` ({by_name})"


def _where(function: Any) -> str:
    try:
        code = inspect.unwrap(function).__code__
    except AttributeError:
        return "not a python function"
    from agentspec.runtime.blame import relative_path

    return f"{relative_path(code.co_filename)}:{code.co_firstlineno}"


def _span(document: Any, agent: AgentNode, hook: str, index: int) -> Span:
    try:
        return document.pos.value_span(("agents", agent.name, "callbacks", hook, index))  # type: ignore[no-any-return]
    except (KeyError, IndexError, TypeError, AttributeError):
        return Span.at(agent.file, agent.line, 1)
