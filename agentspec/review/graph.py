"""The agent tree of a spec as a graph: Mermaid or Graphviz DOT.

Drawn from the lowered tree (`ir.tree`), so it shows what build makes of the spec: each agent
with its kind and model (a fallback chain's or route's models and their servers), its tools
(approvals marked), its backend and whether it can run commands, offline agents, and the
edges that connect agents: sub-agents, agents called as tools, the agents of `task`, a
router's route, fallback and default, a planner's roles.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from agentspec.ir.tree import AgentNode, AppNode, ModelNode

__all__ = ["Graph", "graph", "to_dot", "to_mermaid"]


@dataclass
class Graph:
    name: str
    nodes: dict[str, list[str]] = field(default_factory=dict)  # id -> label lines
    offline: set[str] = field(default_factory=set)
    edges: list[tuple[str, str, str]] = field(default_factory=list)  # (from, to, label)


def _tools(node: AgentNode) -> list[str]:
    gated = {name for name, _ in node.approvals}
    names = [t.name or (t.python.attr if t.python else "") for t in node.tools
             if t.kind != "agent"]
    names += list(node.filesystem.tools) if node.filesystem else []
    names += ["write_todos", "read_todos"] if node.todos else []
    names += ["task"] if node.task else []
    return [f"{n} (approval)" if n in gated or any(
        t.approval and t.name == n for t in node.tools) else n for n in names]


def _model(model: ModelNode) -> str:
    """A model as one line: its id and server, or what a chain or route calls."""
    if model.provider in ("adk", "litellm"):
        return model.id + (f" @ {model.base_url}" if model.base_url else "")
    members = dict(model.members)
    shown = {name: f"{name} ({_model(member)})" for name, member in members.items()}
    if model.provider == "fallback":
        return " -> ".join(shown[name] for name in model.fallback)
    how = f"python {model.route_python.ref}" if model.route_python else \
        f"state {model.route_state}"
    return f"route by {how} over {', '.join(shown[n] for n in model.choices)}" + (
        f", then {' -> '.join(shown[n] for n in model.fallback)}" if model.fallback else "")


def _label(node: AgentNode) -> list[str]:
    head = node.kind if node.model is None else f"{node.kind} · {node.model.id}"
    lines = [node.name, head]
    if node.model is not None and (node.model.members or node.model.base_url):
        lines.append(f"model: {_model(node.model)}")
    if node.offline:
        lines.append("offline (background job)")
    tools = _tools(node)
    if tools:
        lines.append("tools: " + ", ".join(tools))
    if node.filesystem is not None:
        kinds = dict(node.filesystem.definitions)
        kind = kinds.get(node.filesystem.backend, {}).get("type", "state")
        runs = " · runs commands" if "execute" in node.filesystem.tools else ""
        lines.append(f"backend: {node.filesystem.backend} ({kind}){runs}")
    if node.skills:
        lines.append("skills: " + ", ".join(node.skills))
    if node.memory:
        lines.append("memory: " + ", ".join(node.memory))
    if node.route is not None:
        route = node.route
        how = (f"state {route.state}" if route.state else f"python {route.python.ref}"
               if route.python else f"model {route.model.id if route.model else '?'}")
        lines.append(f"route: {how}")
    if node.plan is not None:
        lines.append(f"max_depth {node.plan.max_depth} · max_subtasks {node.plan.max_subtasks}")
    if node.max_iterations is not None:
        lines.append(f"max_iterations {node.max_iterations}")
    if node.tool_errors != "return":
        lines.append(f"tool errors: {node.tool_errors}")
    return lines


def _edges(node: AgentNode) -> list[tuple[AgentNode, str, AgentNode]]:
    """(parent, edge label, child) for the edges leaving `node`."""
    ordered = "sub-agent" if node.kind in ("llm", "deep") else "step" if node.kind in (
        "sequential", "loop") else "branch" if node.kind == "parallel" else "option"
    found = [(node, ordered, child) for child in node.children]
    tools = (*node.tools, *(node.plan.worker_tools if node.plan else ()))
    found += [(node, "offline job" if t.agent.offline else "tool", t.agent)
              for t in tools if t.agent is not None]
    found += [(node, "task (job)" if agent.offline else "task", agent)
              for kind, agent in node.task if kind != "general-purpose"]
    return found


def _walk(node: AgentNode) -> Iterator[tuple[AgentNode, str, AgentNode]]:
    """(parent, edge label, child) for every edge under `node`, depth first (without
    recursion, however deep the tree)."""
    stack = list(reversed(_edges(node)))
    while stack:
        edge = stack.pop()
        yield edge
        stack.extend(reversed(_edges(edge[2])))


def graph(app: AppNode) -> Graph:
    drawn = Graph(app.name)
    drawn.nodes[app.root.name] = _label(app.root)
    for parent, label, child in _walk(app.root):
        if parent.route is not None and label == "option":
            marks = [m for m, names in (("default", [parent.route.default]),
                                        ("fallback", parent.route.fallback))
                     if child.name in names]
            label = "option" + (f" ({', '.join(marks)})" if marks else "")
        drawn.nodes.setdefault(child.name, _label(child))
        if child.offline:
            drawn.offline.add(child.name)
        drawn.edges.append((parent.name, child.name, label))
    return drawn


def _mermaid_text(text: str) -> str:
    return text.replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;").replace(
        ">", "#gt;")


def to_mermaid(drawn: Graph) -> str:
    lines = ["flowchart TD"]
    for node, lines_of in drawn.nodes.items():
        text = "<br/>".join(_mermaid_text(line) for line in lines_of)
        lines.append(f'  {node}["{text}"]')
    for parent, child, label in drawn.edges:
        arrow = "-.->" if label.startswith(("tool", "task", "offline")) else "-->"
        lines.append(f"  {parent} {arrow}|{_mermaid_text(label)}| {child}")
    if drawn.offline:
        lines.append("  classDef offline stroke-dasharray: 5 5")
        lines.append(f"  class {','.join(sorted(drawn.offline))} offline")
    return "\n".join(lines) + "\n"


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(drawn: Graph) -> str:
    lines = [f'digraph "{_dot_text(drawn.name)}" {{', "  rankdir=TB;",
             '  node [shape=box, fontname="Helvetica"];', '  edge [fontname="Helvetica"];']
    for node, lines_of in drawn.nodes.items():
        text = "\\n".join(_dot_text(line) for line in lines_of)
        style = ", style=dashed" if node in drawn.offline else ""
        lines.append(f'  "{node}" [label="{text}"{style}];')
    for parent, child, label in drawn.edges:
        style = ", style=dashed" if label.startswith(("tool", "task", "offline")) else ""
        lines.append(f'  "{parent}" -> "{child}" [label="{_dot_text(label)}"{style}];')
    lines.append("}")
    return "\n".join(lines) + "\n"
