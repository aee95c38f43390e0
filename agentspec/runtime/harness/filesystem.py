"""The `filesystem` harness field: file tools over a spec's backends."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.tool_context import ToolContext

from agentspec.contract.backends import (
    DEFAULT_STATE_BACKEND,
    BackendDef,
    CompositeDef,
    FilesystemDef,
    SandboxDef,
    ShellDef,
    StateDef,
    StoreDef,
    from_data,
)
from agentspec.runtime.backends import Backend
from agentspec.runtime.backends.composite import CompositeBackend
from agentspec.runtime.backends.filesystem import FilesystemBackend
from agentspec.runtime.backends.permissions import permitted
from agentspec.runtime.backends.sandbox import SandboxBackend, sandbox_limits
from agentspec.runtime.backends.shell import ShellBackend
from agentspec.runtime.backends.state import DEFAULT_KEY, StateBackend
from agentspec.runtime.backends.store import store_backend
from agentspec.runtime.harness.files import BackendFactory, make_file_tools
from agentspec.runtime.harness.scope import private_folders, scoped

__all__ = ["FileToolset", "backend_factory", "file_toolset", "sandbox_backend"]

Definitions = Mapping[str, Mapping[str, Any]]
"""Backend definitions as a generated package passes them (`contract.backends.to_data`)."""


def backend_factory(name: str, definitions: Definitions) -> BackendFactory:
    """Builds backend `name` for each tool call, as the call's user may see it (`scope`).
    State backends live in that call's session state (one store per backend name), store
    backends in their database's namespace for the call's user or app; directory backends
    are made once and reused."""
    backends = {backend: from_data(data) for backend, data in definitions.items()}
    made: dict[str, Backend] = {}

    def build(backend: str, context: ToolContext) -> Backend:
        definition = backends[backend]
        inner = unscoped(backend, context)
        if isinstance(definition, StateDef | StoreDef) or \
                definition.conversation_files != "shared":
            inner = scoped(inner, getattr(context, "user_id", None), private_folders(
                definition.root if isinstance(definition, FilesystemDef) else None))
        return permitted(inner, backend, definition.read, definition.write)

    def unscoped(backend: str, context: ToolContext) -> Backend:
        definition = backends[backend]
        if isinstance(definition, StateDef):  # one store per name; the implicit one is plain
            key = DEFAULT_KEY if backend == DEFAULT_STATE_BACKEND else f"{DEFAULT_KEY}:{backend}"
            return StateBackend(context.state, key=key)
        if isinstance(definition, StoreDef):  # one namespace per user (or app) and name
            return store_backend(backend, definition, getattr(context, "user_id", None))
        if isinstance(definition, CompositeDef):
            return CompositeBackend(build(definition.default, context), {
                prefix: build(target, context) for prefix, target in definition.routes.items()})
        if backend not in made:
            made[backend] = directory(backend, definition)
        return made[backend]

    def directory(backend: str, definition: FilesystemDef) -> Backend:
        hard_links = definition.hard_links == "allow"
        if isinstance(definition, SandboxDef):
            return typed_sandbox(backend, backends)
        if isinstance(definition, ShellDef):
            return ShellBackend(definition.root, timeout=definition.timeout,
                                max_output_bytes=definition.max_output_bytes,
                                env=definition.env, hard_links=hard_links)
        return FilesystemBackend(definition.root, hard_links=hard_links)

    return lambda context: build(name, context)


def sandbox_backend(name: str, definitions: Definitions) -> SandboxBackend:
    """The `type: sandbox` backend `name` of `definitions` (as generated code passes them)."""
    return typed_sandbox(name, {backend: from_data(data) for backend, data in
                                definitions.items()})


def typed_sandbox(name: str, backends: Mapping[str, BackendDef]) -> SandboxBackend:
    definition = backends[name]
    assert isinstance(definition, SandboxDef), name
    return SandboxBackend(
        definition.root, timeout=definition.timeout,
        max_output_bytes=definition.max_output_bytes, env=definition.env,
        hard_links=definition.hard_links == "allow", network=definition.network,
        mounts=[(mount.source, mount.target) for mount in definition.mounts or ()],
        limits=sandbox_limits(definition), allow_sockets=definition.allow_sockets,
        # the other roots it knows of: a mount source there is refused
        writable_roots=[d.root for n, d in backends.items()
                        if n != name and isinstance(d, FilesystemDef)])


class FileToolset(BaseToolset):
    """`ls`, `read_file`, `write_file`, `edit_file`, `glob`, `grep` (and `execute` on a shell
    or sandbox backend) over one of the spec's backends."""

    def __init__(self, backend: str, definitions: Definitions, tools: Iterable[str]) -> None:
        super().__init__()
        self.backend = backend
        self._tools: list[BaseTool] = list(
            make_file_tools(backend_factory(backend, definitions), tools))

    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        return list(self._tools)


def file_toolset(backend: str, definitions: Definitions, tools: Iterable[str]) -> FileToolset:
    return FileToolset(backend, definitions, tools)
