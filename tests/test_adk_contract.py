"""The private parts of google-adk agentspec relies on (`agentspec/runtime/adk.py`) still
exist with the shape it uses, and nothing else in agentspec reaches for a private ADK name.

When this fails after an ADK upgrade, the name in the failure is what changed: see
"Upgrading ADK" in CONTRIBUTING.md."""

from __future__ import annotations

import ast
import asyncio
import inspect
import logging
import warnings
from pathlib import Path

import pytest

from agentspec.runtime import adk

PACKAGE = Path(adk.__file__).resolve().parents[1]
#: private attributes of ADK objects that only `runtime/adk.py` may touch
PRIVATE_ATTRIBUTES = {"_event_queue", "_enqueue_event", "_interrupt_ids", "_additional_args",
                      "_llm"}


def _parameters(function: object) -> list[str]:
    return [name for name in inspect.signature(function).parameters if name != "self"]


def _context() -> object:
    from google.adk.agents import LlmAgent
    from google.adk.agents.invocation_context import InvocationContext
    from google.adk.sessions import InMemorySessionService, Session

    return InvocationContext(session_service=InMemorySessionService(), invocation_id="i",
                             agent=LlmAgent(name="a"),
                             session=Session(id="s", app_name="app", user_id="u"))


def test_the_compaction_functions_take_what_summarization_passes() -> None:
    assert _parameters(adk.events_to_compact) == ["events", "event_retention_size"]
    assert _parameters(adk.is_range_worth_compacting) == ["events", "events_to_compact"]
    assert _parameters(adk.ensure_summarizer) == ["config", "agent"]
    assert _parameters(adk.summarize_events) == [
        "session", "config", "events", "events_to_compact", "trigger"]
    assert inspect.iscoroutinefunction(adk.summarize_events)
    assert _parameters(adk.apply_rewinds) == ["events"]
    assert _parameters(adk.require_agent) == ["invocation_context"]


def test_flows_take_the_compaction_processor_from_the_module_on_every_run() -> None:
    from google.adk.flows.llm_flows import single_flow

    class Marker(adk.CompactionRequestProcessor):
        pass

    before = adk.compaction_request_processor()
    try:
        adk.install_compaction_request_processor(Marker())
        assert any(isinstance(p, Marker) for p in single_flow._create_request_processors())
    finally:
        adk.install_compaction_request_processor(before)


def test_a_context_copy_takes_its_own_event_queue_and_enqueues_on_it() -> None:
    ctx = _context()
    own = ctx.model_copy()  # type: ignore[attr-defined]
    queue: asyncio.Queue[tuple[object, asyncio.Event | None]] = asyncio.Queue()
    adk.set_event_queue(own, queue)

    async def put() -> None:
        from google.adk.events.event import Event

        task = asyncio.create_task(adk.enqueue_event(own, Event(author="a")))
        event, processed = await queue.get()
        assert event.author == "a"
        if processed is not None:
            processed.set()
        await task

    asyncio.run(put())


def test_interrupt_ids_recorded_on_a_node_context_are_the_contexts() -> None:
    from google.adk.agents.context import Context

    context = Context(_context())
    adk.add_interrupt_ids(context, ["call-1"])
    assert "call-1" in context.interrupt_ids


def test_litellm_takes_call_arguments_outside_its_fields() -> None:
    pytest.importorskip("litellm")
    from google.adk.models.lite_llm import LiteLlm

    llm = LiteLlm(model="openai/gpt-test")
    adk.set_litellm_call_arg(llm, "api_key", "sk-contract-test")
    assert llm._additional_args["api_key"] == "sk-contract-test"
    assert "sk-contract-test" not in repr(llm)


def test_the_event_summarizer_calls_the_model_it_holds() -> None:
    from google.adk.apps.llm_event_summarizer import LlmEventSummarizer

    assert "self._llm" in inspect.getsource(LlmEventSummarizer)
    summarizer = LlmEventSummarizer(llm=object())  # type: ignore[arg-type]
    marker = object()
    adk.set_summarizer_model(summarizer, marker)
    assert summarizer._llm is marker


def test_the_node_failure_loggers_are_adks() -> None:
    import google.adk.runners
    import google.adk.workflow._node_runner as node_runner

    assert set(adk.NODE_FAILURE_LOGGERS) == {node_runner.logger.name,
                                             google.adk.runners.logger.name}
    assert all(isinstance(logging.getLogger(n), logging.Logger)
               for n in adk.NODE_FAILURE_LOGGERS)


def test_the_override_points_keep_their_signatures() -> None:
    from google.adk.agents.base_agent import BaseAgent
    from google.adk.tools.function_tool import FunctionTool
    from google.adk.workflow._base_node import BaseNode

    assert _parameters(BaseNode._run_impl) == ["ctx", "node_input"]
    assert _parameters(BaseAgent._run_async_impl) == ["ctx"]
    assert _parameters(BaseAgent._load_agent_state) == ["ctx", "state_type"]
    assert _parameters(FunctionTool._get_declaration) == []
    assert _parameters(adk.SingleTurnAgentTool.run_async) == ["args", "tool_context"]


def test_the_version_check_warns_only_for_untested_releases() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert adk.check_version(adk.TESTED_VERSIONS[0]) is None
    with pytest.warns(adk.UntestedAdkWarning, match="2.99.0"):
        assert adk.check_version("2.99.0")


def test_ci_installs_the_tested_release() -> None:
    constraints = (PACKAGE.parent / ".ci" / "constraints.txt").read_text()
    assert f"google-adk=={adk.TESTED_VERSIONS[0]}" in constraints.split()


def _private_uses(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("google.adk"):
            module = node.module or ""
            if any(part.startswith("_") for part in module.split(".")) or any(
                    alias.name.startswith("_") for alias in node.names):
                found.append(f"{path.name}:{node.lineno}: from {module} import ...")
        elif isinstance(node, ast.Attribute) and node.attr in PRIVATE_ATTRIBUTES:
            found.append(f"{path.name}:{node.lineno}: .{node.attr}")
    return found


def test_only_the_contract_module_touches_private_adk_names() -> None:
    offenders = [use for path in sorted(PACKAGE.rglob("*.py"))
                 if path.name != "adk.py" or path.parent.name != "runtime"
                 for use in _private_uses(path)]
    assert offenders == []


def test_the_parallel_helpers_take_what_the_parallel_workflow_passes() -> None:
    assert _parameters(adk.branch_context)[:3] == ["agent", "sub_agent", "invocation_context"]
    assert len(_parameters(adk.merge_runs)) == 2
    assert len(_parameters(adk.asks_to_exit)) == 2
