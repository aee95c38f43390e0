"""The diff rules: each has a registered code (AS5xx, `agentspec explain` prints it with its
risk class), the IR fields it reads, and a handler that yields what changed.

Three scopes: `tree` rules pair the agents of the two versions (added, removed, renamed),
`agent` rules compare one agent's two versions, `app` rules the spec as a whole (reported
under `(spec)`). `IGNORED` names the IR fields no rule reads, each with the reason; a test
asserts every field of every IR node is read by a rule or listed there, so a new field
without a rule fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import Any, Literal, assert_never

from agentspec.contract.escapes import ESCAPE
from agentspec.contract.placeholders import placeholders
from agentspec.contract.urls import redacted
from agentspec.diagnostics import codes
from agentspec.diagnostics.codes import Code
from agentspec.ir.tree import (
    AgentNode,
    AgentToolNode,
    AppNode,
    BuiltinToolNode,
    Compaction,
    LlmNode,
    McpToolNode,
    PlannerNode,
    PyObject,
    PythonToolNode,
    ToolNode,
    kind_of,
    tools_of,
)
from agentspec.kinds import KINDS
from agentspec.review.models import (
    model_changed,
    model_endpoint,
    model_routing,
    model_settings,
)
from agentspec.review.prompts import prompts_changed
from agentspec.review.rule import (
    AgentPair,
    AppPair,
    Found,
    Path,
    Rule,
    limit,
    llm_view,
    model_text,
    short,
    text_diff,
)
from agentspec.review.sides import SPEC, Change, Side, Where

__all__ = ["AGENT_RULES", "APP_RULES", "IGNORED", "RULES", "TREE_RULES", "AgentPair", "Found",
           "Rule", "TreeRule", "Trees", "capabilities"]

@dataclass(frozen=True)
class TreeRule:
    """A rule over the pairing of both versions' agents: it reports whole changes."""

    code: Code
    fields: tuple[str, ...]
    check: Callable[[Trees], Iterable[Change]]


# the pairs rules compare ---------------------------------------------------------------


@dataclass
class Trees:
    """The agents of both versions, paired by name (and renames)."""

    old: Side
    new: Side
    before: dict[str, AgentNode] = field(init=False)
    after: dict[str, AgentNode] = field(init=False)
    removed: dict[str, AgentNode] = field(init=False)
    added: dict[str, AgentNode] = field(init=False)
    renames: list[tuple[str, str]] = field(init=False)

    def __post_init__(self) -> None:
        self.before, self.after = self.old.agents, self.new.agents
        self.removed = {n: a for n, a in self.before.items() if n not in self.after}
        self.added = {n: a for n, a in self.after.items() if n not in self.before}
        self.renames = _renames(self.removed, self.added)
        for old_name, new_name in self.renames:
            self.removed.pop(old_name)
            self.added.pop(new_name)


def blank(node: AgentNode) -> AgentNode:
    """No agent: what a new agent is compared with."""
    return LlmNode(name=node.name, file=node.file, line=node.line)


# shared views of an agent ----------------------------------------------------------------


@dataclass(frozen=True)
class _Runs:
    """What runs when a tool is called: `shown` to the reader, compared by `identity` (an
    MCP server's environment and headers are compared, never shown)."""

    shown: str
    identity: Any

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Runs) and self.identity == other.identity

    def __hash__(self) -> int:
        return hash(repr(self.identity))


def _python(obj: PyObject) -> str:
    args = f" {dict(obj.args)}" if obj.args else ""
    return f"{obj.ref}{args}"


def _tool_key(tool: ToolNode) -> str:
    match tool:
        case PythonToolNode():
            return tool.name or f"python {tool.python.ref}"
        case McpToolNode():
            return tool.name or f"mcp {tool.target}"
        case AgentToolNode():
            return f"agent {tool.agent.name}"
        case BuiltinToolNode():
            return tool.name
        case _:
            assert_never(tool)


def _tool_runs(tool: ToolNode) -> _Runs:
    match tool:
        case PythonToolNode():
            return _Runs(f"python {_python(tool.python)}", tool.python)
        case McpToolNode():
            filter_ = None if tool.filter is None else list(tool.filter)
            return _Runs(f"mcp {tool.target} filter={filter_}",
                         (tool.server, tool.filter, tool.prefix))
        case AgentToolNode():
            return _Runs(f"agent {tool.agent.name}", f"agent {tool.agent.name}")
        case BuiltinToolNode():
            return _Runs(f"builtin {tool.name}", f"builtin {tool.name}")
        case _:
            assert_never(tool)


def capabilities(node: AgentNode) -> dict[str, tuple[Path, _Runs]]:
    """Tool -> (the field that gives it, what runs); agents it calls as tools (or as
    single_turn / task sub-agents) count as tools `agent NAME`."""
    found: dict[str, tuple[Path, _Runs]] = {}
    where: tuple[str, ...] = ("worker", "tools") if isinstance(node, PlannerNode) else ("tools",)
    for index, tool in enumerate(tools_of(node)):
        found[_tool_key(tool)] = ((*where, index), _tool_runs(tool))
    for child in node.children:
        if child.mode in ("single_turn", "task"):
            runs = f"agent {child.name}"
            found[runs] = (("sub_agents",), _Runs(runs, runs))
    llm = llm_view(node)
    harness = _Runs("harness", "harness")
    for name in llm.filesystem.tools if llm.filesystem else ():
        found[name] = (("filesystem",), harness)
    if llm.todos:
        found["write_todos"] = found["read_todos"] = (("todos",), harness)
    if llm.task:
        found["task"] = (("task",), harness)
    return found


def _approvals(node: AgentNode) -> dict[str, tuple[str, ...]]:
    llm = llm_view(node)
    found = {name: approval.decisions for name, approval in llm.approvals}
    for tool in llm.tools:
        if isinstance(tool, (PythonToolNode, McpToolNode)) and tool.approval is not None:
            found[_tool_key(tool)] = tool.approval.decisions
    return found


def _runs_commands(node: AgentNode) -> bool:
    filesystem = llm_view(node).filesystem
    return bool(filesystem and "execute" in filesystem.tools)


# tree rules ----------------------------------------------------------------------------


def _looks(node: AgentNode) -> tuple[Any, ...]:
    """What an agent looks like, to recognize it under a new name."""
    llm = llm_view(node)
    return kind_of(node), llm.instruction, node.description, [t.name for t in llm.tools]


def _renames(removed: dict[str, AgentNode], added: dict[str, AgentNode]
             ) -> list[tuple[str, str]]:
    """(old, new) pairs of agents that look the same under a new name."""
    pairs: list[tuple[str, str]] = []
    for old_name, old in removed.items():
        for new_name, new in added.items():
            same = _looks(old) == _looks(new)
            if same and new_name not in [n for _, n in pairs]:
                pairs.append((old_name, new_name))
                break
    return pairs


