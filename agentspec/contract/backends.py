"""Backends as the compiler hands them to the runtime: one frozen dataclass per backend type
(a tagged union), the plain data generated packages carry them as (`to_data` / `from_data`),
the one walker that follows composite backends, and the one rule for where a conversation
history may land. The spec models (`language/backends.py`) own every default: nothing here
has one for a setting the spec owns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Literal, Protocol, cast, get_args, get_type_hints

from agentspec.contract.frozen import FrozenMap
from agentspec.contract.virtual_paths import normalize

__all__ = ["ABSENT_IN_ABI_1", "DEFAULT_STATE_BACKEND", "HISTORY_TYPES", "LARGE_RESULTS",
           "PERMISSIONS", "RUNNING_TYPES", "BackendDef", "CompositeDef", "FilesystemDef",
           "Globs", "Mount", "Routing", "SandboxDef", "ShellDef", "StateDef", "StoreDef",
           "StoreScope", "executor", "from_data", "hops", "keeps_history", "mount_points",
           "reached", "routed", "to_data"]

#: the state backend a `kind: deep` agent gets when it names none
DEFAULT_STATE_BACKEND = "__state__"

#: the folder of a backend that large tool results are saved in (`tool_result_limit`), one
#: folder per user below it; a bundle never ships it
LARGE_RESULTS = "/large_tool_results"

HardLinks = Literal["refuse", "allow"]
ConversationFiles = Literal["private", "shared"]
#: path permissions (`read` / `write`): globs over the backend's virtual paths, `/`-rooted
Globs = tuple[str, ...]
BackendType = Literal["state", "filesystem", "shell", "sandbox", "composite", "store"]
#: whose files a `store` backend keeps apart: each user's (`user`) or the whole app's (`app`)
StoreScope = Literal["user", "app"]

#: the settings that limit which paths a backend's file tools may read and write
PERMISSIONS = ("read", "write")

#: backend types whose `execute` runs commands
RUNNING_TYPES: frozenset[str] = frozenset({"shell", "sandbox"})
#: backend types a `summarization.history` directory may land on: a plain directory on disk
#: (a sandbox's root is the sandboxed commands' to change; state is no file)
HISTORY_TYPES: frozenset[str] = frozenset({"filesystem", "shell"})


def keeps_history(backend_type: str) -> bool:
    """Whether a history directory may land on a backend of this type."""
    return backend_type in HISTORY_TYPES


@dataclass(frozen=True, kw_only=True)
class StateDef:
    """Files kept in session state."""

    type: ClassVar[Literal["state"]] = "state"
    read: Globs | None
    write: Globs | None


@dataclass(frozen=True, kw_only=True)
class FilesystemDef:
    """A local directory; `root` is relative to the spec's directory (or absolute)."""

    type: ClassVar[BackendType] = "filesystem"
    root: str
    hard_links: HardLinks | None
    conversation_files: ConversationFiles | None
    read: Globs | None
    write: Globs | None


@dataclass(frozen=True, kw_only=True)
class ShellDef(FilesystemDef):
    """A directory whose `execute` runs commands."""

    type: ClassVar[BackendType] = "shell"
    timeout: float
    max_output_bytes: int
    env: FrozenMap[str, str] | None


@dataclass(frozen=True)
class Mount:
    """A host directory (relative to the spec's directory) a sandbox sees read-only."""

    source: str
    target: str


@dataclass(frozen=True, kw_only=True)
class SandboxDef(ShellDef):
    """A directory whose `execute` runs commands inside bubblewrap."""

    type: ClassVar[BackendType] = "sandbox"
    network: bool
    mounts: tuple[Mount, ...] | None
    max_processes: int
    max_file_bytes: int
    max_memory_mb: int
    tmp_size_mb: int
    max_workspace_mb: int
    allow_sockets: bool
    allow_project_files: bool | None


@dataclass(frozen=True, kw_only=True)
class StoreDef:
    """Files kept in a database table (`agentspec_files`), so they outlive sessions: one
    namespace per app, backend and (`scope: user`) user. The database is `url` (PostgreSQL,
    its `${env.X}` read when it is opened) or the SQLite file `sqlite` (relative to the
    spec's directory, or absolute); exactly one is set."""

    type: ClassVar[Literal["store"]] = "store"
    scope: StoreScope
    url: str | None
    sqlite: str | None
    app: str
    read: Globs | None
    write: Globs | None


@dataclass(frozen=True, kw_only=True)
class CompositeDef:
    """Paths routed to other backends by prefix; the longest matching prefix wins."""

    type: ClassVar[Literal["composite"]] = "composite"
    default: str
    routes: FrozenMap[str, str]
    conversation_files: ConversationFiles | None
    read: Globs | None
    write: Globs | None


BackendDef = StateDef | FilesystemDef | ShellDef | SandboxDef | CompositeDef | StoreDef
_TYPES: dict[str, type[BackendDef]] = {
    cls.type: cls for cls in (StateDef, FilesystemDef, ShellDef, SandboxDef, CompositeDef,
                              StoreDef)}
#: the fields of each type that may be None: absent from the plain data
_OPTIONAL: dict[type, frozenset[str]] = {
    cls: frozenset(name for name, hint in get_type_hints(cls).items()
                   if type(None) in get_args(hint)) for cls in _TYPES.values()}


