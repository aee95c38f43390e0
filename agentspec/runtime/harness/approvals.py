"""The `interrupt_on` harness field: a person approves, edits or rejects a tool call first.

Built on ADK's tool confirmation. A `before_tool_callback` gate asks for confirmation
(`adk_request_confirmation`) and answers the call with "waiting" instead of running it; the
invocation pauses there. The person's answer comes back as a `ToolConfirmation`; ADK then
re-runs the original call and the gate lets it through, changes its arguments, or turns it
away. Because the gate is a callback, it holds for every kind of tool: python functions,
toolsets, MCP servers, the harness's own tools and agents called as tools.

The answer, as a `ToolConfirmation` (what `adk web` and `agentspec run` send):

* `confirmed: false` rejects; `payload: {"message": "..."}` tells the model why.
* `confirmed: true` approves; with `payload: {"args": {...}}` it is an edit: the call runs
  with those arguments instead.

A decision the spec does not offer for that tool (an edit where only approve/reject are
allowed, say) is refused: the call does not run and the model is told why.

The person sees the whole call (`call_text`: nothing cut, hidden characters shown) in the
confirmation's hint; a call too long to review is not put to anyone and does not run. Only
the gate's own requests are approval requests: a model that calls `adk_request_confirmation`
itself gets ADK's "no such tool" answer and nobody is asked. Two calls of one model response
with the same id are refused (neither runs): an answer names its call by id.
"""

from __future__ import annotations

import copy
import json
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.auth.auth_tool import AuthConfig
from google.adk.events.event import Event
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from agentspec.contract.harness_names import DECISIONS
from agentspec.runtime.harness.call_text import MAX_REVIEW_CHARS, call_text
from agentspec.runtime.harness.callbacks import AfterTool, BeforeTool
from agentspec.runtime.telemetry import set_attributes

__all__ = ["CONFIRMATION_CALL", "DECISIONS", "Approval", "Decision", "PendingApproval", "answer",
           "approval_gate", "confirmation", "edit_note", "gated", "is_approval_request",
           "pending_approvals", "setting_of"]

#: the settings a tool carries when its spec entry (not its name) asks for approval
_ATTRIBUTE = "_agentspec_approval"

#: the arguments a person gave, per call the gate let through edited (read by `edit_note`)
_EDITED: weakref.WeakKeyDictionary[ToolContext, dict[str, Any]] = weakref.WeakKeyDictionary()

Approval = Mapping[str, Any]  # {"decisions": [...], "hint": str | None}


def _tagged(tool: BaseTool, approval: Approval) -> BaseTool:
    tagged = copy.copy(tool)  # the same tool object may serve an agent without approvals
    setattr(tagged, _ATTRIBUTE, dict(approval))
    return tagged


class GatedToolset(BaseToolset):
    """Every tool of `inner` asks for approval (`interrupt_on` on a spec tool entry)."""

    def __init__(self, inner: BaseToolset, approval: Approval) -> None:
        super().__init__()
        self.inner = inner
        self.approval = dict(approval)

    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        tools = await self.inner.get_tools_with_prefix(readonly_context)
        return [_tagged(tool, self.approval) for tool in tools]

    def get_auth_config(self) -> AuthConfig | None:
        """The inner toolset's: ADK resolves a toolset's credential (an MCP server's header,
        an OAuth sign-in) by asking the toolset on the agent, which is this one."""
        return self.inner.get_auth_config()

    async def close(self) -> None:
        await self.inner.close()


def gated(entry: Any, approval: Approval) -> Any:
    """The tools of one spec entry (function, tool or toolset), asking for approval."""
    if isinstance(entry, BaseToolset):
        return GatedToolset(entry, approval)
    if isinstance(entry, BaseTool):
        return _tagged(entry, approval)
    if callable(entry):
        return _tagged(FunctionTool(entry), approval)
    return entry  # not a tool: LlmAgent reports it as it would without approvals


def setting_of(tool: BaseTool, by_name: Mapping[str, Approval]) -> Approval | None:
    return getattr(tool, _ATTRIBUTE, None) or by_name.get(tool.name)


def _edited_args(payload: Any) -> Any:
    return payload.get("args") if isinstance(payload, Mapping) else None


def _pending(tool: BaseTool) -> dict[str, Any]:
    return {"error": f"This call to {tool.name} is waiting for a person's approval and has "
                     "not run. Do not call it again; the person's decision will arrive."}


def _refused(tool: BaseTool, decision: str, offered: list[str]) -> dict[str, Any]:
    return {"error": f"The person's answer ({decision}) is not one this call allows "
                     f"({', '.join(offered)}), so {tool.name} did not run."}


def _rejected(tool: BaseTool, payload: Any) -> dict[str, Any]:
    message = payload.get("message") if isinstance(payload, Mapping) else None
    text = f"A person rejected this call to {tool.name}; it did not run."
    if message:
        text += f" Their message: {message}"
    return {"error": text}


def _shared_id(tool_context: ToolContext) -> str | None:
    """The call's id when another call of the same model response has it too."""
    call_id = tool_context.function_call_id
    for event in reversed(tool_context.session.events):
        ids = [call.id for call in event.get_function_calls()]
        if call_id in ids:
            return call_id if ids.count(call_id) > 1 else None
    return None


def _ask(tool: BaseTool, args: dict[str, Any], approval: Approval,
         tool_context: ToolContext) -> dict[str, Any]:
    shown = call_text(tool.name, args)
    if len(shown) > MAX_REVIEW_CHARS:
        return {"error": f"This call to {tool.name} is too long for a person to review "
                         f"({len(shown):,} characters; the limit is {MAX_REVIEW_CHARS:,}), "
                         "so nobody was asked and it did not run. Split the work into "
                         "smaller calls."}
    decisions = list(approval["decisions"])
    question = approval.get("hint") or f"Approve the call to {tool.name}?"
    # the hint is what `adk web` shows: the question and the whole call
    tool_context.request_confirmation(hint=f"{question}\n\n{shown}", payload={
        "decisions": decisions, "question": question})
    # the pause is not a result for the model to answer; without this it is re-invoked at once
    tool_context.actions.skip_summarization = True
    return _pending(tool)