def _tree_change(trees: Trees, name: str, code: Code, reason: str, old: str | None,
                 new: str | None) -> Change:
    return Change(name, code.name, code.risk or "", reason,
                  trees.old.where("agents", old, key=True) if old else None,
                  trees.new.where("agents", new, key=True) if new else None, "", code.code)


def _added(trees: Trees) -> Iterator[Change]:
    for name in trees.added:
        yield _tree_change(trees, name, codes.AGENT_ADDED, "a new agent runs", None, name)


def _removed(trees: Trees) -> Iterator[Change]:
    for name in trees.removed:
        yield _tree_change(trees, name, codes.AGENT_REMOVED, "the agent no longer runs",
                           name, None)


def _spec_added(trees: Trees) -> Iterator[Change]:
    if trees.old.absent and not trees.new.absent:
        yield Change(SPEC, codes.SPEC_ADDED.name, codes.SPEC_ADDED.risk or "",
                     f"the spec is new: {trees.old.label} does not exist", None,
                     trees.new.where(), "", codes.SPEC_ADDED.code)


def _spec_removed(trees: Trees) -> Iterator[Change]:
    if trees.new.absent and not trees.old.absent:
        yield Change(SPEC, codes.SPEC_REMOVED.name, codes.SPEC_REMOVED.risk or "",
                     f"the spec is gone: {trees.new.label} does not exist", trees.old.where(),
                     None, "", codes.SPEC_REMOVED.code)


def _renamed(trees: Trees) -> Iterator[Change]:
    for old_name, new_name in trees.renames:
        yield _tree_change(trees, new_name, codes.AGENT_RENAMED,
                           f"`{old_name}` is now `{new_name}`", old_name, new_name)


# agent rules ---------------------------------------------------------------------------


def _kind(pair: AgentPair) -> Iterator[Found]:
    was, now = kind_of(pair.before), kind_of(pair.after)
    if was != now:
        yield Found("medium", f"`{was}` became `{now}`", ("kind",),
                    ("kind",))


def _tool_added(pair: AgentPair) -> Iterator[Found]:
    old, new = capabilities(pair.before), capabilities(pair.after)
    for tool in sorted(new.keys() - old.keys() - {"execute"}):  # execute: AS512
        yield Found("high", f"gains `{tool}`: a new capability", None, new[tool][0])


def _tool_removed(pair: AgentPair) -> Iterator[Found]:
    old, new = capabilities(pair.before), capabilities(pair.after)
    for tool in sorted(old.keys() - new.keys() - {"execute"}):
        yield Found("low", f"loses `{tool}`", old[tool][0], None)


def _tool_changed(pair: AgentPair) -> Iterator[Found]:
    old, new = capabilities(pair.before), capabilities(pair.after)
    for tool in sorted(old.keys() & new.keys()):
        was, now = old[tool][1], new[tool][1]
        if was == now:
            continue
        reason = f"`{tool}` now runs {now.shown} (was {was.shown})" if now.shown != was.shown \
            else f"`{tool}` runs {now.shown} set up differently (its environment, headers, " \
            "working directory, prefix or module directory)"
        # positioned at the definition, where it changed
        yield Found("high", reason,
                    pair.old.defined("tools", tool) or old[tool][0],
                    pair.new.defined("tools", tool) or new[tool][0])


def _approval_dropped(pair: AgentPair) -> Iterator[Found]:
    old, new = _approvals(pair.before), _approvals(pair.after)
    still = capabilities(pair.after).keys() | {t.name for t in pair.new_llm.tools}
    for tool in sorted(old.keys() - new.keys()):
        if tool in still:  # else the tool itself is gone, and with it what needed approval
            yield Found("high", f"`{tool}` no longer waits for a person's approval",
                        ("interrupt_on", tool), ("interrupt_on",), key=True)


def _approval_added(pair: AgentPair) -> Iterator[Found]:
    old, new = _approvals(pair.before), _approvals(pair.after)
    for tool in sorted(new.keys() - old.keys()):
        yield Found("low", f"`{tool}` now waits for approval", ("interrupt_on",),
                    ("interrupt_on", tool), key=True)


def _approval_changed(pair: AgentPair) -> Iterator[Found]:
    old, new = _approvals(pair.before), _approvals(pair.after)
    for tool in sorted(old.keys() & new.keys()):
        if old[tool] != new[tool]:
            gained = set(new[tool]) - set(old[tool])
            yield Found("medium" if gained else "low",
                        f"`{tool}` decisions {list(old[tool])} -> {list(new[tool])}",
                        ("interrupt_on", tool), ("interrupt_on", tool), key=True)


def _execute_gained(pair: AgentPair) -> Iterator[Found]:
    if _runs_commands(pair.after) and not _runs_commands(pair.before):
        yield Found("high", "can now run shell commands", None, ("filesystem",))


def _execute_lost(pair: AgentPair) -> Iterator[Found]:
    if _runs_commands(pair.before) and not _runs_commands(pair.after):
        yield Found("low", "can no longer run shell commands", ("filesystem",), None)


def _backends(pair: AgentPair) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Both versions' backend definitions, when both have file tools and they differ."""
    before, after = pair.old_llm.filesystem, pair.new_llm.filesystem
    if before is None or after is None or before.backend != after.backend:
        return None
    return dict(before.definitions), dict(after.definitions)


_BACKEND_LIMITS = ("timeout", "max_output_bytes")
_SANDBOX_LIMITS = ("max_processes", "max_file_bytes", "max_memory_mb", "tmp_size_mb",
                   "max_workspace_mb")


def _backend_at(pair: AgentPair, name: str, *under: str) -> tuple[Path | Where, Path | Where]:
    """Where backend `name` (or a key under it) is defined in both versions: its entry under
    `backends`, else the agent's `filesystem`."""
    return (pair.old.defined("backends", name, *under) or ("filesystem",),
            pair.new.defined("backends", name, *under) or ("filesystem",))


