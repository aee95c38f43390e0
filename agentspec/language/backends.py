"""Backends: where the harness file tools read and write."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, StringConstraints

from agentspec.language.common import DirectoryPath, Model, PathField, keyed_union

#: the longest path permission glob (a glob is matched in linear time; this bounds its size)
MAX_PERMISSION_CHARS = 512

__all__ = ["BACKEND_TYPES", "MAX_PERMISSION_CHARS", "Backend", "CompositeBackend",
           "FilesystemBackend", "PathGlob", "SandboxBackend", "SandboxMount", "ShellBackend",
           "StateBackend", "StoreBackend"]

BACKEND_TYPES = ("state", "filesystem", "shell", "sandbox", "composite", "store")


#: a path permission: a glob over the backend's own virtual paths, starting with `/`
PathGlob = Annotated[str, StringConstraints(min_length=1, max_length=MAX_PERMISSION_CHARS)]
_READ = ("Paths the file tools may read (`ls`, `read_file`, `glob`, `grep`, and `edit_file` "
         "before it writes): globs over the backend's own paths, starting with `/` "
         "(`/docs/**`, `/**/*.md`). Paths no glob matches are hidden from listings and "
         "searches, and reading one is a tool error that names the path and the rule. "
         "Absent: every path.")
_WRITE = ("Paths the file tools may write (`write_file`, `edit_file`), globs as in `read`; "
          "writing any other path is a tool error that names the path and the rule. `[]` makes "
          "the backend read-only. Absent: every path. Commands run by `execute` are not bound "
          "by either list.")


class StateBackend(Model):
    """Files kept in session state; they persist with the session service."""

    type: Literal["state"] = Field(description="Backend type.")
    read: list[PathGlob] | None = Field(None, description=_READ, examples=[["/docs/**"]])
    write: list[PathGlob] | None = Field(None, description=_WRITE, examples=[["/out/**"]])


class StoreBackend(Model):
    """Files kept in a database table (`agentspec_files`), so they outlive sessions: a file
    written in one conversation is there in the next, for the same user (`scope: user`) or
    for every user of the app (`scope: app`)."""

    type: Literal["store"] = Field(description="Backend type.")
    scope: Literal["user", "app"] = Field(
        "user", description="Whose files are kept apart: each user's own (`user`, the "
        "default; the user is the run's user id) or one set shared by every user of the app "
        "(`app`).")
    url: Annotated[str, PathField("sqlite")] | None = Field(
        None, description="The database: `sqlite:///path` (relative to the spec) or "
        "`postgresql://...` (the `postgres` extra; write a password as `${env.X}`). Absent: "
        "the database of `sessions`, which must then be SQLite or PostgreSQL.",
        examples=["sqlite:///.agentspec/files.db",
                  "postgresql://agentspec:${env.PGPASSWORD}@db/agents"])
    read: list[PathGlob] | None = Field(None, description=_READ, examples=[["/docs/**"]])
    write: list[PathGlob] | None = Field(None, description=_WRITE, examples=[["/out/**"]])


HardLinks = Literal["refuse", "allow"]
_CONVERSATION_FILES = (
    "Whose are the files agentspec keeps here for a conversation (large tool results under "
    "`/large_tool_results/`, `summarization.history`), one folder per user: `private` (the "
    "default) lets a user's file tools reach only their own folder; `shared` lets every user's "
    "file tools reach every folder.")
ConversationFiles = Literal["private", "shared"]
_HARD_LINKS = ("Files with more than one name (hard links) are not read (`refuse`, the default): "
               "another name may lie outside the root. `allow` reads them.")


class FilesystemBackend(Model):
    """A local directory; paths cannot escape it (`..`, absolute paths, symlinks)."""

    type: Literal["filesystem"] = Field(description="Backend type.")
    root: DirectoryPath = Field(description="Directory, relative to the spec file.",
                      examples=["./workspace"], min_length=1)
    hard_links: HardLinks | None = Field(None, description=_HARD_LINKS)
    conversation_files: ConversationFiles | None = Field(None, description=_CONVERSATION_FILES)
    read: list[PathGlob] | None = Field(None, description=_READ, examples=[["/docs/**"]])
    write: list[PathGlob] | None = Field(None, description=_WRITE, examples=[["/out/**"]])


class ShellBackend(Model):
    """A filesystem backend that can also run shell commands through `execute`."""

    type: Literal["shell"] = Field(description="Backend type.")
    root: DirectoryPath = Field(description="Working directory, relative to the spec file.",
                      examples=["./workspace"], min_length=1)
    hard_links: HardLinks | None = Field(None, description=_HARD_LINKS)
    conversation_files: ConversationFiles | None = Field(None, description=_CONVERSATION_FILES)
    read: list[PathGlob] | None = Field(None, description=_READ, examples=[["/docs/**"]])
    write: list[PathGlob] | None = Field(None, description=_WRITE, examples=[["/out/**"]])
    timeout: float = Field(120, gt=0, le=86400, description="Seconds before a command and its "
                           "children are killed.", examples=[60])
    max_output_bytes: int = Field(100_000, ge=1, description="Output beyond this is cut, with "
                                  "a note saying so.")
    env: dict[str, str] | None = Field(None, description="Environment variables for commands "
                                       "(added to a minimal PATH/HOME environment).")


SandboxTarget = Annotated[str, StringConstraints(
    pattern=r"^(/[A-Za-z0-9._@+-]+)+$", max_length=1024)]


class SandboxMount(Model):
    """A host directory the sandbox sees, read-only."""

    source: DirectoryPath = Field(description="Host directory, relative to the spec file "
                                  "(inside the project unless `outside_project` allows it).",
                                  examples=["./data"], min_length=1)
    target: SandboxTarget = Field(description="Where commands see it: an absolute path in "
                                  "the sandbox, outside `/workspace` and the system "
                                  "directories.", examples=["/data"])


class SandboxBackend(Model):
    """A filesystem backend whose `execute` runs commands inside a bubblewrap sandbox: the
    root (at `/workspace`) is the only writable place, system directories are read-only, no
    other host path is visible, no network unless `network: true`."""

    type: Literal["sandbox"] = Field(description="Backend type.")
    root: DirectoryPath = Field(description="Working directory, relative to the spec file; "
                                "commands see it as `/workspace`.", examples=["./workspace"],
                                min_length=1)
    hard_links: HardLinks | None = Field(None, description=_HARD_LINKS)
    conversation_files: ConversationFiles | None = Field(None, description=_CONVERSATION_FILES)
    read: list[PathGlob] | None = Field(None, description=_READ, examples=[["/docs/**"]])
    write: list[PathGlob] | None = Field(None, description=_WRITE, examples=[["/out/**"]])
    timeout: float = Field(120, gt=0, le=86400, description="Seconds before a command and "
                           "the whole sandbox are killed.", examples=[60])
    max_output_bytes: int = Field(100_000, ge=1, description="Output beyond this is cut, with "
                                  "a note saying so.")
    env: dict[str, str] | None = Field(None, description="Environment variables for commands "
                                       "(added to a minimal PATH/HOME/LANG environment).")
    network: bool = Field(False, description="Let commands use the network (the host's "
                          "loopback services included). Off by default.")
    mounts: list[SandboxMount] | None = Field(None, description="Host directories commands "
                                              "may read (never write).")
    max_processes: int = Field(256, ge=1, le=65536, description="Processes the sandbox may "
                               "run at once (bounds fork bombs).")
    max_file_bytes: int = Field(1 << 30, ge=1, description="Largest file a command may "
                                "write, in bytes.")
    max_memory_mb: int = Field(4096, ge=1, le=1 << 30, description="Memory a command's "
                               "process may use for data, in MiB (and the whole sandbox, "
                               "where a memory cgroup can be made).")
    tmp_size_mb: int = Field(1024, ge=1, le=1 << 30, description="Size of the sandbox's "
                             "private `/tmp`, in MiB.")
    max_workspace_mb: int = Field(10240, ge=1, le=1 << 30, description="Disk space the "
                                  "root may use, in MiB; past it, commands may delete files "
                                  "but not write any.")
    allow_sockets: bool = Field(False, description="Let `mounts` hold Unix sockets and FIFOs "
                                "(named pipes), through which commands reach the host "
                                "processes behind them. Off by default: a mount holding one "
                                "is refused.")
    allow_project_files: bool | None = Field(
        None, description="Let the root hold the project's own files (the spec, its Python "
        "modules, the built package, SQLite stores, `.git`), which commands could then "
        "change and the host would run unsandboxed. Off by default (AS291).")


#: `/a/b/`: names between slashes, none of them `.` or `..` (a route that climbs is no route)
RoutePrefix = Annotated[str, StringConstraints(
    pattern=r"^/(([^/.][^/]*|\.[^/.][^/]*|\.\.[^/]+)/)*$")]


class CompositeBackend(Model):
    """Routes paths to backends by prefix; the longest matching prefix wins."""

    type: Literal["composite"] = Field(description="Backend type.")
    default: str = Field(description="Backend for paths no route matches.", examples=["scratch"])
    routes: dict[RoutePrefix, str] = Field(
        default_factory=dict, description="Path prefix (starting and ending with `/`) -> "
        "backend name.", examples=[{"/workspace/": "workspace"}])
    conversation_files: ConversationFiles | None = Field(None, description=_CONVERSATION_FILES)
    read: list[PathGlob] | None = Field(None, description=_READ, examples=[["/docs/**"]])
    write: list[PathGlob] | None = Field(None, description=_WRITE, examples=[["/out/**"]])


def _backend_type(value: object) -> str | None:
    kind = value.get("type") if isinstance(value, dict) else None
    return kind if kind in BACKEND_TYPES else None


if TYPE_CHECKING:
    Backend = (StateBackend | FilesystemBackend | ShellBackend | SandboxBackend
               | CompositeBackend | StoreBackend)
else:
    Backend = keyed_union("backend_type", "a backend needs `type`: state, filesystem, shell, "
                          "sandbox, composite or store",
                          {"state": StateBackend, "filesystem": FilesystemBackend,
                           "shell": ShellBackend, "sandbox": SandboxBackend,
                           "composite": CompositeBackend, "store": StoreBackend},
                          _backend_type)
