"""What a spec change changes: the resolved agent trees of two versions, compared per agent.

Both sides are checked and lowered as `build` would (imports, defaults, `extends`,
overlays, instruction files, `kind: deep` defaults), so a change that arrives through an
import or a default is seen where it lands. Each change has a stable `change` code, a risk
class with its reason, and the position of what changed in each version:

* high: a capability gained (a tool, the shell, a backend that runs commands or reads hard
  links, a new agent's tools), an approval dropped, a model that now sends requests (and
  its key) to another server (`base_url`), or `outside_project` widened (reported under
  `(spec)`);
* medium: behaviour changed (model, a model's fallback chain or route, kind, instruction,
  limits raised, routes, execution mode, sub-agents, memory, skills, schemas, what a tool's
  error does, the initial session state, summarization and its history files);
* low: a capability lost, an approval added, a limit lowered, an agent removed or renamed,
  `outside_project` narrowed.

App-level changes (the initial state, `outside_project`, summarization) are reported under
`(spec)`. The text
of a file outside the project is never shown.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from agentspec.check import CheckResult, check
from agentspec.diagnostics import Diagnostic
from agentspec.ir.lower import lower
from agentspec.ir.tree import AgentNode, AppNode, ModelNode, ToolNode

__all__ = ["RISKS", "SPEC", "Change", "Side", "compare", "load_side"]

RISKS = ("high", "medium", "low")


@dataclass(frozen=True)
class Where:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Change:
    agent: str
    change: str  # a stable code: tool-added, approval-dropped, ...
    risk: str
    reason: str
    old: Where | None = None
    new: Where | None = None
    detail: str = ""  # the instruction's unified diff, old -> new values, ...

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "change": self.change, "risk": self.risk,
                "reason": self.reason, "old": str(self.old) if self.old else None,
                "new": str(self.new) if self.new else None, "detail": self.detail}


@dataclass
class Side:
    """One version of a spec, resolved and lowered."""

    label: str  # how files are shown: the path, or REV:path
    result: CheckResult
    app: AppNode | None
    problems: list[Diagnostic] = field(default_factory=list)
    display: Mapping[str, str] = field(default_factory=dict)  # source file -> shown name

    @property
    def agents(self) -> dict[str, AgentNode]:
        return {} if self.app is None else dict(_agents(self.app.root))

    def where(self, *path: str | int, key: bool = False) -> Where | None:
        """The position of `path` in the resolved document (the key or the value)."""
        document = self.result.document
        if document is None:
            return None
        span = document.pos.key_span(path) if key else document.pos.value_span(path)
        found = document.pos.find(path)
        if found is None:  # fall back to the nearest enclosing entry that exists
            return self.where(*path[:-1], key=True) if len(path) > 1 else None
        return Where(self.display.get(span.file, span.file), span.start.line, span.start.col)


    def outside(self, relative: str | None) -> bool:
        """Whether a file named relative to the spec's directory is outside the project."""
        project = self.result.project
        return relative is not None and project is not None and project.judge(
            self.result.path.resolve().parent / relative) != "inside"


def load_side(path: Path, label: str, *, environment: str | None = None,
              environ: Mapping[str, str] | None = None,
              display: Mapping[str, str] | None = None, project: Path | None = None) -> Side:
    """One version of a spec; `project` is its project's root when it is not where the file
    is (a revision extracted from git)."""
    result = check(path, environment=environment, environ=environ, all_environments=False,
                   project=project)
    errors = [d for d in result.diagnostics if d.is_error]
    if errors:
        return Side(label, result, None, errors, dict(display or {}))
    app, problems = lower(result)
    return Side(label, result, app, problems, dict(display or {}))


def _agents(root: AgentNode) -> Iterator[tuple[str, AgentNode]]:
    """Every agent the tree runs, by name (the general-purpose copy is its caller's)."""
    seen: set[str] = set()
    todo = [root]
    while todo:
        node = todo.pop(0)
        if node.name in seen:
            continue
        seen.add(node.name)
        yield node.name, node
        todo += list(node.children)
        todo += [t.agent for t in _tools(node) if t.agent is not None]
        todo += [agent for kind, agent in node.task if kind != "general-purpose"]


