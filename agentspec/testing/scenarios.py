"""Scenario tests: scripted conversations with expectations, run offline (`agentspec test`).

A scenario file holds one scenario at its top level, or several under `scenarios:`:

    scenarios:
      - name: a refund goes to billing
        state: {tier: gold}                  # the session's state before the first message
        messages: [I was charged twice]      # the user's turns
        replies: {agent: [...]}              # each agent's model replies (as `run --script`)
        decisions: [approve]                 # answers to approvals, in order
        stubs: {lookup_invoice: {status: paid}}   # tools answered without running them
        env: {GITHUB_TOKEN: fake}            # environment variables (also file-wide)
        expect:
          tools:                             # called, with at least these arguments
            - {name: lookup_invoice, args: {invoice_id: INV-1}}
          not_tools: [request_refund]        # never called
          agents: [triage_classifier, billing]   # agents that answered or called tools
          state: {ticket: open}              # state entries after the run
          final: {contains: refund}          # the last answer: `contains`, `matches` (regex)
          jobs: [{agent: scorer, status: QUEUED}]  # background jobs queued
          errors:                            # errors the run may go through, each of which
            - {agent: billing, contains: unavailable}   # must happen: an agent that raised,
            - {tool: lookup_invoice, contains: not found}  # a tool's error result

The language of these files is `agentspec.testing.models` (schemas/scenario.schema.json);
`agentspec.testing.check` checks a file against it before anything runs.

A scenario fails on any other error (`runtime.failures`), anywhere in the run: in agents
called as tools, `task` delegations, planner nodes, a router's failed choices.

Everything runs offline: MCP servers are not started (their filtered tools are declared and
answered by `stubs`), and models whose provider package is missing are built as placeholders
that the script replaces.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from google.adk.events.event import Event
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from agentspec.runtime.agents import walk
from agentspec.runtime.failures import Failure, failures_in
from agentspec.runtime.summarization import FAILED_KEY
from agentspec.testing import patterns

__all__ = ["OfflineApiToolset", "OfflineToolset", "Outcome", "Scenario", "StubTools", "check",
           "offline_mcp", "parse_scenarios"]

@dataclass
class Scenario:
    name: str
    messages: list[str]
    replies: dict[str, list[Any]]
    decisions: list[Any] | None = None
    state: dict[str, Any] = field(default_factory=dict)
    stubs: dict[str, Any] = field(default_factory=dict)
    expect: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)


def _env(value: Any) -> dict[str, str]:
    return {str(k): str(v).lower() if isinstance(v, bool) else str(v)
            for k, v in (value or {}).items()}


def _scenario(value: Mapping[str, Any], default_name: str) -> Scenario:
    return Scenario(name=str(value.get("name") or default_name),
                    messages=list(value["messages"]), replies=dict(value.get("replies") or {}),
                    decisions=value.get("decisions"), state=dict(value.get("state") or {}),
                    stubs=dict(value.get("stubs") or {}), expect=dict(value.get("expect") or {}),
                    env=_env(value.get("env")))


def parse_scenarios(value: Any, default_name: str) -> list[Scenario]:
    """The scenarios of a scenario file's data, which `agentspec.testing.check` found valid;
    a file-level `env` applies to each of them."""
    if "scenarios" in value:
        shared = _env(value.get("env"))
        found = [_scenario(item, f"{default_name}[{i}]")
                 for i, item in enumerate(value["scenarios"], 1)]
        for scenario in found:
            scenario.env = {**shared, **scenario.env}
        return found
    return [_scenario(value, default_name)]


class OfflineToolset(BaseToolset):
    """Stands in for an MCP server in a scenario: its filtered tools are declared, and a
    call that no `stubs` entry answers says the server is not started in tests."""

    def __init__(self, names: list[str]) -> None:
        super().__init__()
        self.names = names

    async def get_tools(self, readonly_context: Any = None) -> list[BaseTool]:
        return [_OfflineTool(name) for name in self.names]


class _OfflineTool(BaseTool):
    def __init__(self, name: str) -> None:
        super().__init__(name=name, description=f"{name} (an MCP tool; offline in tests)")

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(name=self.name, description=self.description,
                                         parameters_json_schema={"type": "object"})

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        return {"error": f"{self.name} belongs to an MCP server, which scenario tests do not "
                         "start; give it a result under `stubs`."}


class OfflineApiToolset(BaseToolset):
    """Stands in for an OpenAPI toolset in a scenario: its operations are declared as the
    document gives them, and a call that no `stubs` entry answers says no API is called."""

    def __init__(self, inner: BaseToolset) -> None:
        super().__init__()
        self.inner = inner

    async def get_tools(self, readonly_context: Any = None) -> list[BaseTool]:
        return [_OfflineOperation(tool) for tool in
                await self.inner.get_tools_with_prefix(readonly_context)]


class _OfflineOperation(BaseTool):
    def __init__(self, tool: BaseTool) -> None:
        super().__init__(name=tool.name, description=tool.description)
        self.operation = tool

    def _get_declaration(self) -> types.FunctionDeclaration | None:
        return self.operation._get_declaration()

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        return {"error": f"{self.name} calls a REST API, which scenario tests do not call; "
                         "give it a result under `stubs`."}


def offline_mcp(root: Any) -> int:
    """Replaces every MCP toolset under `root` with an OfflineToolset, and every OpenAPI
    toolset with an OfflineApiToolset (a scripted run calls no server); how many."""
    # never imported: no such toolset was built (and `mcp` may be missing)
    mcp = sys.modules.get("google.adk.tools.mcp_tool.mcp_toolset")
    apis = sys.modules.get("google.adk.tools.openapi_tool.openapi_spec_parser.openapi_toolset")
    McpToolset = mcp.McpToolset if mcp is not None else ()  # noqa: N806 - ADK's names
    OpenAPIToolset = apis.OpenAPIToolset if apis is not None else ()  # noqa: N806
    servers = tuple(c for c in (McpToolset, OpenAPIToolset) if c != ())
    if not servers:
        return 0

    replaced = 0
    for agent in walk(root):
        found = getattr(agent, "tools", None)
        tools: list[Any] = found if isinstance(found, list) else []
        for index, tool in enumerate(tools):
            holder, server = None, tool  # inside an approval's gate, a server's stand-ins
            while not isinstance(server, servers) and hasattr(server, "inner"):
                holder, server = server, server.inner
            if isinstance(server, OpenAPIToolset):
                if holder is not None:
                    holder.inner = OfflineApiToolset(server)
                else:
                    tools[index] = OfflineApiToolset(server)
                replaced += 1
            elif isinstance(server, McpToolset):
                wanted = server.tool_filter if isinstance(server.tool_filter, list) else []
                prefix = f"{server.tool_name_prefix}_" if server.tool_name_prefix else ""
                offline = OfflineToolset([prefix + name for name in wanted])
                if holder is not None:
                    holder.inner = offline
                else:
                    tools[index] = offline
                replaced += 1
    return replaced


class StubTools(BasePlugin):
    """Answers calls to the stubbed tools with their stub, without running them."""

    def __init__(self, stubs: Mapping[str, Any]) -> None:
        super().__init__(name="agentspec_stub_tools")
        self.stubs = dict(stubs)

    async def before_tool_callback(self, *, tool: BaseTool, tool_args: dict[str, Any],
                                   tool_context: ToolContext) -> dict[str, Any] | None:
        if tool.name not in self.stubs:
            return None
        stub = self.stubs[tool.name]
        return stub if isinstance(stub, dict) else {"result": stub}


@dataclass
class Outcome:
    """What a scenario's run did."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    final: str | None = None
    state: dict[str, Any] = field(default_factory=dict)
    jobs: list[dict[str, Any]] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    settled: set[str] = field(default_factory=set)  # calls a person rejected: no failure

    seen: set[str] = field(default_factory=set)  # the ids of the events the turns yielded

    def record(self, event: Event) -> None:
        self.seen.add(event.id)
        self.failures += failures_in(event, self.settled)
        parts = (event.content.parts if event.content else None) or []
        for part in parts:
            if part.function_call and part.function_call.name != "adk_request_confirmation":
                self.calls.append((part.function_call.name or "",
                                   dict(part.function_call.args or {})))
        acted = parts or (event.custom_metadata or {}).keys() & {"agentspec_route",
                                                                 "agentspec_plan"}
        if acted and event.author != "user" and event.author not in self.agents:
            self.agents.append(event.author)  # routers and planners act without content
        text = "".join(p.text or "" for p in parts if p.text and not p.thought)
        if text and not event.partial:
            self.final = text


    def after_turns(self, events: list[Event]) -> None:
        """The failures recorded in the session after a turn had ended (a summary ADK tried
        after the turn), which no turn yielded."""
        for event in events:
            if event.id not in self.seen and FAILED_KEY in (event.custom_metadata or {}):
                self.record(event)


