"""Scenario files (`scenarios/<spec>.yaml`) in the server: the agents and tools a scenario
names, where they are written, so that references and rename of a spec's name reach them.
The names `validate` checks (`testing.check.scenario_names`), and those of the replies
scripted for the models: a `call`'s tool, a `transfer`'s agent, the agent argument of a
call of `task` (the agent a deep agent delegates to) or `transfer_to_agent`. A text that
merely contains a name is none."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from agentspec.lsp.symbols import FileIndex, Occurrence
from agentspec.parse import Path as DataPath
from agentspec.parse import PosNode
from agentspec.testing.check import scenario_names, scenario_paths

__all__ = ["expected_tool_arguments", "reply_occurrences", "scenario_occurrences"]

#: `scenario_names`' kinds of name as the spec's
_KINDS = {"scripted": "agent", "agent": "agent", "tool": "tool"}
#: the argument that names an agent, of the tools that take one: the deep agents' `task`
#: and ADK's `transfer_to_agent` (the tool a `transfer` reply calls)
_AGENT_ARGUMENTS = {"task": "subagent_type", "transfer_to_agent": "agent_name"}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def scenario_occurrences(index: FileIndex) -> list[Occurrence]:
    """The spec names a scenario file's scenarios use, where they are written."""
    pos = index.positions
    if pos is None:
        return []
    found: list[Occurrence] = []
    for at, scenario in scenario_paths(index.data):
        for kind, name, where, is_key in scenario_names(scenario, at):
            node = pos.find(where)
            span = None if node is None else node.key if is_key else node.value
            if isinstance(name, str) and span is not None:
                found.append(Occurrence(_KINDS[kind], name, span, False, where))
        found += reply_occurrences(scenario, at, pos)
        for number, decision in enumerate(_list(scenario.get("decisions"))):
            # the call it edits is not named: `subagent_type` is only `task`'s
            found += _arguments("task", _mapping(decision).get("edit"),
                                (*at, "decisions", number, "edit"), pos)
        tools = _mapping(scenario.get("expect")).get("tools")
        for number, tool in enumerate(_list(tools)):
            tool = _mapping(tool)
            found += _arguments(tool.get("name"), tool.get("args"),
                                (*at, "expect", "tools", number, "args"), pos)
    return found


def reply_occurrences(case: Mapping[str, Any], at: DataPath, pos: PosNode
                      ) -> list[Occurrence]:
    """The names in the replies a scenario (or an eval case) scripts: each `call`'s tool,
    each `transfer`'s agent and the agent a call of `task` or `transfer_to_agent` names."""
    found: list[Occurrence] = []
    for agent, replies in _mapping(case.get("replies")).items():
        for number, reply in enumerate(_list(replies)):
            where = (*at, "replies", agent, number)
            reply = _mapping(reply)
            for key, kind in (("call", "tool"), ("transfer", "agent")):
                node = pos.find((*where, key))
                if isinstance(reply.get(key), str) and node is not None:
                    found.append(Occurrence(kind, reply[key], node.value, False,
                                            (*where, key)))
            found += _arguments(reply.get("call"), reply.get("args"), (*where, "args"), pos)
    return found


def _arguments(tool: Any, args: Any, where: DataPath, pos: PosNode) -> list[Occurrence]:
    """The agent the arguments of a call of `tool` name, if it takes one."""
    key = _AGENT_ARGUMENTS.get(tool) if isinstance(tool, str) else None
    name = _mapping(args).get(key) if key else None
    node = pos.find((*where, key)) if key else None
    if key is None or not isinstance(name, str) or node is None:
        return []
    return [Occurrence("agent", name, node.value, False, (*where, key))]


def expected_tool_arguments(turn: Mapping[str, Any], where: DataPath, pos: PosNode
                            ) -> Iterator[Occurrence]:
    """The agents the expected calls of an eval turn name in their arguments."""
    for number, tool in enumerate(_list(turn.get("tools"))):
        tool = _mapping(tool)
        yield from _arguments(tool.get("name"), tool.get("args"),
                              (*where, "tools", number, "args"), pos)
