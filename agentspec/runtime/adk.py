"""Every private name of google-adk that agentspec relies on, in one place.

ADK 2.13 offers no public way to do what each entry below does; each says what it is for
and why no public API serves. Nothing else in agentspec imports a private ADK name or
touches a private attribute of an ADK object: it goes through this module, and
`tests/test_adk_contract.py` checks that every name still exists with the shape used here,
so an ADK upgrade fails one test with a name, not a run somewhere inside a conversation.

Override points that ADK documents for subclasses (`BaseNode._run_impl`,
`BaseAgent._run_async_impl`, `BaseAgent._load_agent_state`, `FunctionTool._get_declaration`)
are used by subclassing where they are needed; the contract test pins their signatures too.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterable
from importlib import metadata
from typing import Any

from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.parallel_agent import (
    _asks_this_agent_to_exit,
    _create_branch_ctx_for_sub_agent,
    _merge_agent_run,
)
from google.adk.apps import compaction as _compaction_api
from google.adk.events._rewind_events import _apply_rewinds
from google.adk.events.event import Event
from google.adk.flows.llm_flows.context import _compaction as _compaction_flow
from google.adk.flows.llm_flows.context._compaction import CompactionRequestProcessor
from google.adk.flows.llm_flows.core._utils import require_agent
from google.adk.tools.agent_tool import _SingleTurnAgentTool
from google.adk.workflow._errors import DynamicNodeFailError, NodeInterruptedError

__all__ = [
    "NODE_FAILURE_LOGGERS", "TESTED_VERSIONS", "CompactionRequestProcessor",
    "DynamicNodeFailError", "NodeInterruptedError", "SingleTurnAgentTool", "UntestedAdkWarning",
    "add_interrupt_ids", "apply_rewinds", "asks_to_exit", "branch_context",
    "check_version", "compaction_request_processor", "enqueue_event", "ensure_summarizer",
    "events_to_compact", "install_compaction_request_processor", "is_range_worth_compacting",
    "merge_runs", "require_agent", "set_event_queue", "set_litellm_call_arg",
    "set_summarizer_model", "summarize_events",
]

#: the google-adk releases the suite ran against (CI installs the first, `.ci/constraints.txt`)
TESTED_VERSIONS: tuple[str, ...] = ("2.13.0",)


class UntestedAdkWarning(UserWarning):
    """The installed google-adk is not a release agentspec was tested with."""


def check_version(installed: str | None = None) -> str | None:
    """Warn once when the installed google-adk is not a tested release; returns the warning
    text (None when the release is tested or its version cannot be read)."""
    if installed is None:
        try:
            installed = metadata.version("google-adk")
        except metadata.PackageNotFoundError:
            return None
    if installed in TESTED_VERSIONS:
        return None
    text = (f"google-adk {installed} is installed; agentspec was tested with google-adk "
            f"{', '.join(TESTED_VERSIONS)}. It relies on parts of ADK that may change between "
            f"releases: install a tested one (pip install 'google-adk=={TESTED_VERSIONS[0]}') "
            "or check `tests/test_adk_contract.py` passes with this one")
    warnings.warn(text, UntestedAdkWarning, stacklevel=2)
    return text


# --- node runs ------------------------------------------------------------------------
# A node's failure and interruption are raised as these; ADK exports neither (2.13).

#: ADK's loggers that log the traceback of a node (or root) that failed; agentspec reports
#: those failures itself and filters the duplicate (the names are ADK's module paths)
NODE_FAILURE_LOGGERS = ("google_adk.google.adk.workflow._node_runner",
                        "google_adk.google.adk.runners")


def set_event_queue(ctx: InvocationContext,
                    queue: asyncio.Queue[tuple[Any, asyncio.Event | None]]) -> None:
    """Give an invocation context copy its own event queue, so that a node run through it
    (`Context(ctx).run_node`) hands its events to the caller instead of the runner. The
    Runner sets this private attribute itself; there is no public setter."""
    ctx._event_queue = queue


async def enqueue_event(ctx: InvocationContext, event: Event) -> None:
    """Put a child's event on the invocation's queue as a nested node's would go (the only
    way a node that drives its own children can pass their events through unchanged)."""
    await ctx._enqueue_event(event)


def add_interrupt_ids(ctx: Any, ids: Iterable[str]) -> None:
    """Record long-running (approval) calls in a node context, as ADK does for events its
    node runner passes on itself; `Context.interrupt_ids` is a read-only copy."""
    ctx._interrupt_ids.update(ids)


#: ADK's single-turn agent tool (an agent run through `ctx.run_node` as a tool call), which
#: `LlmAgent(mode="chat")` makes for its single-turn children; the planner's workers need the
#: same without that mode
SingleTurnAgentTool = _SingleTurnAgentTool


# --- parallel workflows ----------------------------------------------------------------
# agentspec's ParallelAgent runs each child through `node_events` (so approvals inside a
# branch pause the whole run) and otherwise behaves as ADK's: the same branch contexts, the
# same interleaving of the children's events, the same exit on escalation. ADK keeps these
# three helpers of its ParallelAgent private (agents/parallel_agent.py).

branch_context = _create_branch_ctx_for_sub_agent
merge_runs = _merge_agent_run
asks_to_exit = _asks_this_agent_to_exit


# --- compaction (summarization) ---------------------------------------------------------
# agentspec's summarization decides *when* (its own token count, per agent and scope) and
# reuses ADK's *how*: which events to drop, whether that is worth it, the summarizer and
# the traced summary call. ADK keeps all four private (apps/compaction.py), and the base
# class of its compaction request processor too (`summarization.SummaryCheck` extends it).

apply_rewinds = _apply_rewinds
events_to_compact = _compaction_api._events_to_compact_for_token_threshold
is_range_worth_compacting = _compaction_api._is_range_worth_compacting
ensure_summarizer = _compaction_api._ensure_compaction_summarizer
summarize_events = _compaction_api._summarize_events_with_trace


def compaction_request_processor() -> Any:
    """The request processor every new flow takes from ADK's compaction module."""
    return _compaction_flow.request_processor


def install_compaction_request_processor(processor: Any) -> None:
    """Replace the processor ADK's flows read from the module on every run
    (`single_flow._create_request_processors`): the token-threshold check runs before each
    model call, where ADK's plugin hooks cannot skip its own check."""
    _compaction_flow.request_processor = processor


def set_summarizer_model(summarizer: Any, model: Any) -> None:
    """Swap the model of an `LlmEventSummarizer` (scenario tests script the summarizer the
    app already made; the summarizer takes its model only in its constructor)."""
    summarizer._llm = model


# --- LiteLLM ------------------------------------------------------------------------------


def set_litellm_call_arg(llm: Any, name: str, value: Any) -> None:
    """Pass `name=value` to every LiteLLM call of `llm` without making it a field of the
    model object: `LiteLlm(api_key=...)` would also store the key among the object's fields,
    where any repr of the app or a traceback prints it."""
    llm._additional_args[name] = value


check_version()