def _backend_changed(pair: AgentPair) -> Iterator[Found]:
    """Another backend, or the same one set up differently (a root, the environment,
    routes); its limits and hard links are their own rules."""
    before, after = pair.old_llm.filesystem, pair.new_llm.filesystem
    if before is None or after is None:
        return
    if before.backend != after.backend:
        yield Found("medium", f"files: backend `{before.backend}` -> `{after.backend}`",
                    ("filesystem",), ("filesystem",))
        return
    old, new = dict(before.definitions), dict(after.definitions)
    rest = (*_BACKEND_LIMITS, "hard_links", "network", "mounts", "allow_sockets",
            "allow_project_files", *_SANDBOX_LIMITS)
    for name in sorted(old.keys() | new.keys()):
        if _shared_now(old.get(name, {}), new.get(name, {})):
            continue  # AS580's
        mine_old = {k: v for k, v in old.get(name, {}).items() if k not in rest}
        mine_new = {k: v for k, v in new.get(name, {}).items() if k not in rest}
        keys = sorted(k for k in mine_old.keys() | mine_new.keys()
                      if mine_old.get(k) != mine_new.get(k))
        if keys:
            yield Found("medium", f"backend `{name}` is set up differently (root, "
                        "environment, routes or whose conversation files it shows)",
                        *_backend_at(pair, name, keys[0]))


