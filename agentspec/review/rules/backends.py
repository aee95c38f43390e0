"""The rules about what an agent's file tools and commands reach: its backend, hard links,
shared conversation files, limits, and the sandbox its commands run in."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from agentspec.contract.backends import PERMISSIONS, executor, to_data
from agentspec.diagnostics import codes
from agentspec.diagnostics.model import Risk
from agentspec.ir.tree import AgentNode, FilesystemNode
from agentspec.review.rules.views import runs_commands
from agentspec.review.ruletypes import AgentPair, Found, Path, Rule, limit, llm_view
from agentspec.review.sides import Where

__all__ = ["RULES", "backend_at", "definitions"]


def _backends(pair: AgentPair) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Both versions' backend definitions, when both have file tools and they differ."""
    before, after = pair.old_llm.filesystem, pair.new_llm.filesystem
    if before is None or after is None or before.backend != after.backend:
        return None
    return _data(before), _data(after)


def _data(filesystem: FilesystemNode) -> dict[str, Any]:
    """The backend definitions as plain data, setting by setting."""
    return {name: to_data(d) for name, d in filesystem.definitions.items()}


_BACKEND_LIMITS = ("timeout", "max_output_bytes")
#: a store backend's database and scope: their own rules (`rules/stores.py`)
_STORE_SETTINGS = ("url", "sqlite", "app", "scope")
_SANDBOX_LIMITS = ("max_processes", "max_file_bytes", "max_memory_mb", "tmp_size_mb",
                   "max_workspace_mb")


def backend_at(pair: AgentPair, name: str, *under: str) -> tuple[Path | Where, Path | Where]:
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
        yield Found(Risk.MEDIUM, f"files: backend `{before.backend}` -> `{after.backend}`",
                    ("filesystem",), ("filesystem",))
        return
    old, new = _data(before), _data(after)
    rest = (*_BACKEND_LIMITS, *PERMISSIONS, "hard_links", "network", "mounts", "allow_sockets",
            "allow_project_files", *_SANDBOX_LIMITS, *_STORE_SETTINGS)
    for name in sorted(old.keys() | new.keys()):
        if _shared_now(old.get(name, {}), new.get(name, {})):
            continue  # AS580's
        mine_old = {k: v for k, v in old.get(name, {}).items() if k not in rest}
        mine_new = {k: v for k, v in new.get(name, {}).items() if k not in rest}
        keys = sorted(k for k in mine_old.keys() | mine_new.keys()
                      if mine_old.get(k) != mine_new.get(k))
        if keys:
            yield Found(Risk.MEDIUM, f"backend `{name}` is set up differently (root, "
                        "environment, routes or whose conversation files it shows)",
                        *backend_at(pair, name, keys[0]))