def _contains(actual: Any, wanted: Any) -> bool:
    """`wanted` is in `actual`: equal, or a mapping whose entries are all in it."""
    if isinstance(wanted, Mapping):
        return isinstance(actual, Mapping) and all(
            k in actual and _contains(actual[k], v) for k, v in wanted.items())
    return bool(actual == wanted)


def check(expect: Mapping[str, Any], outcome: Outcome) -> list[str]:
    """The failed expectations, as messages."""
    failures = []
    for wanted in expect.get("tools") or []:
        name = wanted if isinstance(wanted, str) else wanted.get("name")
        args = {} if isinstance(wanted, str) else wanted.get("args") or {}
        if not any(n == name and _contains(a, args) for n, a in outcome.calls):
            seen = [f"{n}({a})" for n, a in outcome.calls if n == name]
            failures.append(f"expected a call to {name} with {args}; "
                            + (f"saw {', '.join(seen)}" if seen else "it was never called"))
    for name in expect.get("not_tools") or []:
        if any(n == name for n, _ in outcome.calls):
            failures.append(f"{name} was called, and must not be")
    for agent in expect.get("agents") or []:
        if agent not in outcome.agents:
            failures.append(f"agent {agent} did not run (ran: {', '.join(outcome.agents)})")
    for key, value in (expect.get("state") or {}).items():
        if key not in outcome.state or not _contains(outcome.state[key], value):
            failures.append(f"state[{key!r}] is {outcome.state.get(key)!r}, expected {value!r}")
    final = expect.get("final")
    if final is not None:
        text = outcome.final or ""
        if isinstance(final, str):
            final = {"contains": final}
        if "contains" in final and str(final["contains"]) not in text:
            failures.append(f"the final answer does not contain {final['contains']!r}: "
                            f"{text!r}")
        if "matches" in final:
            failures += _matches(str(final["matches"]), text)
    for wanted in expect.get("jobs") or []:
        if not any(_contains(job, wanted) for job in outcome.jobs):
            failures.append(f"expected a job {wanted}; jobs: {outcome.jobs}")
    return failures + _errors(expect.get("errors") or [], outcome.failures)


