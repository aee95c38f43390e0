"""Backend roots and sandbox mounts, compared where they really lead.

A sandbox's command can replace any directory under its root with a symbolic link (to `/`,
say). So no other backend's root may lie inside a sandbox's root (AS290), a sandbox's root
may not hold the project's own files, which the host loads and runs unsandboxed (AS291,
unless the backend says `allow_project_files: true`), and no root or mount source may run
through a link, which the run time refuses to follow (AS292). Paths are compared both as
written (made absolute) and resolved, so neither an absolute path nor a link hides an
overlap.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path as FsPath

from agentspec.diagnostics import codes
from agentspec.language.backends import FilesystemBackend, SandboxBackend, ShellBackend
from agentspec.parse import Path
from agentspec.project_files import resolved
from agentspec.validate.semantic.context import Context
from agentspec.validate.semantic.project import SQLITE, spec_paths
from agentspec.validate.semantic.pyrefs import python_refs

__all__ = ["Located", "check_roots", "located", "roots"]


@dataclass(frozen=True)
class Located:
    """A directory the spec names: as written (made absolute, normalized) and resolved."""

    written: str
    where: Path
    lexical: FsPath
    real: FsPath

    def within(self, other: Located, *, strictly: bool = False) -> bool:
        pairs = ((self.lexical, other.lexical), (self.real, other.real))
        return any(mine.is_relative_to(theirs) and not (strictly and mine == theirs)
                   for mine, theirs in pairs)

    def holds(self, path: FsPath) -> bool:
        return any(p.is_relative_to(base) for base in (self.lexical, self.real)
                   for p in (FsPath(os.path.normpath(path)), resolved(path)))


def located(ctx: Context, value: str, where: Path) -> Located | None:
    """Where a root or mount source written at `where` leads, taken from the resolved
    directory of the file it was written in (None for `${...}` and for a path outside the
    project: reported elsewhere, never looked at)."""
    if "${" in value:
        return None
    lexical = FsPath(os.path.normpath(ctx.directory_of(ctx.at(*where)) / value))
    if ctx.project.judge(lexical) == "outside":
        return None
    return Located(value, where, lexical, resolved(lexical))


def roots(ctx: Context) -> Iterator[tuple[str, object, Located]]:
    """(name, backend, root) of every backend with a directory root."""
    for name, backend in (ctx.spec.backends or {}).items():
        if isinstance(backend, FilesystemBackend | ShellBackend | SandboxBackend):
            found = located(ctx, backend.root, ("backends", name, "root"))
            if found is not None:
                yield name, backend, found


def _link_on(path: FsPath) -> FsPath | None:
    """The first symbolic link on `path` (each prefix from `/`), None when there is none;
    the part that does not exist yet (a root is made at run time) has none."""
    current = FsPath("/")
    for part in path.parts[1:]:
        current = current / part
        try:
            if current.is_symlink():
                return current
            if not current.exists():
                return None
        except OSError:
            return None
    return None


def _links(ctx: Context, name: str, backend: object, root: Located) -> None:
    places = [("backend root", root)]
    if isinstance(backend, SandboxBackend):
        for index, mount in enumerate(backend.mounts or ()):
            found = located(ctx, mount.source, ("backends", name, "mounts", index, "source"))
            if found is not None:
                places.append(("sandbox mount", found))
    for what, place in places:
        link = _link_on(place.lexical)
        if link is not None:
            ctx.report(codes.BACKEND_PATH_LINK(
                f"the {what} `{place.written}` runs through the symbolic link `{link}`, which "
                "the run time does not follow", ctx.at(*place.where),
                hint=f"write the directory's real path (`{place.real}`), or replace the link "
                "with the directory"))


def _nested(ctx: Context, found: list[tuple[str, object, Located]]) -> None:
    for outer, backend, box in found:
        if not isinstance(backend, SandboxBackend):
            continue
        for name, _, root in found:
            if name != outer and root.within(box, strictly=True):
                ctx.report(codes.NESTED_BACKEND_ROOT(
                    f"the root of the backend `{name}` lies inside the root of the sandbox "
                    f"`{outer}`, whose commands can swap a directory on its path for a link "
                    "to any host directory", ctx.at(*root.where),
                    hint=f"give `{name}` a directory beside `{outer}`'s root, not inside it"))


def _project_files(ctx: Context) -> Iterator[tuple[FsPath, str]]:
    """(path, what it is) of the files the host loads and runs: the spec files, the Python
    modules the spec names, the package `build` writes, the SQLite stores, `.git`."""
    for source in ctx.sources.values():
        if source.path.suffix in (".yaml", ".yml"):
            yield source.path, "a spec file"
    for where, ref in python_refs(ctx):
        module = ref.split(":", 1)[0].split(".")[0]
        if module and "${" not in ref:
            base = ctx.directory_of(ctx.at(*where)) / module
            yield from ((path, f"the Python module `{module}`")
                        for path in (base.with_suffix(".py"), base) if path.exists())
    if ctx.spec.name:
        spec_dir = ctx.directory_of(ctx.at())
        yield spec_dir / ctx.spec.name, "the package `agentspec build` writes"
    if (ctx.project.root / ".git").exists():
        yield ctx.project.root / ".git", "the git repository (its hooks run on the host)"
    for where, text, kind in spec_paths(ctx):
        if kind == "sqlite" and text.startswith(SQLITE) and "${" not in text:
            yield (ctx.directory_of(ctx.at(*where)) / text.removeprefix(SQLITE),
                   "an SQLite store")


def _project(ctx: Context, found: list[tuple[str, object, Located]]) -> None:
    protected = list(_project_files(ctx))
    for name, backend, root in found:
        if not isinstance(backend, SandboxBackend) or backend.allow_project_files:
            continue
        held = next(((path, what) for path, what in protected if root.holds(path)), None)
        if held is not None:
            path, what = held
            ctx.report(codes.SANDBOX_HOLDS_PROJECT(
                f"the root of the sandbox `{name}` holds {what} (`{path.name}`): its commands "
                "could change it, and the host runs it, unsandboxed, at the next load",
                ctx.at(*root.where),
                hint="give the sandbox a directory of its own, such as `./workspace`; or, if "
                "its commands must change the project, set `allow_project_files: true`"))


def check_roots(ctx: Context) -> None:
    found = list(roots(ctx))
    for name, backend, root in found:
        _links(ctx, name, backend, root)
    _nested(ctx, found)
    _project(ctx, found)