def _shared_now(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    return old.get("conversation_files") != "shared" and \
        new.get("conversation_files") == "shared"


def definitions(node: AgentNode) -> dict[str, Any]:
    """The backends an agent's file tools reach, by name (none without file tools)."""
    filesystem = llm_view(node).filesystem
    return {} if filesystem is None else _data(filesystem)


def _reached_at(pair: AgentPair, name: str, *under: str
                ) -> tuple[Path | Where | None, Path | Where]:
    """`backend_at`, with no old position when the old version of the agent did not reach
    backend `name` (a new agent, new file tools, another backend)."""
    old_at, new_at = backend_at(pair, name, *under)
    return (old_at if name in definitions(pair.before) else None), new_at


def _conversations_shared(pair: AgentPair) -> Iterator[Found]:
    """Conversation files of every user now shown to every user's file tools: by a backend
    the agent reaches, compared with what it reached before (nothing, for a new agent)."""
    old, new = definitions(pair.before), definitions(pair.after)
    for name in sorted(new):
        if _shared_now(old.get(name, {}), new[name]):
            yield Found(Risk.HIGH, f"backend `{name}` now shows every user's conversation files "
                        "(histories, evicted tool results) to every user's file tools",
                        *_reached_at(pair, name, "conversation_files"))


def _permissions(pair: AgentPair) -> Iterator[Found]:
    """A backend's `read` / `write` lists, on every backend the agent reached before and
    still reaches: a list dropped or a glob added widens them (high), a list added or a glob
    dropped narrows them (low); a list with globs both added and dropped is both."""
    old, new = definitions(pair.before), definitions(pair.after)
    for name in sorted(old.keys() & new.keys()):
        for rule in PERMISSIONS:
            was, now = old[name].get(rule), new[name].get(rule)
            if was == now:
                continue
            at = backend_at(pair, name, rule)
            if now is None or was is None:
                widened = now is None
                what = "every path" if widened else f"only {_globs(now)}" if now else "no path"
                yield Found(Risk.HIGH if widened else Risk.LOW,
                            f"backend `{name}`'s file tools may now {rule} {what}", *at)
                continue
            added = [glob for glob in now if glob not in was]
            dropped = [glob for glob in was if glob not in now]
            if added:
                yield Found(Risk.HIGH, f"backend `{name}`'s file tools may now {rule} "
                            f"{_globs(added)} too", *at)
            if dropped:
                yield Found(Risk.LOW, f"backend `{name}`'s file tools may no longer {rule} "
                            f"{_globs(dropped)}", *at)


def _globs(globs: list[str]) -> str:
    return ", ".join(f"`{glob}`" for glob in globs) if globs else "nothing"


def _backend_limits(pair: AgentPair) -> Iterator[Found]:
    both = _backends(pair)
    if both is None:
        return
    name = pair.new_llm.filesystem.backend if pair.new_llm.filesystem else ""
    before, after = both[0].get(name, {}), both[1].get(name, {})
    for key in _BACKEND_LIMITS:
        yield from limit(f"backend `{name}` {key}", before.get(key), after.get(key),
                         *backend_at(pair, name, key))


def _hard_links(pair: AgentPair, allowed: bool) -> Iterator[Found]:
    """`hard_links: allow` on any backend the agent reaches (a route's too); gained is
    judged against what the agent reached before (nothing, for a new agent), lost only on
    a backend it still has."""
    if allowed:
        old, new = definitions(pair.before), definitions(pair.after)
        for backend in sorted(new):
            if new[backend].get("hard_links") == "allow" and \
                    old.get(backend, {}).get("hard_links") != "allow":
                yield Found(Risk.HIGH, f"backend `{backend}` now reads files with several names "
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
            yield Found(Risk.LOW, f"backend `{backend}` no longer reads files with several names "
                        "(hard links)", *backend_at(pair, backend, "hard_links"))


def _executor(node: AgentNode) -> tuple[str, dict[str, Any]] | None:
    """The backend that runs the agent's commands (a composite's default), by name with its
    definition, when it has file tools."""
    filesystem = llm_view(node).filesystem
    if filesystem is None:
        return None
    name = executor(filesystem.backend, filesystem.definitions)
    definition = filesystem.definitions.get(name)
    return None if definition is None else (name, to_data(definition))


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
    if after is None or not runs_commands(pair.after):
        return None
    sandboxed = after[1]["type"] == "sandbox"
    new_at = (pair.new.defined("backends", after[0], *under) if sandboxed else None) or \
        ("filesystem",)
    now = after[1] if sandboxed else None
    before = _executor(pair.before)
    if before is None or not runs_commands(pair.before):
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
        yield Found(Risk.HIGH, "commands no longer run in a sandbox: they reach every file, "
                    "process and network the agent's user can", ("filesystem",), ("filesystem",))
    elif not dropped and both.before is None:
        yield Found(Risk.LOW, "commands now run in a sandbox", ("filesystem",), ("filesystem",))


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
        yield Found(Risk.HIGH, "sandboxed commands may now change the project's own files (the "
                    "spec, its Python modules, the built package, stores), which the host "
                    "runs unsandboxed", *where)
    elif not dropped and was:
        yield Found(Risk.LOW, "sandboxed commands may no longer change the project's own files",
                    *where)


def _sandbox_network(pair: AgentPair, gained: bool) -> Iterator[Found]:
    both = _sandboxes(pair, "network")
    if both is None or both.before is None or both.after is None:
        return
    was, now = bool(both.before.get("network")), bool(both.after.get("network"))
    if gained and now and not was:
        yield Found(Risk.HIGH, "sandboxed commands can now reach the network, the host's "
                    "loopback services included", both.old_at, both.new_at)
    elif not gained and was and not now:
        yield Found(Risk.LOW, "sandboxed commands no longer reach the network", both.old_at,
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
            yield Found(Risk.HIGH, "sandboxed commands can now talk to host services through "
                        "Unix sockets and FIFOs in their mounts (`allow_sockets`)", at.old_at,
                        at.new_at)
        elif not added and was:
            yield Found(Risk.LOW, "sandboxed commands no longer reach Unix sockets and FIFOs in "
                        "their mounts", at.old_at, at.new_at)
    if added:
        for target in sorted(new):
            if old.get(target) != new[target]:
                yield Found(Risk.HIGH, f"sandboxed commands now read the host directory "
                            f"`{new[target]}` at `{target}`", both.old_at, both.new_at)
    else:
        for target in sorted(old.keys() - new.keys()):
            yield Found(Risk.LOW, f"sandboxed commands no longer see `{target}`", both.old_at,
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


def _result_limit(pair: AgentPair) -> Iterator[Found]:
    yield from limit("tool_result_limit", pair.old_llm.result_limit,
                     pair.new_llm.result_limit, ("tool_result_limit",), ("tool_result_limit",))


#: the backend that runs an agent's commands, and whether it does
def _code_executor(pair: AgentPair) -> Iterator[Found]:
    """Where the model's code blocks run; the sandbox's settings (another network, mounts or
    limits) are the same sandbox changed."""
    was, now = pair.old_llm.code_executor, pair.new_llm.code_executor
    if was == now:
        return
    where = ("code_executor",)
    if was is not None and now is not None and was.label == now.label:
        assert was.filesystem is not None and now.filesystem is not None
        before = to_data(was.filesystem.definitions[was.filesystem.backend])
        after = to_data(now.filesystem.definitions[now.filesystem.backend])
        changed = sorted(k for k in before.keys() | after.keys()
                         if before.get(k) != after.get(k))
        yield Found(Risk.HIGH if after.get("network") and not before.get("network")
                    else Risk.MEDIUM,
                    f"the sandbox that runs the model's code blocks changed: "
                    f"{', '.join(changed)}", where, where)
        return
    yield Found(Risk.LOW if now is None else Risk.HIGH, "code blocks the model writes: "
                f"{'plain text' if now is None else now.label} "
                f"(was {'plain text' if was is None else was.label})",
                where if was is not None else None, where if now is not None else None)


_SANDBOX = ("FilesystemNode.backend", "FilesystemNode.definitions", "FilesystemNode.tools",
            "CompositeDef.default", "SandboxDef.network", "SandboxDef.mounts", "Mount.*",
            "SandboxDef.allow_sockets", "SandboxDef.allow_project_files",
            "SandboxDef.max_processes", "SandboxDef.max_file_bytes", "SandboxDef.max_memory_mb",
            "SandboxDef.tmp_size_mb", "SandboxDef.max_workspace_mb")
#: whose conversation files a backend shows
_CONVERSATION_FILES = ("FilesystemNode.definitions", "FilesystemDef.conversation_files",
                       "CompositeDef.conversation_files")


RULES: tuple[Rule[AgentPair], ...] = (
    Rule(codes.BACKEND_CHANGED, ("FilesystemNode.backend", "FilesystemNode.definitions",
                                 "FilesystemDef.root", "ShellDef.env", "CompositeDef.default",
                                 "CompositeDef.routes", *_CONVERSATION_FILES),
         _backend_changed),
    Rule(codes.BACKEND_CHANGED, ("FilesystemNode.definitions", "StateDef.read",
                                 "StateDef.write", "FilesystemDef.read", "FilesystemDef.write",
                                 "CompositeDef.read", "CompositeDef.write", "StoreDef.read",
                                 "StoreDef.write"), _permissions),
    Rule(codes.CONVERSATIONS_SHARED, _CONVERSATION_FILES, _conversations_shared,
         on_new_agent=True),
    Rule(codes.HARD_LINKS_ALLOWED, ("FilesystemNode.definitions", "FilesystemDef.hard_links"),
         lambda pair: _hard_links(pair, True), on_new_agent=True),
    Rule(codes.HARD_LINKS_REFUSED, ("FilesystemNode.definitions", "FilesystemDef.hard_links"),
         lambda pair: _hard_links(pair, False)),
    Rule(codes.LIMIT_CHANGED, ("FilesystemNode.definitions", "ShellDef.timeout",
                               "ShellDef.max_output_bytes"), _backend_limits),
    Rule(codes.LIMIT_CHANGED, ("LlmFields.result_limit",), _result_limit),
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
    Rule(codes.CODE_EXECUTOR_CHANGED, ("LlmFields.code_executor", "CodeExecutorNode.*",
                                       *_SANDBOX), _code_executor, on_new_agent=True),
)
