"""The agent tree: delegation edges, cycles, single parents, the root, reachability."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agentspec.diagnostics import Related, codes
from agentspec.language.agents import KIND_MODELS, LlmAgent
from agentspec.parse import Path
from agentspec.resolve.agents import LLM_KINDS, kind_of
from agentspec.resolve.document import Document
from agentspec.validate.semantic.context import Context
from agentspec.validate.semantic.offline_hint import offline_hint

__all__ = ["MAX_AGENT_DEPTH", "MAX_AGENTS_BUILT", "Edge", "check_tree", "document_edges", "edges",
           "find_root"]

#: agents nested below the root (ADK, lowering and planning walk the tree recursively)
MAX_AGENT_DEPTH = 100
#: agents build makes: one reached through several delegations is built once for each
MAX_AGENTS_BUILT = 10_000


@dataclass(frozen=True)
class Edge:
    parent: str
    child: str
    path: Path
    is_sub_agent: bool  # ADK parent/child: the single-parent rule applies


def _items(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _tool_edges(doc: Document, name: str, tools: object, path: Path) -> Iterator[Edge]:
    for index, tool in enumerate(_items(tools)):
        if isinstance(tool, dict) and isinstance(tool.get("agent"), str):
            yield Edge(name, tool["agent"], (*path, index, "agent"), False)
        elif isinstance(tool, str):
            target = doc.section("tools").get(tool)
            if isinstance(target, dict) and isinstance(target.get("agent"), str):
                yield Edge(name, target["agent"], (*path, index), False)


def _agent_edges(doc: Document, name: str, agent: dict[str, Any]) -> Iterator[Edge]:
    """Edges read from the resolved data, so an agent with a structural error keeps its
    place in the tree and its children are not mistaken for roots; only fields the agent's
    kind takes count (a misplaced field is reported on its own)."""
    base = ("agents", name)
    takes = KIND_MODELS.get(str(agent.get("kind", "llm")), LlmAgent).model_fields
    if "sub_agents" in takes:
        for index, child in enumerate(_items(agent.get("sub_agents"))):
            if isinstance(child, str):
                yield Edge(name, child, (*base, "sub_agents", index), True)
    if "tools" in takes:
        yield from _tool_edges(doc, name, agent.get("tools"), (*base, "tools"))
    worker = agent.get("worker")
    if "worker" in takes and isinstance(worker, dict):
        yield from _tool_edges(doc, name, worker.get("tools"), (*base, "worker", "tools"))
    task = agent.get("task")
    if "task" in takes and isinstance(task, dict):
        for index, child in enumerate(_items(task.get("agents"))):
            if isinstance(child, str):
                yield Edge(name, child, (*base, "task", "agents", index), False)


def document_edges(doc: Document) -> list[Edge]:
    """Every delegation of a resolved document, in document order (stable reports), to
    any name (defined or not)."""
    agents = doc.section("agents")
    return [edge for name, agent in agents.items()
            for edge in _agent_edges(doc, name, agent if isinstance(agent, dict) else {})]


def edges(ctx: Context) -> list[Edge]:
    return [e for e in document_edges(ctx.doc) if e.child in ctx.defined["agents"]]


def _graph(all_edges: list[Edge]) -> dict[str, list[Edge]]:
    graph: dict[str, list[Edge]] = {}
    for edge in all_edges:
        graph.setdefault(edge.parent, []).append(edge)
    return graph


def _cycles(ctx: Context, graph: dict[str, list[Edge]]) -> None:
    """Depth-first search with an explicit stack: chains of any length, no recursion."""
    state: dict[str, int] = {}  # 1 = on the path, 2 = done
    for start in ctx.doc.section("agents"):
        if start in state:
            continue
        path: list[str] = [start]
        pending: list[Iterator[Edge]] = [iter(graph.get(start, ()))]
        state[start] = 1
        while pending:
            edge = next(pending[-1], None)
            if edge is None:
                state[path.pop()] = 2
                pending.pop()
            elif state.get(edge.child) == 1:
                chain = " -> ".join([*path[path.index(edge.child):], edge.child])
                ctx.report(codes.AGENT_CYCLE(f"agents delegate in a circle: {chain}",
                                             ctx.at(*edge.path), hint="break the cycle"))
            elif edge.child not in state:
                state[edge.child] = 1
                path.append(edge.child)
                pending.append(iter(graph.get(edge.child, ())))


def _parents(ctx: Context, all_edges: list[Edge]) -> None:
    first: dict[str, Edge] = {}
    for edge in all_edges:
        if not edge.is_sub_agent:
            continue
        if edge.child not in first:
            first[edge.child] = edge
            continue
        earlier = first[edge.child]
        if earlier.parent == edge.parent:
            ctx.report(codes.DUPLICATE_NAME(
                f"`{edge.child}` is listed twice in `{edge.parent}`'s sub_agents",
                ctx.at(*edge.path), related=[Related(ctx.at(*earlier.path), "first listed here")]))
            continue
        ctx.report(codes.MULTIPLE_PARENTS(
            f"`{edge.child}` is a sub-agent of both `{earlier.parent}` and `{edge.parent}`",
            ctx.at(*edge.path),
            hint=f"define `{edge.child}_2: {{extends: {edge.child}}}` and list that one here",
            related=[Related(ctx.at(*earlier.path), f"also a sub-agent of `{earlier.parent}`")]))


def find_root(ctx: Context, all_edges: list[Edge]) -> str | None:
    """The entry agent, reporting when there is none or several."""
    children = {e.child for e in all_edges}
    spec, names = ctx.spec, list(ctx.doc.section("agents"))
    if spec.root is not None:
        if spec.root not in names:
            return None  # reported as an unknown agent
        into = next((e for e in all_edges if e.child == spec.root), None)
        if into is not None:
            ctx.report(codes.ROOT_HAS_PARENT(
                f"the root `{spec.root}` is also used by `{into.parent}`", ctx.at("root"),
                related=[Related(ctx.at(*into.path), "used here")]))
        return spec.root
    tops = [name for name in names if name not in children]
    if len(tops) == 1:
        return tops[0]
    if not names:
        if "agents" in ctx.doc.data:  # a missing `agents` key is reported on its own
            ctx.report(codes.ROOT_MISSING("the spec defines no agents", ctx.key_at("agents")))
        return None
    where = ctx.key_at("agents")
    if not tops:
        ctx.report(codes.ROOT_MISSING("every agent is some agent's child, so none is the root",
                                      where, hint="set `root:` and break the cycle"))
        return None
    listed = ", ".join(f"`{t}`" for t in tops)
    ctx.report(codes.ROOT_MISSING(f"several agents could be the root: {listed}", where,
                                  hint=f"add `root: {tops[0]}` (or whichever is the entry)"))
    return None


def _reachable(root: str, graph: dict[str, list[Edge]]) -> set[str]:
    seen, todo = {root}, [root]
    while todo:
        for edge in graph.get(todo.pop(), ()):
            if edge.child not in seen:
                seen.add(edge.child)
                todo.append(edge.child)
    return seen


def _modes(ctx: Context, all_edges: list[Edge]) -> None:
    parent_of = {e.child: e.parent for e in all_edges if e.is_sub_agent}
    for name, agent in ctx.llm_agents():
        if agent.mode is None or agent.mode == "chat":
            continue
        parent = parent_of.get(name)
        if parent is None or kind_of(ctx.raw_agent(parent)) not in LLM_KINDS:
            ctx.report(codes.DELEGATION_OUTSIDE_LLM(
                f"`{name}` has `mode: {agent.mode}` but no LLM parent lists it in `sub_agents`",
                ctx.at("agents", name, "mode"), hint="remove `mode` or list the agent under "
                "an LLM agent's `sub_agents`"))


def _called_as_tool(ctx: Context, all_edges: list[Edge]) -> tuple[set[str], set[str]]:
    """Agents delegated a task (any way), and those called with arguments like a tool."""
    tasks: set[str] = set()
    tools: set[str] = set()
    for edge in all_edges:
        if not edge.is_sub_agent:
            tasks.add(edge.child)
            if edge.path[2] in ("tools", "worker"):
                tools.add(edge.child)
        elif kind_of(ctx.raw_agent(edge.parent)) in LLM_KINDS and \
                ctx.raw_agent(edge.child).get("mode") in ("single_turn", "task"):
            tasks.add(edge.child)
            tools.add(edge.child)
    return tasks, tools


def _delegation_fields(ctx: Context, all_edges: list[Edge]) -> None:
    tasks, tools = _called_as_tool(ctx, all_edges)
    for name, agent in ctx.agents():
        if agent.execution_mode == "offline" and name not in tasks:
            ctx.report(codes.OFFLINE_NOT_DELEGATED(
                f"`{name}` runs offline only when delegated to, and no agent delegates to it",
                ctx.at("agents", name, "execution_mode"),
                hint=offline_hint(ctx, name, next((e.parent for e in all_edges if e.child
                                                   == name and e.is_sub_agent), None))))
        if getattr(agent, "input_schema", None) is not None and name not in tools:
            ctx.report(codes.INPUT_SCHEMA_UNUSED(
                f"`{name}` is never called as a tool, so `input_schema` has no effect",
                ctx.key_at("agents", name, "input_schema"),
                hint="use the agent through `{agent: ...}` or as a `single_turn` sub-agent, "
                "or remove `input_schema`"))


def _copies(ctx: Context, name: str) -> int:
    """How many times build makes an agent's tools: twice when `task` offers the
    general-purpose copy of it (which a `kind: deep` agent has unless it says otherwise)."""
    agent = ctx.raw_agent(name)
    task = agent.get("task", True if kind_of(agent) == "deep" else None)
    general = task is True or (isinstance(task, dict) and task.get("general_purpose") is True)
    return 2 if kind_of(agent) in LLM_KINDS and general else 1


def _bounds(ctx: Context, root: str, graph: dict[str, list[Edge]]) -> None:
    """The depth of the tree build makes from `root`, and how many agents it makes (an agent
    reached through several delegations is built once for each), without recursion; only
    for a graph without cycles."""
    depth: dict[str, int] = {}
    size: dict[str, int] = {}
    stack = [root]
    while stack:
        name = stack[-1]
        pending = [e.child for e in graph.get(name, ()) if e.child not in depth]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        if name in depth:
            continue
        out = graph.get(name, ())
        depth[name] = 1 + max((depth[e.child] for e in out), default=0)
        size[name] = min(MAX_AGENTS_BUILT + 1, _copies(ctx, name) * (
            1 + sum(size[e.child] for e in out)))
    if depth[root] > MAX_AGENT_DEPTH + 1:
        edge, name, level = None, root, 0
        while level <= MAX_AGENT_DEPTH:  # follow the deepest path to the edge past the limit
            edge = max(graph[name], key=lambda e: depth[e.child])
            name, level = edge.child, level + 1
        assert edge is not None
        ctx.report(codes.AGENT_TREE_TOO_DEEP(
            f"agents nest more than {MAX_AGENT_DEPTH} deep below the root `{root}`",
            ctx.at(*edge.path), hint="flatten the tree: a workflow agent takes many steps"))
    elif size[root] > MAX_AGENTS_BUILT:
        ctx.report(codes.AGENT_TREE_TOO_LARGE(
            f"build would make more than {MAX_AGENTS_BUILT:,} agents from the root `{root}`",
            ctx.key_at("agents", root), hint="an agent reached through several `{agent: ...}` "
            "tools, `task` lists or general-purpose copies is built once for each; share "
            "fewer agents"))


def check_tree(ctx: Context) -> str | None:
    all_edges = edges(ctx)
    graph = _graph(all_edges)
    cycles = len(ctx.diagnostics)
    _cycles(ctx, graph)
    acyclic = len(ctx.diagnostics) == cycles
    _parents(ctx, all_edges)
    _modes(ctx, all_edges)
    _delegation_fields(ctx, all_edges)
    root = find_root(ctx, all_edges)
    if root is not None and acyclic:
        _bounds(ctx, root, graph)
    if root is not None:
        reached = _reachable(root, graph)
        for name in ctx.doc.section("agents"):
            if name not in reached:
                ctx.report(codes.UNREACHABLE_AGENT(
                    f"`{name}` is never used by the root `{root}` or the agents it reaches",
                    ctx.key_at("agents", name), hint="remove it or reference it"))
    return root
