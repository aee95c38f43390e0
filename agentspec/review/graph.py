"""The agent tree of a spec as a graph: Mermaid or Graphviz DOT.

Drawn from the lowered tree (`ir.tree`), so it shows what build makes of the spec: each agent
with its kind and model, its tools (approvals marked), its backend and whether it can run
commands (a sandbox's network and mounts), offline agents, and the edges that connect agents:
sub-agents, agents called as tools, the agents of `task`, a router's route, fallback and
default, a planner's roles. The root's label names the state keys a session must be created
with (`state:` entries with `required: true`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from agentspec.ir.tree import AgentNode, AgentToolNode, AppNode, LlmFields, tools_of
from agentspec.kindapi import kind_for

__all__ = ["Graph", "graph", "to_dot", "to_mermaid"]


@dataclass
class Graph:
    name: str
    nodes: dict[str, list[str]] = field(default_factory=dict)  # id -> label lines
    offline: set[str] = field(default_factory=set)
    edges: list[tuple[str, str, str]] = field(default_factory=list)  # (from, to, label)


def _edges(node: AgentNode) -> list[tuple[AgentNode, str, AgentNode]]:
    """(parent, edge label, child) for the edges leaving `node`."""
    kind = kind_for(node)
    found = [(node, _marked(kind.edge(node), kind.marks(node, child.name)), child)
             for child in node.children]
    found += [(node, "offline job" if t.agent.offline else "tool", t.agent)
              for t in tools_of(node) if isinstance(t, AgentToolNode)]
    if isinstance(node, LlmFields):
        found += [(node, "task (job)" if agent.offline else "task", agent)
                  for kind, agent in node.task.items() if kind != "general-purpose"]
    return found


def _marked(label: str, marks: tuple[str, ...]) -> str:
    return label + (f" ({', '.join(marks)})" if marks else "")


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
    resumes = app.jobs is not None and app.jobs.on_done == "resume"
    drawn.nodes[app.root.name] = _label_of(app.root)
    if app.inputs:  # what whoever starts a session must give, at the entry of the tree
        drawn.nodes[app.root.name].append(
            "session needs state: " + ", ".join(key for key, _ in app.inputs.items()))
    for parent, label, child in _walk(app.root):
        drawn.nodes.setdefault(child.name, _label_of(child, resumes))
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


def _label_of(node: AgentNode, resumes: bool = False) -> list[str]:
    """`resumes`: a finished job runs its parent's turn (`jobs.on_done: resume`)."""
    label: list[str] = kind_for(node).label(node)
    if resumes and node.offline:
        label = ["offline (background job, resumes its parent)"
                 if line == "offline (background job)" else line for line in label]
    return label