# what an agent can do ------------------------------------------------------------------------


def _mcp_target(tool: ToolNode) -> str:
    """The server an MCP entry starts or calls: its URL, or its command line."""
    server = tool.mcp.mcp
    return getattr(server, "url", None) or " ".join(
        [getattr(server, "command", "")] + list(getattr(server, "args", []) or []))


def _tools(node: AgentNode) -> tuple[ToolNode, ...]:
    """An agent's tools, and a planner's workers' tools."""
    return (*node.tools, *(node.plan.worker_tools if node.plan else ()))


def _tool_key(tool: ToolNode) -> str:
    if tool.kind == "python" and tool.python is not None:
        return tool.name or f"python {tool.python.ref}"
    if tool.kind == "mcp" and tool.mcp is not None:
        return tool.name or f"mcp {_mcp_target(tool)}"
    if tool.kind == "agent" and tool.agent is not None:
        return f"agent {tool.agent.name}"
    return tool.name


def _tool_source(tool: ToolNode) -> str:
    """What runs when the tool is called: the code, server or agent behind it."""
    if tool.python is not None:
        args = f" {dict(tool.python.args)}" if tool.python.args else ""
        return f"python {tool.python.ref}{args}"
    if tool.mcp is not None:
        return f"mcp {_mcp_target(tool)} filter={tool.mcp.filter}"
    return f"{tool.kind} {tool.agent.name if tool.agent else tool.name}"


def capabilities(node: AgentNode) -> dict[str, tuple[tuple[str | int, ...], str]]:
    """Tool -> (the field that gives it, what runs); agents it calls as tools (or as
    single_turn / task sub-agents) count as tools `agent NAME`."""
    found: dict[str, tuple[tuple[str | int, ...], str]] = {}
    for index, tool in enumerate(node.tools):
        found[_tool_key(tool)] = (("tools", index), _tool_source(tool))
    for index, tool in enumerate(node.plan.worker_tools if node.plan else ()):
        found[_tool_key(tool)] = (("worker", "tools", index), _tool_source(tool))
    for child in node.children:
        if child.mode in ("single_turn", "task"):
            found[f"agent {child.name}"] = (("sub_agents",), f"agent {child.name}")
    for name in node.filesystem.tools if node.filesystem else ():
        found[name] = (("filesystem",), "harness")
    if node.todos:
        found["write_todos"] = found["read_todos"] = (("todos",), "harness")
    if node.task:
        found["task"] = (("task",), "harness")
    return found


def _chat_children(node: AgentNode) -> list[str]:
    return [c.name for c in node.children if c.mode not in ("single_turn", "task")]


def _approvals(node: AgentNode) -> dict[str, tuple[str, ...]]:
    found = {name: approval.decisions for name, approval in node.approvals}
    for tool in node.tools:
        if tool.approval is not None:
            found[_tool_key(tool)] = tool.approval.decisions
    return found


def _backend(node: AgentNode) -> dict[str, Any] | None:
    if node.filesystem is None:
        return None
    definitions = dict(node.filesystem.definitions)
    return {"backend": node.filesystem.backend, "definitions": definitions}


# comparing -----------------------------------------------------------------------------------