def _matches(pattern: str, text: str) -> list[str]:
    found = patterns.search(pattern, text)
    if found is None:
        return [f"/{pattern}/ was stopped after {patterns.MATCH_SECONDS:g} s on the final "
                f"answer ({len(text)} characters): a pattern that backtracks without end "
                "(nested repeats like `(a+)+`); simplify it, or use `contains`"]
    return [] if found else [f"the final answer does not match /{pattern}/: {text!r}"]


def _declares(entry: Mapping[str, str], failure: Failure) -> bool:
    if "tool" in entry and entry["tool"] != failure.tool:
        return False
    if "agent" in entry and entry["agent"] not in failure.names():
        return False
    return entry.get("contains", "") in failure.text


def _errors(declared: list[Mapping[str, str]], seen: list[Failure]) -> list[str]:
    """Every declared error happened, and every error that happened was declared."""
    found = [f"expected an error of {' '.join(f'{k} {v!r}' for k, v in entry.items())}; "
             + (f"errors: {'; '.join(map(str, seen))}" if seen else "there was none")
             for entry in declared if not any(_declares(entry, f) for f in seen)]
    unexpected = [f for f in dict.fromkeys(seen) if not any(_declares(e, f) for e in declared)]
    return found + [f"unexpected error: {failure}" for failure in unexpected]