def approval_gate(by_name: Mapping[str, Approval]) -> BeforeTool:
    """A `before_tool_callback`: calls to the tools named in `by_name` (or tagged by `gated`)
    run only after a person approves them, with the arguments the person gives on `edit`."""

    async def before_tool_callback(tool: BaseTool, args: dict[str, Any],
                                   tool_context: ToolContext) -> dict[str, Any] | None:
        shared = _shared_id(tool_context)
        if shared is not None:
            return {"error": f"More than one call in your response has the id {shared!r}, "
                             "so none of them ran: an approval must name exactly one call. "
                             "Make the calls again, each with an id of its own."}
        approval = setting_of(tool, by_name)
        # a plain BaseTool stands in for a tool the model made up: nothing would run anyway
        if approval is None or type(tool) is BaseTool:
            return None
        answer = tool_context.tool_confirmation
        if answer is None:
            return _ask(tool, args, approval, tool_context)
        offered = list(approval["decisions"])
        payload = answer.payload
        set_attributes(**{"agentspec.approval.decision": "reject" if not answer.confirmed
                          else "approve" if _edited_args(payload) is None else "edit"})
        if not answer.confirmed:
            return _rejected(tool, payload) if "reject" in offered \
                else _refused(tool, "reject", offered)
        edited = _edited_args(payload)
        if edited is None:
            return None if "approve" in offered else _refused(tool, "approve", offered)
        if "edit" not in offered:
            return _refused(tool, "edit", offered)
        if not isinstance(edited, Mapping):
            return {"error": f"The person's edited arguments for {tool.name} are not an object "
                             f"({json.dumps(edited, default=str)}), so it did not run."}
        args.clear()
        args.update(edited)  # ADK hands this same dict to the tool
        _EDITED[tool_context] = dict(edited)
        return None

    return before_tool_callback


def edit_note() -> AfterTool:
    """An `after_tool_callback`: a result of a call a person edited says so, with the
    arguments it really ran with; the model's own call still shows its original ones."""

    async def after_tool_callback(tool: BaseTool, args: dict[str, Any],
                                  tool_context: ToolContext,
                                  tool_response: Any) -> dict[str, Any] | None:
        edited = _EDITED.pop(tool_context, None)
        if edited is None:
            return None
        return {"result": tool_response, "note": (
            f"A person edited this call before it ran; {tool.name} ran with these arguments: "
            f"{json.dumps(edited, ensure_ascii=False, default=str)}")}

    return after_tool_callback


# the other side: reading approval requests from events and answering them ------------------

CONFIRMATION_CALL = "adk_request_confirmation"


@dataclass(frozen=True)
class PendingApproval:
    """A tool call waiting for a person, as an event of a paused run shows it."""

    request_id: str  # the id of the `adk_request_confirmation` call to answer
    invocation_id: str
    agent: str
    tool: str
    args: dict[str, Any]  # what runs when it is approved
    hint: str  # the question (the spec's `hint`); `call_text` shows the call itself
    decisions: tuple[str, ...]
    call_id: str = ""  # the id of the paused call itself


@dataclass(frozen=True)
class Decision:
    """A person's answer: `approve`, `edit` (with `args`) or `reject` (with a `message`)."""

    kind: str
    args: dict[str, Any] | None = None
    message: str | None = None


def is_approval_request(event: Event, call: types.FunctionCall) -> bool:
    """Whether `call` of `event` is a confirmation ADK asks for (a long-running call it
    made itself), not a model's call that merely has the name."""
    return call.name == CONFIRMATION_CALL and bool(call.id) and \
        call.id in (event.long_running_tool_ids or ())


def pending_approvals(event: Event) -> list[PendingApproval]:
    """The approval requests an event carries."""
    found = []
    for call in event.get_function_calls():
        if not is_approval_request(event, call):
            continue
        request = call.args or {}
        original = request.get("originalFunctionCall") or {}
        confirmation = request.get("toolConfirmation") or {}
        payload = confirmation.get("payload") or {}
        if not isinstance(original, dict) or not original.get("id"):
            continue
        found.append(PendingApproval(
            request_id=call.id or "", invocation_id=event.invocation_id, agent=event.author,
            tool=str(original.get("name", "")), args=dict(original.get("args") or {}),
            hint=str(payload.get("question") or confirmation.get("hint") or ""),
            decisions=tuple(payload.get("decisions") or DECISIONS),
            call_id=str(original.get("id") or "")))
    return found


def confirmation(decision: Decision) -> dict[str, Any]:
    """`decision` as the `ToolConfirmation` fields the gate reads."""
    if decision.kind not in DECISIONS:
        raise ValueError(f"a decision is one of {', '.join(DECISIONS)}, not {decision.kind!r}")
    confirmed: dict[str, Any] = {"confirmed": decision.kind != "reject"}
    if decision.kind == "edit":
        confirmed["payload"] = {"args": dict(decision.args or {})}
    elif decision.kind == "reject" and decision.message:
        confirmed["payload"] = {"message": decision.message}
    return confirmed


def answer(pending: PendingApproval, decision: Decision) -> types.Part:
    """The function response that gives `decision` to the paused call."""
    return types.Part(function_response=types.FunctionResponse(
        id=pending.request_id, name=CONFIRMATION_CALL, response=confirmation(decision)))
