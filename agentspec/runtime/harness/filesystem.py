"""The `filesystem` harness field: file tools over a spec's backends."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.tool_context import ToolContext

from agentspec.contract.backends import DEFAULT_STATE_BACKEND
from agentspec.runtime.backends import Backend
from agentspec.runtime.backends.composite import CompositeBackend
from agentspec.runtime.backends.filesystem import FilesystemBackend
from agentspec.runtime.backends.sandbox import SandboxBackend, sandbox_limits
from agentspec.runtime.backends.shell import ShellBackend
from agentspec.runtime.backends.state import DEFAULT_KEY, StateBackend
from agentspec.runtime.harness.files import FILE_TOOL_NAMES, BackendFactory, make_file_tools
from agentspec.runtime.harness.scope import private_folders, scoped

__all__ = ["FileToolset", "backend_factory", "file_toolset", "sandbox_backend"]

Definitions = Mapping[str, Mapping[str, Any]]


def backend_factory(name: str, definitions: Definitions) -> BackendFactory:
    """Builds backend `name` for each tool call, as the call's user may see it (`scope`).
    State backends live in that call's session state (one store per backend name); directory
    backends are made once and reused."""
    made: dict[str, Backend] = {}

    def build(backend: str, context: ToolContext) -> Backend:
        definition = definitions[backend]
        inner = unscoped(backend, context)
        if definition.get("conversation_files") == "shared":
            return inner
        return scoped(inner, getattr(context, "user_id", None),
                      private_folders(definition.get("root")))

    def unscoped(backend: str, context: ToolContext) -> Backend:
        definition = definitions[backend]
        kind = definition["type"]
        if kind == "state":  # one store per backend name; the implicit deep default is plain
            key = DEFAULT_KEY if backend == DEFAULT_STATE_BACKEND else f"{DEFAULT_KEY}:{backend}"
            return StateBackend(context.state, key=key)
        if kind == "composite":
            return CompositeBackend(build(definition["default"], context), {
                prefix: build(target, context)
                for prefix, target in (definition.get("routes") or {}).items()})
        if backend not in made:
            hard_links = definition.get("hard_links") == "allow"
            if kind == "shell":
                made[backend] = ShellBackend(
                    definition["root"], timeout=definition.get("timeout", 120),
                    max_output_bytes=definition.get("max_output_bytes", 100_000),
                    env=definition.get("env"), hard_links=hard_links)
            elif kind == "sandbox":
                made[backend] = sandbox_backend(backend, definitions)
            else:
                made[backend] = FilesystemBackend(definition["root"], hard_links=hard_links)
        return made[backend]

    return lambda context: build(name, context)


def sandbox_backend(name: str, definitions: Definitions) -> SandboxBackend:
    """The `type: sandbox` backend `name` of `definitions`."""
    definition = definitions[name]
    return SandboxBackend(
        definition["root"], timeout=definition.get("timeout", 120),
        max_output_bytes=definition.get("max_output_bytes", 100_000),
        env=definition.get("env"), hard_links=definition.get("hard_links") == "allow",
        network=definition.get("network", False),
        mounts=[(mount["source"], mount["target"]) for mount in definition.get("mounts", ())],
        limits=sandbox_limits(definition),
        allow_sockets=definition.get("allow_sockets", False),
        # the other roots it knows of: a mount source there is refused
        writable_roots=[d["root"] for n, d in definitions.items() if n != name and "root" in d])


class FileToolset(BaseToolset):
    """`ls`, `read_file`, `write_file`, `edit_file`, `glob`, `grep` (and `execute` on a shell
    or sandbox backend) over one of the spec's backends."""

    def __init__(self, backend: str, definitions: Definitions,
                 tools: Iterable[str] = FILE_TOOL_NAMES) -> None:
        super().__init__()
        self.backend = backend
        self._tools: list[BaseTool] = list(
            make_file_tools(backend_factory(backend, definitions), tools))

    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        return list(self._tools)


def file_toolset(backend: str, definitions: Definitions,
                 tools: Iterable[str] = FILE_TOOL_NAMES) -> FileToolset:
    return FileToolset(backend, definitions, tools)