def _shared_now(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    return old.get("conversation_files") != "shared" and \
        new.get("conversation_files") == "shared"


def _definitions(node: AgentNode) -> dict[str, Any]:
    """The backends an agent's file tools reach, by name (none without file tools)."""
    filesystem = llm_view(node).filesystem
    return {} if filesystem is None else dict(filesystem.definitions)


def _reached_at(pair: AgentPair, name: str, *under: str
                ) -> tuple[Path | Where | None, Path | Where]:
    """`_backend_at`, with no old position when the old version of the agent did not reach
    backend `name` (a new agent, new file tools, another backend)."""
    old_at, new_at = _backend_at(pair, name, *under)
    return (old_at if name in _definitions(pair.before) else None), new_at


def _conversations_shared(pair: AgentPair) -> Iterator[Found]:
    """Conversation files of every user now shown to every user's file tools: by a backend
    the agent reaches, compared with what it reached before (nothing, for a new agent)."""
    old, new = _definitions(pair.before), _definitions(pair.after)
    for name in sorted(new):
        if _shared_now(old.get(name, {}), new[name]):
            yield Found("high", f"backend `{name}` now shows every user's conversation files "
                        "(histories, evicted tool results) to every user's file tools",
                        *_reached_at(pair, name, "conversation_files"))


def _backend_limits(pair: AgentPair) -> Iterator[Found]:
    both = _backends(pair)
    if both is None:
        return
    name = pair.new_llm.filesystem.backend if pair.new_llm.filesystem else ""
    before, after = both[0].get(name, {}), both[1].get(name, {})
    for key in _BACKEND_LIMITS:
        yield from limit(f"backend `{name}` {key}", before.get(key), after.get(key),
                         *_backend_at(pair, name, key))


def _hard_links(pair: AgentPair, allowed: bool) -> Iterator[Found]:
    """`hard_links: allow` on any backend the agent reaches (a route's too); gained is
    judged against what the agent reached before (nothing, for a new agent), lost only on
    a backend it still has."""
    if allowed:
        old, new = _definitions(pair.before), _definitions(pair.after)
        for backend in sorted(new):
            if new[backend].get("hard_links") == "allow" and \
                    old.get(backend, {}).get("hard_links") != "allow":
                yield Found("high", f"backend `{backend}` now reads files with several names "
                            "(hard links), which may lie outside its root",
                            *_reached_at(pair, backend, "hard_links"))
        return
    both = _backends(pair)
    if both is None:
        return
    old, new = both
    for backend in sorted(old.keys() & new.keys()):
        was = old[backend].get("hard_links") == "allow"
        now = new[backend].get("hard_links") == "allow"
        if was and not now:
            yield Found("low", f"backend `{backend}` no longer reads files with several names "
                        "(hard links)", *_backend_at(pair, backend, "hard_links"))


def _executor(node: AgentNode) -> tuple[str, dict[str, Any]] | None:
    """The backend that runs the agent's commands (a composite's default), by name with its
    definition, when it has file tools."""
    filesystem = llm_view(node).filesystem
    if filesystem is None:
        return None
    definitions: dict[str, dict[str, Any]] = dict(filesystem.definitions)
    name = filesystem.backend
    seen: set[str] = set()
    while name in definitions and definitions[name]["type"] == "composite" and \
            definitions[name]["default"] not in seen:
        seen.add(definitions[name]["default"])
        name = definitions[name]["default"]
    return (name, definitions[name]) if name in definitions else None


#: what commands that did not run reached: as a sandbox that lets nothing in
_NOTHING: Mapping[str, Any] = MappingProxyType({"type": "sandbox"})


@dataclass(frozen=True)
class _Sandboxes:
    """Where the agent's commands run in each version: a sandbox's definition, else None.
    When the old version ran no commands (a new agent, or one that gains `execute`),
    `before` is `_NOTHING`, so all its commands can reach is a gain."""

    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    old_at: Path | Where | None
    new_at: Path | Where
    ran: bool  # the old version ran commands


def _sandboxes(pair: AgentPair, *under: str) -> _Sandboxes | None:
    """None when the new version runs no commands; the positions are the sandboxes'
    definitions (or `under` them), else the agent's files (none in the old version when it
    ran no commands)."""
    after = _executor(pair.after)
    if after is None or not _runs_commands(pair.after):
        return None
    sandboxed = after[1]["type"] == "sandbox"
    new_at = (pair.new.defined("backends", after[0], *under) if sandboxed else None) or \
        ("filesystem",)
    now = after[1] if sandboxed else None
    before = _executor(pair.before)
    if before is None or not _runs_commands(pair.before):
        return _Sandboxes(_NOTHING, now, None, new_at, ran=False)
    was = before[1] if before[1]["type"] == "sandbox" else None
    old_at = pair.old.defined("backends", before[0], *under) if was is not None else None
    return _Sandboxes(was, now, old_at or ("filesystem",), new_at, ran=True)


def _sandbox_dropped(pair: AgentPair, dropped: bool) -> Iterator[Found]:
    both = _sandboxes(pair)
    if both is None:
        return
    if both.before is not None and both.after is not None:
        yield from _project_files(pair, both.before, both.after, dropped)
        return
    if not both.ran or (both.before is None) == (both.after is None):
        return  # new commands outside a sandbox: AS512's
    if dropped and both.after is None:
        yield Found("high", "commands no longer run in a sandbox: they reach every file, "
                    "process and network the agent's user can", ("filesystem",), ("filesystem",))
    elif not dropped and both.before is None:
        yield Found("low", "commands now run in a sandbox", ("filesystem",), ("filesystem",))


def _project_files(pair: AgentPair, old: Mapping[str, Any], new: Mapping[str, Any],
                   dropped: bool) -> Iterator[Found]:
    """`allow_project_files` turned on lets commands change what the host runs unsandboxed:
    as good as no sandbox for that code."""
    was, now = bool(old.get("allow_project_files")), bool(new.get("allow_project_files"))
    if was == now:
        return
    at = _sandboxes(pair, "allow_project_files")
    where = (at.old_at, at.new_at) if at is not None else (("filesystem",), ("filesystem",))
    if dropped and now:
        yield Found("high", "sandboxed commands may now change the project's own files (the "
                    "spec, its Python modules, the built package, stores), which the host "
                    "runs unsandboxed", *where)
    elif not dropped and was:
        yield Found("low", "sandboxed commands may no longer change the project's own files",
                    *where)


def _sandbox_network(pair: AgentPair, gained: bool) -> Iterator[Found]:
    both = _sandboxes(pair, "network")
    if both is None or both.before is None or both.after is None:
        return
    was, now = bool(both.before.get("network")), bool(both.after.get("network"))
    if gained and now and not was:
        yield Found("high", "sandboxed commands can now reach the network, the host's "
                    "loopback services included", both.old_at, both.new_at)
    elif not gained and was and not now:
        yield Found("low", "sandboxed commands no longer reach the network", both.old_at,
                    both.new_at)


def _mounts(definition: Mapping[str, Any]) -> dict[str, str]:
    return {mount["target"]: mount["source"] for mount in definition.get("mounts", ())}


def _sandbox_mounts(pair: AgentPair, added: bool) -> Iterator[Found]:
    both = _sandboxes(pair, "mounts")
    if both is None or both.before is None or both.after is None:
        return
    old, new = _mounts(both.before), _mounts(both.after)
    was, now = bool(both.before.get("allow_sockets")), bool(both.after.get("allow_sockets"))
    if was != now:
        at = _sandboxes(pair, "allow_sockets") or both
        if added and now:
            yield Found("high", "sandboxed commands can now talk to host services through "
                        "Unix sockets and FIFOs in their mounts (`allow_sockets`)", at.old_at,
                        at.new_at)
        elif not added and was:
            yield Found("low", "sandboxed commands no longer reach Unix sockets and FIFOs in "
                        "their mounts", at.old_at, at.new_at)
    if added:
        for target in sorted(new):
            if old.get(target) != new[target]:
                yield Found("high", f"sandboxed commands now read the host directory "
                            f"`{new[target]}` at `{target}`", both.old_at, both.new_at)
    else:
        for target in sorted(old.keys() - new.keys()):
            yield Found("low", f"sandboxed commands no longer see `{target}`", both.old_at,
                        both.new_at)


def _sandbox_limits(pair: AgentPair) -> Iterator[Found]:
    both = _sandboxes(pair)
    if both is None or not both.ran or both.before is None or both.after is None:
        return
    for key in _SANDBOX_LIMITS:
        at = _sandboxes(pair, key)
        assert at is not None
        yield from limit(f"sandbox {key}", both.before.get(key), both.after.get(key),
                         at.old_at, at.new_at)


def braces_note(old: str, new: str) -> str:
    """Said once when a `{{key}}` became `{key}` or back: the same text in ADK, where any
    run of braces reads state; here `{{key}}` is the literal text `{key}`."""
    def escaped(text: str) -> set[str]:
        return {m.group(1) for m in ESCAPE.finditer(text)}

    def read(text: str) -> set[str]:
        return {p.key + "?" * p.optional for p in placeholders(text)}

    changed = sorted((escaped(old) & read(new)) | (read(old) & escaped(new)))
    if not changed:
        return ""
    shown = ", ".join(f"`{{{{{key}}}}}` <-> `{{{key}}}`" for key in changed)
    return (f" ({shown}: here `{{{{key}}}}` is the literal text `{{key}}` and `{{key}}` "
            "reads state; ADK reads both as state)")


def _instruction(pair: AgentPair) -> Iterator[Found]:
    """The instruction's unified diff; never the text of a file outside the project (a diff
    is posted where anyone can read it)."""
    before, after = pair.old_llm, pair.new_llm
    if (before.instruction or "") == (after.instruction or ""):
        return
    old_path = ("instruction_file",) if before.instruction_file else ("instruction",)
    new_path = ("instruction_file",) if after.instruction_file else ("instruction",)
    if pair.old.outside(before.instruction_file) or pair.new.outside(after.instruction_file):
        yield Found("medium", "the instruction changed; it is read from a file outside the "
                    "project, so its text is not shown", old_path, new_path)
        return
    yield Found("medium", "the instruction changed"
                + braces_note(before.instruction or "", after.instruction or ""),
                old_path, new_path, text_diff(before.instruction, after.instruction,
                           f"{pair.old.label}:{pair.old_name}", f"{pair.new.label}:{pair.name}"))


def _result_limit(pair: AgentPair) -> Iterator[Found]:
    yield from limit("tool_result_limit", pair.old_llm.result_limit,
                     pair.new_llm.result_limit, ("tool_result_limit",), ("tool_result_limit",))


def _execution_mode(pair: AgentPair) -> Iterator[Found]:
    if pair.before.offline != pair.after.offline:
        yield Found("medium", "now runs as a background job" if pair.after.offline
                    else "now runs in real time", ("execution_mode",), ("execution_mode",))


def _chat_children(node: AgentNode) -> list[str]:
    return [c.name for c in node.children if c.mode not in ("single_turn", "task")]


def _sub_agents(pair: AgentPair) -> Iterator[Found]:
    old, new = _chat_children(pair.before), _chat_children(pair.after)
    if old != new:
        yield Found("medium", f"sub-agents {old} -> {new}", ("sub_agents",), ("sub_agents",))


def _same_field(field_name: str, label: str) -> Callable[[AgentPair], Iterator[Found]]:
    """A field of an LLM agent compared as a whole."""
    def check(pair: AgentPair) -> Iterator[Found]:
        if getattr(pair.old_llm, field_name) != getattr(pair.new_llm, field_name):
            yield Found("medium", f"the {label} changed", (field_name,), (field_name,))
    return check


def _callbacks(pair: AgentPair) -> tuple[dict[str, tuple[PyObject, ...]],
                                         dict[str, tuple[PyObject, ...]]]:
    return dict(pair.before.callbacks), dict(pair.after.callbacks)


def _shown(objects: Iterable[PyObject]) -> str:
    return ", ".join(_python(o) for o in objects)


def _callback_added(pair: AgentPair) -> Iterator[Found]:
    old, new = _callbacks(pair)
    for hook in new:
        if not old.get(hook) and new[hook]:
            yield Found("high", f"`{hook}` now runs {_shown(new[hook])}", None,
                        ("callbacks", hook))


def _callback_removed(pair: AgentPair) -> Iterator[Found]:
    old, new = _callbacks(pair)
    for hook in old:
        if old[hook] and not new.get(hook):
            yield Found("high", f"`{hook}` no longer runs {_shown(old[hook])}",
                        ("callbacks", hook), ("callbacks",))


def _callback_changed(pair: AgentPair) -> Iterator[Found]:
    old, new = _callbacks(pair)
    for hook in new:
        if old.get(hook) and new[hook] and old[hook] != new[hook]:
            reason = f"`{hook}` now runs {_shown(new[hook])} (was {_shown(old[hook])})"
            if _shown(new[hook]) == _shown(old[hook]):
                reason = f"`{hook}` runs {_shown(new[hook])} from another module directory"
            yield Found("high", reason, ("callbacks", hook), ("callbacks", hook))


def _setting_where(side: Side, agent: str, section: str, key: str) -> Path | Where | None:
    """Where a generation or thinking setting is: the agent's own, else its named
    model's."""
    if side.has("agents", agent, section, key):
        return (section, key)
    spec = side.result.spec
    entry = getattr(spec.agents.get(agent), "model", None) if spec is not None else None
    if isinstance(entry, str) and side.has("models", entry, section, key):
        return side.where("models", entry, section, key)
    return (section,) if side.has("agents", agent, section) else ("model",)


def _settings(section: Literal["generate", "thinking"]
              ) -> Callable[[AgentPair], Iterator[Found]]:
    def check(pair: AgentPair) -> Iterator[Found]:
        old = dict(getattr(pair.old_llm, section))
        new = dict(getattr(pair.new_llm, section))
        for key in [*new, *(k for k in old if k not in new)]:
            if old.get(key) != new.get(key):
                yield Found("medium", f"{section}.{key} {short(old.get(key))} -> "
                            f"{short(new.get(key))}",
                            _setting_where(pair.old, pair.old_name, section, key),
                            _setting_where(pair.new, pair.name, section, key))
    return check


def _description(pair: AgentPair) -> Iterator[Found]:
    if pair.before.description != pair.after.description:
        yield Found("medium", "the description changed (parents route on it)",
                    ("description",), ("description",),
                    text_diff(pair.before.description, pair.after.description,
                               f"{pair.old.label}:{pair.old_name}",
                               f"{pair.new.label}:{pair.name}"))


def _include_contents(pair: AgentPair) -> Iterator[Found]:
    was = pair.old_llm.include_contents or "default"
    now = pair.new_llm.include_contents or "default"
    if was != now:
        yield Found("medium", f"include_contents {was} -> {now}", ("include_contents",),
                    ("include_contents",))


def _transfer(pair: AgentPair) -> Iterator[Found]:
    """The flags an agent is written with; an agent called as a tool (or queued) never
    transfers, and becoming one is reported by AS506, AS519 and AS520."""
    if (pair.before.mode, pair.before.offline) != (pair.after.mode, pair.after.offline):
        return
    for target in ("parent", "peers"):
        flag = f"disallow_transfer_to_{target}"
        was, now = bool(getattr(pair.old_llm, flag)), bool(getattr(pair.new_llm, flag))
        if was != now:
            yield Found("medium", f"may no longer transfer to its {target}" if now
                        else f"may now transfer to its {target}", (flag,), (flag,))


def _planner(pair: AgentPair) -> Iterator[Found]:
    if pair.old_llm.adk_planner != pair.new_llm.adk_planner:
        yield Found("medium", f"planner {pair.old_llm.adk_planner} -> {pair.new_llm.adk_planner}",
                    ("planner",), ("planner",))


def _memory_edit(pair: AgentPair, gained: bool) -> Iterator[Found]:
    was, now = pair.old_llm, pair.new_llm
    old = {f for f, at in zip(was.memory, was.memory_edit_at, strict=True) if at}
    new = {f for f, at in zip(now.memory, now.memory_edit_at, strict=True) if at}
    for name in sorted(new - old if gained else old - new):
        yield (Found("high", f"can now rewrite memory file `{name}`, which later runs obey",
                     ("memory",) if was.memory else None, ("memory",)) if gained else
               Found("low", f"can no longer rewrite memory file `{name}`", ("memory",),
                     ("memory",)))


def _skill_discovery(pair: AgentPair) -> Iterator[Found]:
    if pair.old_llm.skill_discovery != pair.new_llm.skill_discovery:
        yield Found("medium", f"skills are offered {pair.old_llm.skill_discovery} -> "
                    f"{pair.new_llm.skill_discovery}", ("skills",), ("skills",))


def _task_agents(pair: AgentPair) -> Iterator[Found]:
    """The subagent types `task` offers (gaining `task` itself is AS506)."""
    old = {kind: agent.name for kind, agent in pair.old_llm.task}
    new = {kind: agent.name for kind, agent in pair.new_llm.task}
    if old and new and old != new:
        yield Found("medium", f"task agents {old} -> {new}", ("task",), ("task",))


# app rules -----------------------------------------------------------------------------


def _covers(entries: tuple[str, ...], entry: str) -> bool:
    """Whether `entry` is one of `entries` or below one of them."""
    return any(PurePosixPath(entry).is_relative_to(PurePosixPath(e)) for e in entries)


def _outside(pair: AppPair) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (pair.old.app.outside_project if pair.old.app else (),
            pair.new.app.outside_project if pair.new.app else ())


def _widened(pair: AppPair) -> Iterator[Found]:
    """`outside_project` widened: the spec may now read or write more outside the
    project."""
    before, after = _outside(pair)
    for index, entry in enumerate(after):
        if not _covers(before, entry):
            yield Found("high", f"the spec may now name paths under `{entry}`, outside the "
                        "project", None, ("outside_project", index))


def _narrowed(pair: AppPair) -> Iterator[Found]:
    before, after = _outside(pair)
    for index, entry in enumerate(before):
        if not _covers(after, entry):
            yield Found("low", f"the spec may no longer name paths under `{entry}`",
                        ("outside_project", index), None)


@dataclass(frozen=True)
class _Supplied:
    """A `state:` key without a value, which the session's creator supplies."""

    description: str | None


def _state(pair: AppPair) -> tuple[dict[str, Any], dict[str, Any]]:
    """The declared session state: initial values (their `${env.X}` shown as written, never
    read) and, as `_Supplied`, the keys the session's creator supplies."""
    def declared(app: AppNode | None) -> dict[str, Any]:
        if app is None:
            return {}
        return {**dict(app.state), **{key: _Supplied(about) for key, about in app.inputs}}
    return declared(pair.old.app), declared(pair.new.app)


def _start(key: str, value: Any) -> str:
    if isinstance(value, _Supplied):
        return f"sessions must be created with `{key}` (their creator supplies it)"
    return f"sessions start with `{key}` = {short(value)}"


def _state_added(pair: AppPair) -> Iterator[Found]:
    before, after = _state(pair)
    for key in after:
        if key not in before:
            yield Found("medium", _start(key, after[key]), None, ("state", key), key=True)


def _state_changed(pair: AppPair) -> Iterator[Found]:
    before, after = _state(pair)
    for key in after:
        if key in before and before[key] != after[key]:
            was = "supplied by their creator" if isinstance(before[key], _Supplied) \
                else short(before[key])
            if isinstance(before[key], _Supplied) and isinstance(after[key], _Supplied):
                reason = f"the description of `{key}`, which sessions are created with, changed"
            else:
                reason = f"{_start(key, after[key])} (was {was})"
            yield Found("medium", reason, ("state", key), ("state", key))


def _state_removed(pair: AppPair) -> Iterator[Found]:
    before, after = _state(pair)
    for key in sorted(before.keys() - after.keys()):
        reason = f"sessions no longer need `{key}` from their creator" if isinstance(
            before[key], _Supplied) else f"sessions no longer start with `{key}`"
        yield Found("medium", reason, ("state", key), None, key=True)


def _plugins(pair: AppPair) -> tuple[dict[tuple[str, int], tuple[int, PyObject]],
                                     dict[tuple[str, int], tuple[int, PyObject]]]:
    """Plugins by (reference, occurrence), with their index."""
    def keyed(plugins: tuple[PyObject, ...]) -> dict[tuple[str, int], tuple[int, PyObject]]:
        seen: dict[str, int] = {}
        found = {}
        for index, plugin in enumerate(plugins):
            seen[plugin.ref] = seen.get(plugin.ref, -1) + 1
            found[(plugin.ref, seen[plugin.ref])] = (index, plugin)
        return found
    return (keyed(pair.old.app.plugins if pair.old.app else ()),
            keyed(pair.new.app.plugins if pair.new.app else ()))


def _plugin_added(pair: AppPair) -> Iterator[Found]:
    old, new = _plugins(pair)
    for key in new.keys() - old.keys():
        index, plugin = new[key]
        yield Found("high", f"plugin {_python(plugin)} now sees every call", None,
                    ("plugins", index))


def _plugin_removed(pair: AppPair) -> Iterator[Found]:
    old, new = _plugins(pair)
    for key in sorted(old.keys() - new.keys()):
        index, plugin = old[key]
        yield Found("high", f"plugin {_python(plugin)} no longer runs", ("plugins", index),
                    ("plugins",))


def _plugin_changed(pair: AppPair) -> Iterator[Found]:
    old, new = _plugins(pair)
    for key in sorted(old.keys() & new.keys()):
        (was_at, was), (now_at, now) = old[key], new[key]
        if was != now:
            reason = f"plugin {_python(now)} (was {_python(was)})" if _python(now) != \
                _python(was) else f"plugin {now.ref} is found in another module directory"
            yield Found("high", reason, ("plugins", was_at), ("plugins", now_at))


def _global_instruction(pair: AppPair) -> Iterator[Found]:
    was = pair.old.app.global_instruction if pair.old.app else None
    now = pair.new.app.global_instruction if pair.new.app else None
    if (was or "") != (now or ""):
        yield Found("medium", "the global instruction (every agent's) changed",
                    ("global_instruction",), ("global_instruction",),
                    text_diff(was, now, f"{pair.old.label}:global_instruction",
                               f"{pair.new.label}:global_instruction"))


def _compactions(pair: AppPair) -> tuple[Compaction | None, Compaction | None]:
    return (pair.old.app.compaction if pair.old.app else None,
            pair.new.app.compaction if pair.new.app else None)


def _summarization(pair: AppPair) -> Iterator[Found]:
    """When and how conversations are compacted (where their text is kept is AS563's)."""
    was, now = (None if c is None else (c.settings, c.model) for c in _compactions(pair))
    if was != now:
        def shown(value: Any) -> str:
            if value is None:
                return "none"
            settings, model = value
            shown = ", ".join(f"{k}={v}" for k, v in settings)
            return shown + (f", model {model_text(model)}" if model else "")
        yield Found("medium", f"compaction {shown(was)} -> {shown(now)}", ("summarization",),
                    ("summarization",))


def _summarization_history(pair: AppPair) -> Iterator[Found]:
    was, now = (None if c is None else c.history for c in _compactions(pair))
    if was == now:
        return
    where = ("summarization", "history")
    if now is None:
        yield Found("medium", f"summarized conversations are no longer kept in files (were "
                    f"under `{was}`)", where, where)
    else:
        yield Found("medium", f"the text of summarized conversations is now kept in files "
                    f"under `{now}`" + (f" (was `{was}`)" if was else ""),
                    where if _compactions(pair)[0] else None, where)


def _jobs(pair: AppPair) -> tuple[Any, Any]:
    return (pair.old.app.jobs if pair.old.app else None,
            pair.new.app.jobs if pair.new.app else None)


def _jobs_store(pair: AppPair) -> Iterator[Found]:
    """Another store (a store that appears or goes with offline agents is AS519's)."""
    was, now = _jobs(pair)
    if was is not None and now is not None and (was.store, was.sqlite_path) != (
            now.store, now.sqlite_path):
        yield Found("medium", f"jobs are kept in {now.store} (was {was.store})",
                    ("jobs", "store"), ("jobs", "store"))


def _jobs_limits(pair: AppPair) -> Iterator[Found]:
    was, now = _jobs(pair)
    if was is not None and now is not None:
        for key in ("max_attempts", "lease_seconds"):
            yield from limit(f"jobs {key}", getattr(was, key), getattr(now, key),
                              ("jobs", key), ("jobs", key))


def _jobs_webhook(pair: AppPair) -> Iterator[Found]:
    was, now = _jobs(pair)
    old_hook, new_hook = (was.webhook if was else None), (now.webhook if now else None)
    old_headers = dict(was.headers) if was else {}
    new_headers = dict(now.headers) if now else {}
    where = ("jobs", "notify")
    if new_hook and old_hook != new_hook:
        yield Found("high", f"job results are now posted to {new_hook}"
                    + (f" (was {old_hook})" if old_hook else ""), where, where)
    elif old_hook and not new_hook:
        yield Found("low", f"job results are no longer posted to {old_hook}", where, where)
    elif new_hook and old_headers != new_headers:
        yield Found("high", f"the headers posted to {new_hook} changed ({sorted(old_headers)}"
                    f" -> {sorted(new_headers)}; values are not shown)", where, where)


def _on_done(pair: AppPair) -> Iterator[Found]:
    """What a finished job does (no job store: nothing waits, as with `wait`)."""
    was, now = _jobs(pair)
    before = was.on_done if was is not None else "wait"
    after = now.on_done if now is not None else "wait"
    if before != after:
        reason = ("a worker now runs the parent for a turn, with no user message, as soon as "
                  "a job finishes" if after == "resume" else "finished jobs now wait for the "
                  "conversation's next turn; no worker runs the parent")
        yield Found("medium", f"{reason} (`jobs.on_done: {after}`, was `{before}`)",
                    ("jobs", "on_done"), ("jobs", "on_done"))


def _sessions(pair: AppPair) -> Iterator[Found]:
    """Where conversations are kept (the URLs redacted: one may hold a password)."""
    was = pair.old.app.sessions if pair.old.app else None
    now = pair.new.app.sessions if pair.new.app else None
    if was != now:
        def shown(store: Any) -> str:
            return "memory" if store is None else redacted(store.url)
        yield Found("medium", f"conversations are kept in {shown(now)} (was {shown(was)}): "
                    "front ends and workers must use the same store", ("sessions",),
                    ("sessions",))


def _app_name(pair: AppPair) -> Iterator[Found]:
    was = pair.old.app.name if pair.old.app else None
    now = pair.new.app.name if pair.new.app else None
    if was != now:
        yield Found("medium", f"the app `{was}` is now `{now}`: sessions stored under the old "
                    "name are not seen", ("name",), ("name",))


# the registry --------------------------------------------------------------------------

_TOOLS = ("LlmFields.tools", "AgentFields.children", "AgentFields.mode", "LlmFields.todos",
          "LlmFields.task", "LlmFields.filesystem", "PlannerRoles.worker_tools",
          "FilesystemNode.tools", "PythonToolNode.name", "PythonToolNode.python",
          "McpToolNode.name", "McpToolNode.server", "McpToolNode.filter", "McpToolNode.prefix",
          "McpStdio.*", "McpHttp.*", "BuiltinToolNode.name", "AgentToolNode.agent", "PyObject.*")
#: the backend that runs an agent's commands, and whether it does
_SANDBOX = ("FilesystemNode.backend", "FilesystemNode.definitions", "FilesystemNode.tools")
_ROUTING = ("LlmFields.model", "ModelNode.members", "ModelNode.choices", "ModelNode.fallback",
            "ModelNode.route_state", "ModelNode.route_map", "ModelNode.route_python",
            "PyObject.*")
_APPROVALS = ("LlmFields.approvals", "PythonToolNode.approval", "McpToolNode.approval",
              "Approval.decisions")

TREE_RULES: tuple[TreeRule, ...] = (
    TreeRule(codes.AGENT_ADDED, ("AppNode.root", "AgentFields.name"), _added),
    TreeRule(codes.AGENT_REMOVED, ("AppNode.root", "AgentFields.name"), _removed),
    TreeRule(codes.AGENT_RENAMED, ("AgentFields.name",), _renamed),
    TreeRule(codes.SPEC_ADDED, ("AppNode.root",), _spec_added),
    TreeRule(codes.SPEC_REMOVED, ("AppNode.root",), _spec_removed),
)

AGENT_RULES: tuple[Rule[AgentPair], ...] = (
    Rule(codes.KIND_CHANGED, ("WorkflowNode.kind",), _kind),  # and the node's class
    Rule(codes.MODEL_CHANGED, ("LlmFields.model", "ModelNode.id", "ModelNode.provider"),
         model_changed),
    Rule(codes.TOOL_ADDED, _TOOLS, _tool_added, on_new_agent=True),
    Rule(codes.TOOL_REMOVED, _TOOLS, _tool_removed),
    Rule(codes.TOOL_CHANGED, _TOOLS, _tool_changed),
    Rule(codes.APPROVAL_DROPPED, _APPROVALS, _approval_dropped),
    Rule(codes.APPROVAL_ADDED, _APPROVALS, _approval_added),
    Rule(codes.APPROVAL_CHANGED, _APPROVALS, _approval_changed),
    Rule(codes.EXECUTE_GAINED, ("FilesystemNode.tools",), _execute_gained, on_new_agent=True),
    Rule(codes.EXECUTE_LOST, ("FilesystemNode.tools",), _execute_lost),
    Rule(codes.BACKEND_CHANGED, ("FilesystemNode.backend", "FilesystemNode.definitions"),
         _backend_changed),
    Rule(codes.CONVERSATIONS_SHARED, ("FilesystemNode.definitions",), _conversations_shared,
         on_new_agent=True),
    Rule(codes.HARD_LINKS_ALLOWED, ("FilesystemNode.definitions",),
         lambda pair: _hard_links(pair, True), on_new_agent=True),
    Rule(codes.HARD_LINKS_REFUSED, ("FilesystemNode.definitions",),
         lambda pair: _hard_links(pair, False)),
    Rule(codes.LIMIT_CHANGED, ("FilesystemNode.definitions",), _backend_limits),
    Rule(codes.INSTRUCTION_CHANGED, ("LlmFields.instruction", "LlmFields.instruction_file"),
         _instruction),
    Rule(codes.LIMIT_CHANGED, ("LlmFields.result_limit",), _result_limit),
    Rule(codes.EXECUTION_MODE_CHANGED, ("AgentFields.offline",), _execution_mode),
    Rule(codes.SUB_AGENTS_CHANGED, ("AgentFields.children", "AgentFields.mode"), _sub_agents),
    Rule(codes.MEMORY_CHANGED, ("LlmFields.memory",), _same_field("memory", "memory files")),
    Rule(codes.SKILLS_CHANGED, ("LlmFields.skills",), _same_field("skills", "skills")),
    Rule(codes.PROMPTS_CHANGED, ("LlmFields.prompts",), prompts_changed),
    Rule(codes.OUTPUT_SCHEMA_CHANGED, ("LlmFields.output_schema", "Schema.*"),
         _same_field("output_schema", "output schema")),
    Rule(codes.INPUT_SCHEMA_CHANGED, ("LlmFields.input_schema", "Schema.*"),
         _same_field("input_schema", "input schema")),
    Rule(codes.OUTPUT_KEY_CHANGED, ("LlmFields.output_key", "PlannerNode.output_key"),
         _same_field("output_key", "output key")),
    Rule(codes.STATIC_INSTRUCTION_CHANGED, ("LlmFields.static_instruction",),
         _same_field("static_instruction", "static instruction")),
    Rule(codes.TOOL_ERRORS_CHANGED, ("LlmFields.tool_errors", "PlannerNode.tool_errors",),
         _same_field("tool_errors", "handling of tool errors")),
    Rule(codes.CALLBACK_ADDED, ("AgentFields.callbacks", "PyObject.*"), _callback_added,
         on_new_agent=True),
    Rule(codes.CALLBACK_REMOVED, ("AgentFields.callbacks", "PyObject.*"), _callback_removed),
    Rule(codes.CALLBACK_CHANGED, ("AgentFields.callbacks", "PyObject.*"), _callback_changed),
    Rule(codes.GENERATE_CHANGED, ("LlmFields.generate",), _settings("generate")),
    Rule(codes.THINKING_CHANGED, ("LlmFields.thinking",), _settings("thinking")),
    Rule(codes.DESCRIPTION_CHANGED, ("AgentFields.description",), _description),
    Rule(codes.INCLUDE_CONTENTS_CHANGED, ("LlmFields.include_contents",), _include_contents),
    Rule(codes.TRANSFER_CHANGED, ("LlmFields.disallow_transfer_to_parent",
                                  "LlmFields.disallow_transfer_to_peers"), _transfer),
    Rule(codes.PLANNER_CHANGED, ("LlmFields.adk_planner",), _planner),
    Rule(codes.MEMORY_EDIT_CHANGED, ("LlmFields.memory", "LlmFields.memory_edit_at"),
         lambda pair: _memory_edit(pair, True), on_new_agent=True),
    Rule(codes.MEMORY_EDIT_CHANGED, ("LlmFields.memory", "LlmFields.memory_edit_at"),
         lambda pair: _memory_edit(pair, False)),
    Rule(codes.SKILL_DISCOVERY_CHANGED, ("LlmFields.skill_discovery",), _skill_discovery),
    Rule(codes.TASK_AGENTS_CHANGED, ("LlmFields.task",), _task_agents),
    Rule(codes.SANDBOX_DROPPED, _SANDBOX, lambda pair: _sandbox_dropped(pair, True),
         on_new_agent=True),  # allow_project_files
    Rule(codes.SANDBOX_GAINED, _SANDBOX, lambda pair: _sandbox_dropped(pair, False)),
    Rule(codes.SANDBOX_NETWORK_GAINED, _SANDBOX, lambda pair: _sandbox_network(pair, True),
         on_new_agent=True),
    Rule(codes.SANDBOX_NETWORK_LOST, _SANDBOX, lambda pair: _sandbox_network(pair, False)),
    Rule(codes.SANDBOX_MOUNT_ADDED, _SANDBOX, lambda pair: _sandbox_mounts(pair, True),
         on_new_agent=True),
    Rule(codes.SANDBOX_MOUNT_REMOVED, _SANDBOX, lambda pair: _sandbox_mounts(pair, False)),
    Rule(codes.LIMIT_CHANGED, _SANDBOX, _sandbox_limits),
    Rule(codes.MODEL_ENDPOINT_CHANGED, ("LlmFields.model", "ModelNode.base_url",
                                        "ModelNode.members"), model_endpoint, on_new_agent=True),
    Rule(codes.MODEL_ROUTING_CHANGED, _ROUTING, model_routing),
    Rule(codes.MODEL_SETTINGS_CHANGED, ("LlmFields.model", "ModelNode.api_key", "ModelNode.args",
                                        "ModelNode.members"), model_settings),
)

APP_RULES: tuple[Rule[AppPair], ...] = (
    Rule(codes.OUTSIDE_PROJECT_WIDENED, ("AppNode.outside_project",), _widened,
         on_new_spec=True),
    Rule(codes.OUTSIDE_PROJECT_NARROWED, ("AppNode.outside_project",), _narrowed),
    Rule(codes.STATE_ADDED, ("AppNode.state", "AppNode.inputs"), _state_added),
    Rule(codes.STATE_CHANGED, ("AppNode.state", "AppNode.inputs"), _state_changed),
    Rule(codes.STATE_REMOVED, ("AppNode.state", "AppNode.inputs"), _state_removed),
    Rule(codes.PLUGIN_ADDED, ("AppNode.plugins", "PyObject.*"), _plugin_added,
         on_new_spec=True),
    Rule(codes.PLUGIN_REMOVED, ("AppNode.plugins", "PyObject.*"), _plugin_removed),
    Rule(codes.PLUGIN_CHANGED, ("AppNode.plugins", "PyObject.*"), _plugin_changed),
    Rule(codes.GLOBAL_INSTRUCTION_CHANGED, ("AppNode.global_instruction",), _global_instruction),
    Rule(codes.SUMMARIZATION_CHANGED, ("AppNode.compaction", "Compaction.settings",
                                       "Compaction.model", "ModelNode.*"), _summarization),
    Rule(codes.JOBS_STORE_CHANGED, ("AppNode.jobs", "JobsNode.store", "JobsNode.sqlite_path"),
         _jobs_store),
    Rule(codes.LIMIT_CHANGED, ("JobsNode.max_attempts", "JobsNode.lease_seconds"), _jobs_limits),
    Rule(codes.JOBS_WEBHOOK_CHANGED, ("JobsNode.webhook", "JobsNode.headers"), _jobs_webhook,
         on_new_spec=True),
    Rule(codes.APP_RENAMED, ("AppNode.name",), _app_name),
    Rule(codes.SUMMARIZATION_HISTORY_CHANGED, ("AppNode.compaction", "Compaction.history"),
         _summarization_history),
    Rule(codes.ON_DONE_CHANGED, ("JobsNode.on_done",), _on_done),
    Rule(codes.SESSIONS_CHANGED, ("AppNode.sessions", "SessionsNode.url",
                                  "SessionsNode.sqlite_path"), _sessions),
)

#: the rules of every kind, then each kind's own (a router's route, a planner's roles, ...)
AGENT_RULES = (*AGENT_RULES, *(rule for kind in KINDS for rule in kind.rules))

RULES: tuple[TreeRule | Rule[Any], ...] = (*TREE_RULES, *AGENT_RULES, *APP_RULES)

#: IR fields no rule reads, and why
IGNORED: Mapping[str, str] = {
    "AgentFields.file": "where the agent is defined: a position for messages, not behaviour",
    "AgentFields.line": "where the agent is defined: a position for messages, not behaviour",
    "AppNode.spec_file": "the spec's file name: where the spec is, not what it does",
    "AppNode.description": "the generated package's docstring; nothing reads it at run time",
    "AppNode.resumable": "derived from the approvals (AS509-AS511), which rules compare",
    "AppNode.module_dirs": "derived from the python objects' directories, which the rules "
                           "comparing tools, callbacks, plugins, routes and schemas compare",
    "Compaction.filesystem": "the root agent's file tools the history is written with, "
                             "which the rules comparing the root agent's backend compare",
    "Approval.hint": "the question shown to the person who approves; its wording changes "
                     "no decision the run can take",
}