def to_data(definition: BackendDef) -> dict[str, Any]:
    """The plain data a generated package passes the runtime (the spec model's dump: its
    fields in order, unset ones left out)."""
    data: dict[str, Any] = {"type": definition.type}
    for item in fields(definition):
        value = getattr(definition, item.name)
        if value is None:
            continue
        if isinstance(value, FrozenMap):
            value = dict(value)
        elif item.name == "mounts":
            value = [{"source": m.source, "target": m.target} for m in value]
        elif item.name in PERMISSIONS:
            value = list(value)
        data[item.name] = value
    return data


#: settings a package built for runtime ABI 1 may leave out (the sandbox's were added after
#: it), with the values the spec gave them then; `tests/test_contract.py` keeps each equal to
#: the spec model's default, its one home
ABSENT_IN_ABI_1: Mapping[str, object] = {
    "network": False, "allow_sockets": False, "max_processes": 256, "max_file_bytes": 1 << 30,
    "max_memory_mb": 4096, "tmp_size_mb": 1024, "max_workspace_mb": 10240}


def from_data(data: Mapping[str, Any]) -> BackendDef:
    """A definition from its plain data (`to_data`'s, or a spec model's dump)."""
    cls = _TYPES.get(str(data.get("type")))
    if cls is None:
        raise ValueError(f"unknown backend type {data.get('type')!r}")
    unknown = sorted(set(data) - {"type", *(item.name for item in fields(cls))})
    if unknown:  # a setting this runtime would not enforce (a package built by a newer one)
        raise ValueError(f"a {cls.type} backend's definition has settings this agentspec "
                         f"does not know: {', '.join(unknown)}")
    values: dict[str, Any] = {}
    for item in fields(cls):
        if item.name not in data and item.name not in _OPTIONAL[cls] and \
                item.name not in ABSENT_IN_ABI_1:
            raise ValueError(f"a {cls.type} backend's definition lacks `{item.name}`")
        value = data.get(item.name, ABSENT_IN_ABI_1.get(item.name))
        if item.name in ("routes", "env") and value is not None:
            value = FrozenMap(cast(Mapping[str, str], value))
        elif item.name == "mounts" and value is not None:
            value = tuple(Mount(m["source"], m["target"]) for m in value)
        elif item.name in PERMISSIONS and value is not None:
            value = tuple(str(pattern) for pattern in value)
        values[item.name] = value
    return cls(**values)


# the walker ------------------------------------------------------------------------------


class Routing(Protocol):
    """What the walker reads of a composite backend (a spec model's or a `CompositeDef`)."""

    @property
    def default(self) -> str: ...

    @property
    def routes(self) -> Mapping[str, str]: ...


def _composite(backends: Mapping[str, object], name: str) -> Routing | None:
    definition = backends.get(name)
    return cast(Routing, definition) if getattr(definition, "type", None) == "composite" \
        else None


def routed(name: str, path: str, backends: Mapping[str, object]) -> tuple[str, str]:
    """The backend that holds virtual path `path` of backend `name`, composite routes
    followed (the longest matching prefix, else the default), and the path inside it. A
    cycle ends the walk where it closes; a path that climbs above `/` raises BackendError."""
    return hops(name, path, backends)[-1]


def hops(name: str, path: str, backends: Mapping[str, object]) -> list[tuple[str, str]]:
    """Each backend virtual path `path` of backend `name` passes through on the way to the
    one that holds it (`routed`), with the path there: `name` first. Each one's `read` and
    `write` lists apply to its own path."""
    inner, seen = normalize(path), set()
    walked = [(name, inner)]
    while (composite := _composite(backends, name)) is not None and name not in seen:
        seen.add(name)
        for prefix, target in sorted(composite.routes.items(),
                                     key=lambda route: len(normalize(route[0])), reverse=True):
            clean = normalize(prefix)
            if inner == clean or inner.startswith(clean + "/"):
                name, inner = target, "/" + inner[len(clean):].lstrip("/")
                break
        else:
            name = composite.default
        walked.append((name, inner))
    return walked


def executor(name: str, backends: Mapping[str, object]) -> str:
    """The backend that runs `name`'s commands: a composite's default, followed."""
    seen: set[str] = set()
    while (composite := _composite(backends, name)) is not None and name not in seen:
        seen.add(name)
        name = composite.default
    return name


def reached(name: str, backends: Mapping[str, object]) -> list[str]:
    """`name` and every backend it routes to, each once."""
    found: list[str] = []
    todo = [name]
    while todo:
        current = todo.pop()
        if current in found:
            continue
        found.append(current)
        composite = _composite(backends, current)
        if composite is not None:
            todo += [composite.default, *composite.routes.values()]
    return found


def mount_points(name: str, backends: Mapping[str, object]) -> list[tuple[str, str]]:
    """(virtual prefix, backend) of `name`'s first level: a composite's routes and its
    default at `/`; any other backend at `/`."""
    composite = _composite(backends, name)
    if composite is None:
        return [("/", name)]
    return [*composite.routes.items(), ("/", composite.default)]
