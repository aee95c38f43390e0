"""Eval files (`evals/<spec>.yaml`) in the server: the names a case uses (the tools of its
turns and its stubs, the agents its replies script, the tools and agents those replies
call, transfer to and delegate to, the state keys it gives), for
definition and references into the spec beside the `evals/` folder, and their completion
from what that spec really builds (`testing.names.SpecNames`, as `evaluation.check` judges
them)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from agentspec.lsp.cursor import Context
from agentspec.lsp.scenariofiles import expected_tool_arguments, reply_occurrences
from agentspec.lsp.symbols import FileIndex, Occurrence
from agentspec.parse import PosNode

if TYPE_CHECKING:
    from agentspec.lsp.analysis import Analysis

__all__ = ["eval_completion", "eval_occurrences"]

_FLOW_KEY = re.compile(r"([A-Za-z_][\w-]*)[ \t]*:[ \t]*[\[{][^\[\]{}:]*$")


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def eval_occurrences(index: FileIndex) -> list[Occurrence]:
    """The spec names an eval file's cases use, where they are written."""
    data, pos = _mapping(index.data), index.positions
    if pos is None:
        return []
    return list(_cases(data, pos))


def _cases(data: Mapping[str, Any], pos: PosNode) -> Iterator[Occurrence]:
    for number, case in enumerate(_list(data.get("cases"))):
        at = ("cases", number)
        case = _mapping(case)
        yield from reply_occurrences(case, at, pos)
        for turn_number, turn in enumerate(_list(case.get("turns"))):
            yield from expected_tool_arguments(_mapping(turn), (*at, "turns", turn_number),
                                               pos)
            for tool_number, tool in enumerate(_list(_mapping(turn).get("tools"))):
                where: tuple[str | int, ...] = (*at, "turns", turn_number, "tools",
                                                tool_number)
                name = _mapping(tool).get("name") if isinstance(tool, Mapping) else tool
                if isinstance(tool, Mapping):
                    where = (*where, "name")
                node = pos.find(where)
                if isinstance(name, str) and node is not None:
                    yield Occurrence("tool", name, node.value, False, where)
        for section, kind in (("stubs", "tool"), ("replies", "agent"), ("state", "state")):
            for name in _mapping(case.get(section)):
                node = pos.find((*at, section, name))
                if node is not None and node.key is not None:
                    yield Occurrence(kind, name, node.key, False, (*at, section, name))


def eval_completion(analysis: Analysis, path: Path, ctx: Context
                    ) -> list[lsp.CompletionItem] | None:
    """The names the spec lets a case use where the cursor expects one; None elsewhere."""
    done = analysis.checks.get(path)
    context = done.context if done is not None else None
    if context is None:
        return None
    names = context.names
    tools = sorted(names.tools) if names is not None else []
    agents = sorted(names.scripted) if names is not None else []
    state = sorted(context.required)
    where = ctx.path[-1] if ctx.path else None
    # in a flow collection, the key of the innermost one open: `turns: [{tools: [`
    inner = _FLOW_KEY.search(ctx.line_prefix) if ctx.in_flow else None
    key = inner.group(1) if inner else ctx.value_of
    if key == "tools" and "turns" in (where, ctx.value_of) or \
            key == "name" and where == "tools":
        return _items(tools, "tool")
    chosen = {"stubs": (tools, "tool"), "replies": (agents, "agent with a model"),
              "state": (state, "state key the spec requires")}
    if "cases" not in ctx.path:
        return None
    if ctx.value_of is None and where in chosen:  # a key of the mapping
        return _items(*chosen[where])
    if ctx.in_flow and key in chosen:
        return _items(*chosen[key])
    return None


def _items(names: list[str], what: str) -> list[lsp.CompletionItem]:
    return [lsp.CompletionItem(name, kind=lsp.CompletionItemKind.Reference,
                               detail=f"{what} of the spec") for name in names]