@dataclass
class _Compare:
    old: Side
    new: Side
    changes: list[Change] = field(default_factory=list)
    renamed: str = ""  # the agent's name in the old version, for its positions there

    def agent_pair(self, name: str, old_name: str, before: AgentNode,
                   after: AgentNode) -> None:
        """Everything that differs between one agent's two versions."""
        self.renamed = old_name  # positions on the old side use the old name
        if before.kind != after.kind:
            self.add(name, "kind-changed", "medium",
                      f"`{before.kind}` became `{after.kind}`", ("kind",), ("kind",))
        old_model = before.model.id if before.model else None
        new_model = after.model.id if after.model else None
        if old_model != new_model:
            self.add(name, "model-changed", "medium",
                      f"model {old_model or '(inherited)'} -> {new_model or '(inherited)'}",
                      ("model",), ("model",))
        if before.model is not None and after.model is not None:
            for change, risk, reason in _model_changes(before.model, after.model):
                if old_model == new_model or change == "model-endpoint-changed":
                    self.add(name, change, risk, reason, ("model",), ("model",))
        self.tools(name, before, after)
        self.approvals(name, before, after)
        self.backend(name, before, after)
        if (before.instruction or "") != (after.instruction or ""):
            self.instruction(name, old_name, before, after)
        self.limits(name, before, after)
        if before.offline != after.offline:
            self.add(name, "execution-mode-changed", "medium",
                      "now runs as a background job" if after.offline
                      else "now runs in real time", ("execution_mode",), ("execution_mode",))
        old_children, new_children = _chat_children(before), _chat_children(after)
        if old_children != new_children:
            self.add(name, "sub-agents-changed", "medium",
                      f"sub-agents {old_children} -> {new_children}", ("sub_agents",),
                      ("sub_agents",))
        for field_name, label in (("memory", "memory files"), ("skills", "skills"),
                                  ("output_schema", "output schema"),
                                  ("input_schema", "input schema"),
                                  ("output_key", "output key"), ("route", "route"),
                                  ("static_instruction", "static instruction"),
                                  ("tool_errors", "handling of tool errors")):
            if getattr(before, field_name) != getattr(after, field_name):
                self.add(name, f"{field_name.replace('_', '-')}-changed", "medium",
                          f"the {label} changed", (field_name,), (field_name,))

    def instruction(self, name: str, old_name: str, before: AgentNode,
                    after: AgentNode) -> None:
        """The instruction's unified diff; never the text of a file outside the project
        (a diff is posted where anyone can read it)."""
        old_path = ("instruction_file",) if before.instruction_file else ("instruction",)
        new_path = ("instruction_file",) if after.instruction_file else ("instruction",)
        if self.old.outside(before.instruction_file) or self.new.outside(after.instruction_file):
            self.add(name, "instruction-changed", "medium", "the instruction changed; it is "
                     "read from a file outside the project, so its text is not shown",
                     old_path, new_path)
            return
        diff = "".join(difflib.unified_diff(
            (before.instruction or "").splitlines(keepends=True),
            (after.instruction or "").splitlines(keepends=True),
            f"{self.old.label}:{old_name}", f"{self.new.label}:{name}"))
        self.add(name, "instruction-changed", "medium", "the instruction changed",
                 old_path, new_path, diff)

    def add(self, name: str, change: str, risk: str, reason: str,
            old_path: tuple[Any, ...] | None, new_path: tuple[Any, ...] | None,
            detail: str = "", *, key: bool = False) -> None:
        """A change, positioned at `old_path` / `new_path` under the agent (at the key of
        a mapping entry with `key`)."""
        self.changes.append(Change(
            name, change, risk, reason,
            self.old.where("agents", self.renamed, *old_path, key=key)
            if old_path is not None else None,
            self.new.where("agents", name, *new_path, key=key)
            if new_path is not None else None, detail))

    def tools(self, name: str, before: AgentNode, after: AgentNode) -> None:
        old, new = capabilities(before), capabilities(after)
        for tool in sorted(new.keys() - old.keys() - {"execute"}):  # execute: see backend()
            self.add(name, "tool-added", "high", f"gains `{tool}`: a new capability", None,
                     new[tool][0])
        for tool in sorted(old.keys() - new.keys() - {"execute"}):
            self.add(name, "tool-removed", "low", f"loses `{tool}`", old[tool][0], None)
        for tool in sorted(old.keys() & new.keys()):
            if old[tool][1] != new[tool][1]:  # positioned at the definition, where it changed
                self.changes.append(Change(
                    name, "tool-changed", "high",
                    f"`{tool}` now runs {new[tool][1]} (was {old[tool][1]})",
                    self.old.where("tools", tool) or self.old.where(
                        "agents", self.renamed, *old[tool][0]),
                    self.new.where("tools", tool) or self.new.where(
                        "agents", name, *new[tool][0])))

    def approvals(self, name: str, before: AgentNode, after: AgentNode) -> None:
        old, new = _approvals(before), _approvals(after)
        still = capabilities(after).keys() | {t.name for t in after.tools}
        for tool in sorted(old.keys() - new.keys()):
            if tool not in still:
                continue  # the tool itself is gone, and with it what needed approval
            self.add(name, "approval-dropped", "high",
                      f"`{tool}` no longer waits for a person's approval",
                      ("interrupt_on", tool), ("interrupt_on",), key=True)
        for tool in sorted(new.keys() - old.keys()):
            self.add(name, "approval-added", "low", f"`{tool}` now waits for approval",
                     ("interrupt_on",), ("interrupt_on", tool), key=True)
        for tool in sorted(old.keys() & new.keys()):
            if old[tool] != new[tool]:
                gained = set(new[tool]) - set(old[tool])
                self.add(name, "approval-changed", "medium" if gained else "low",
                         f"`{tool}` decisions {list(old[tool])} -> {list(new[tool])}",
                         ("interrupt_on", tool), ("interrupt_on", tool), key=True)

    def backend(self, name: str, before: AgentNode, after: AgentNode) -> None:
        old, new = _backend(before), _backend(after)
        old_runs = bool(before.filesystem and "execute" in before.filesystem.tools)
        new_runs = bool(after.filesystem and "execute" in after.filesystem.tools)
        if new_runs and not old_runs:
            self.add(name, "execute-gained", "high", "can now run shell commands",
                      None, ("filesystem",))
        elif old_runs and not new_runs:
            self.add(name, "execute-lost", "low", "can no longer run shell commands",
                      ("filesystem",), None)
        if old != new and old is not None and new is not None:
            if old["backend"] != new["backend"]:
                self.add(name, "backend-changed", "medium",
                         f"files: backend `{old['backend']}` -> `{new['backend']}`",
                         ("filesystem",), ("filesystem",))
            else:
                self.backend_settings(name, old, new)

    def backend_settings(self, name: str, old: dict[str, Any], new: dict[str, Any]) -> None:
        """The same backend with other settings: limits one by one, the rest (a root, the
        environment, routes) as one change."""
        before = old["definitions"].get(old["backend"], {})
        after = new["definitions"].get(new["backend"], {})
        for key in ("timeout", "max_output_bytes"):
            self.limit(name, f"backend {key}", before.get(key), after.get(key),
                       ("filesystem",))
        self.hard_links(name, old["definitions"], new["definitions"])
        rest = ("timeout", "max_output_bytes", "hard_links")
        if {k: v for k, v in before.items() if k not in rest} != {
                k: v for k, v in after.items() if k not in rest} or \
                old["definitions"].keys() != new["definitions"].keys():
            self.add(name, "backend-changed", "medium",
                     f"backend `{new['backend']}` is set up differently (root, environment "
                     "or routes)", ("filesystem",), ("filesystem",))

    def hard_links(self, name: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        """`hard_links: allow` on any backend the agent reaches (a route's too)."""
        for backend in sorted(old.keys() & new.keys()):
            was = old[backend].get("hard_links") == "allow"
            now = new[backend].get("hard_links") == "allow"
            if now and not was:
                self.add(name, "hard-links-allowed", "high", f"backend `{backend}` now reads "
                         "files with several names (hard links), which may lie outside its "
                         "root", ("filesystem",), ("filesystem",))
            elif was and not now:
                self.add(name, "hard-links-refused", "low", f"backend `{backend}` no longer "
                         "reads files with several names (hard links)", ("filesystem",),
                         ("filesystem",))

    def limits(self, name: str, before: AgentNode, after: AgentNode) -> None:
        self.limit(name, "max_iterations", before.max_iterations, after.max_iterations,
                   ("max_iterations",))
        self.limit(name, "tool_result_limit", before.result_limit, after.result_limit,
                   ("tool_result_limit",))
        if before.plan is not None and after.plan is not None:
            for key in ("max_depth", "max_subtasks"):
                self.limit(name, key, getattr(before.plan, key), getattr(after.plan, key),
                           (key,))

    def limit(self, name: str, label: str, before: Any, after: Any,
              path: tuple[Any, ...]) -> None:
        if before == after:
            return
        raised = before is None or (after is not None and after > before)
        self.add(name, "limit-changed", "medium" if raised else "low",
                  f"{label} {before} -> {after}", path, path)


def _renames(removed: dict[str, AgentNode], added: dict[str, AgentNode]
             ) -> list[tuple[str, str]]:
    """(old, new) pairs of agents that look the same under a new name."""
    pairs: list[tuple[str, str]] = []
    for old_name, old in removed.items():
        for new_name, new in added.items():
            same = (old.kind, old.instruction, old.description, [t.name for t in old.tools]) == \
                (new.kind, new.instruction, new.description, [t.name for t in new.tools])
            if same and new_name not in [n for _, n in pairs]:
                pairs.append((old_name, new_name))
                break
    return pairs


#: what app-level changes are reported under, in place of an agent's name
SPEC = "(spec)"


def _endpoints(model: ModelNode) -> dict[str, tuple[Any, ...]]:
    """Every model a call may reach, by name, with where and how it is called."""
    found = {model.id: (model.provider, model.base_url, model.api_key, model.args)}
    for name, member in model.members:
        found |= {f"{name}/{key}" if key != member.id else name: value
                  for key, value in _endpoints(member).items()}
    return found


def _routing(model: ModelNode) -> tuple[Any, ...]:
    return (model.provider, tuple(name for name, _ in model.members), model.choices,
            model.fallback, model.route_state, model.route_map, model.route_python)


def _order(model: ModelNode) -> str:
    if model.provider == "fallback":
        return " -> ".join(model.fallback)
    if model.provider == "route":
        how = f"python `{model.route_python.ref}`" if model.route_python else \
            f"state `{model.route_state}`" + (
                f" ({', '.join(f'{k} -> {v}' for k, v in model.route_map)})"
                if model.route_map else "")
        return f"a route by {how} over {', '.join(model.choices)}" + (
            f", then {' -> '.join(model.fallback)}" if model.fallback else "")
    return f"`{model.id}` alone"


def _model_changes(before: ModelNode, after: ModelNode) -> Iterator[tuple[str, str, str]]:
    """A model of the same name that now calls elsewhere (high: the conversation, and the
    key, go to another server), picks or falls back differently, or calls differently."""
    if before == after:
        return
    old_urls = {e[1] for e in _endpoints(before).values() if e[1]}
    new_urls = sorted({e[1] for e in _endpoints(after).values() if e[1]} - old_urls)
    if new_urls:
        yield ("model-endpoint-changed", "high",
               f"model `{after.id}` now sends requests to {', '.join(new_urls)}")
    if _routing(before) != _routing(after):
        yield ("model-routing-changed", "medium",
               f"model `{after.id}` now tries {_order(after)} (was {_order(before)})")
    elif not new_urls:
        yield ("model-settings-changed", "medium",
               f"model `{after.id}` is called with other settings (key, arguments or a "
               "member's endpoint)")


def _summarization(old: Side, new: Side) -> Iterator[Change]:
    """Summarization added, removed or changed (medium: what the models see changes; a
    history directory keeps the conversation's text in files)."""
    before = old.app.compaction if old.app else None
    after = new.app.compaction if new.app else None
    if before == after:
        return
    if after is not None and after.history and (before is None or before.history !=
                                                after.history):
        reason = f"the text of summarized conversations is now kept in files under " \
                 f"`{after.history}`"
        yield Change(SPEC, "summarization-history-changed", "medium", reason,
                     old.where("summarization", "history") if before else None,
                     new.where("summarization", "history"))
    else:
        reason = "conversations are no longer summarized" if after is None else \
            "conversations are now summarized" if before is None else \
            "summarization changed (trigger, what is kept, model or history)"
        yield Change(SPEC, "summarization-changed", "medium", reason,
                     old.where("summarization") if before else None,
                     new.where("summarization") if after else None)


def _covers(entries: tuple[str, ...], entry: str) -> bool:
    """Whether `entry` is one of `entries` or below one of them."""
    return any(PurePosixPath(entry).is_relative_to(PurePosixPath(e)) for e in entries)


def _outside_project(old: Side, new: Side) -> list[Change]:
    """`outside_project` widened (high: the spec may now read or write more outside the
    project) or narrowed (low)."""
    before = old.app.outside_project if old.app else ()
    after = new.app.outside_project if new.app else ()
    changes = [Change(SPEC, "outside-project-widened", "high",
                      f"the spec may now name paths under `{entry}`, outside the project",
                      None, new.where("outside_project", index))
               for index, entry in enumerate(after) if not _covers(before, entry)]
    changes += [Change(SPEC, "outside-project-narrowed", "low",
                       f"the spec may no longer name paths under `{entry}`",
                       old.where("outside_project", index), None)
                for index, entry in enumerate(before) if not _covers(after, entry)]
    return changes


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _state(old: Side, new: Side) -> Iterator[Change]:
    """The initial session state, key by key: what every new session starts with (its
    `${env.X}` are shown as written, never read)."""
    before = dict(old.app.state) if old.app else {}
    after = dict(new.app.state) if new.app else {}
    for key in after:
        if key not in before:
            yield Change(SPEC, "state-added", "medium",
                         f"sessions start with `{key}` = {_short(after[key])}", None,
                         new.where("state", key, key=True))
        elif before[key] != after[key]:
            yield Change(SPEC, "state-changed", "medium",
                         f"sessions start with `{key}` = {_short(after[key])} (was "
                         f"{_short(before[key])})", old.where("state", key),
                         new.where("state", key))
    for key in sorted(before.keys() - after.keys()):
        yield Change(SPEC, "state-removed", "medium", f"sessions no longer start with `{key}`",
                     old.where("state", key, key=True), None)


def compare(old: Side, new: Side) -> list[Change]:
    """Every change from `old` to `new`, per agent, in the new version's order (changes to
    the spec as a whole last)."""
    work = _Compare(old, new)
    work.changes += _outside_project(old, new)
    before, after = old.agents, new.agents
    removed = {n: a for n, a in before.items() if n not in after}
    added = {n: a for n, a in after.items() if n not in before}
    renames = _renames(removed, added)
    for old_name, new_name in renames:
        removed.pop(old_name)
        added.pop(new_name)
        work.changes.append(Change(new_name, "agent-renamed", "low",
                                   f"`{old_name}` is now `{new_name}`",
                                   old.where("agents", old_name, key=True),
                                   new.where("agents", new_name, key=True)))
        work.agent_pair(new_name, old_name, before[old_name], after[new_name])
    for name, agent in added.items():
        work.changes.append(Change(name, "agent-added", "medium", "a new agent runs",
                                   None, new.where("agents", name, key=True)))
        work.renamed = name
        for tool, (path, _) in sorted(capabilities(agent).items()):
            if tool != "execute":
                work.add(name, "tool-added", "high", f"gains `{tool}`: a new capability",
                         None, path)
        if agent.filesystem and "execute" in agent.filesystem.tools:
            work.add(name, "execute-gained", "high", "can run shell commands", None,
                      ("filesystem",))
    for name in removed:
        work.changes.append(Change(name, "agent-removed", "low", "the agent no longer runs",
                                   old.where("agents", name, key=True), None))
    for name in after:
        if name in before:
            work.agent_pair(name, name, before[name], after[name])
    work.changes += _state(old, new)
    work.changes += _summarization(old, new)
    order = {name: index for index, name in enumerate(after)}
    return sorted(work.changes, key=lambda c: (order.get(c.agent, len(order)),
                                               RISKS.index(c.risk), c.change))
