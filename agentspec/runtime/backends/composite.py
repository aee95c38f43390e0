"""Routes paths to backends by prefix; the longest matching prefix wins."""

from __future__ import annotations

from collections.abc import Mapping

from agentspec.runtime.backends import (
    GREP_LIMIT,
    Backend,
    BackendError,
    ExecuteResult,
    FileInfo,
    GlobBudget,
    GrepMatch,
    ShellCapable,
    glob_match,
    grep_glob_match,
    normalize,
    relative_to,
    require_pattern,
)
from agentspec.runtime.backends.transfer import Transfers

__all__ = ["CompositeBackend"]


class CompositeBackend(Transfers):
    """`default` serves every path no route claims; a route `/memories/` serves
    `/memories/...`, seeing it re-rooted as `/...`. Paths returned are mapped back.

    `execute` runs on the default backend (when it is a shell backend); commands see that
    backend's files only, not the routed ones.
    """

    def __init__(self, default: Backend, routes: Mapping[str, Backend] | None = None) -> None:
        self.default = default
        self.routes: dict[str, Backend] = {}
        for prefix, backend in (routes or {}).items():
            clean = normalize(prefix)
            if clean == "/":
                raise ValueError("a route prefix cannot be `/`; that is the default backend")
            self.routes[clean] = backend
        self._order = sorted(self.routes, key=len, reverse=True)

    def _route(self, path: str) -> tuple[Backend, str, str]:
        """(backend, path inside it, prefix) where prefix is '' for the default."""
        virtual = normalize(path)
        for prefix in self._order:
            rel = relative_to(virtual, prefix)
            if rel is not None:
                return self.routes[prefix], "/" + rel, prefix
        return self.default, virtual, ""

    @staticmethod
    def _outer(prefix: str, inner: str) -> str:
        if not prefix:
            return inner
        return prefix if inner == "/" else prefix + inner

    def _shadowed(self, prefix: str, outer: str) -> bool:
        """A path from `prefix`'s backend that a longer route claims instead."""
        return self._route(outer)[2] != prefix

    def _involved(self, path: str) -> list[tuple[Backend, str, str]]:
        """The backend serving `path`, plus every route lying below `path`."""
        backend, inner, prefix = self._route(path)
        out = [(backend, inner, prefix)]
        virtual = normalize(path)
        for other in self._order:
            if other != prefix and relative_to(other, virtual):
                out.append((self.routes[other], "/", other))
        return out

    def ls(self, path: str) -> list[FileInfo]:
        virtual = normalize(path)
        backend, inner, prefix = self._route(virtual)
        found: dict[str, FileInfo] = {}
        try:
            for info in backend.ls(inner):
                outer = self._outer(prefix, info.path)
                if not self._shadowed(prefix, outer):
                    found[outer] = FileInfo(outer, info.is_dir, info.size)
        except BackendError:
            if not any(relative_to(r, virtual) for r in self._order):
                raise
        base = virtual.rstrip("/")
        for route in self._order:
            rel = relative_to(route, virtual)
            if rel:
                child = f"{base}/{rel.split('/', 1)[0]}"
                found[child] = FileInfo(child, True, 0)
        return sorted(found.values(), key=lambda f: f.path)

    def resolve(self, path: str) -> str:
        """The path `path` leads to: its backend's symbolic links followed, mapped back."""
        backend, inner, prefix = self._route(path)
        resolve = getattr(backend, "resolve", None)
        return self._outer(prefix, str(resolve(inner))) if resolve is not None else \
            normalize(path)

    def read(self, path: str) -> str:
        backend, inner, _ = self._route(path)
        return backend.read(inner)

    def write(self, path: str, content: str) -> None:
        backend, inner, _ = self._route(path)
        if inner == "/":
            raise BackendError(f"{normalize(path)} is a directory; give a file path.")
        backend.write(inner, content)

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> int:
        backend, inner, _ = self._route(path)
        return backend.edit(inner, old, new, replace_all)

    def glob(self, pattern: str, path: str = "/") -> list[str]:
        virtual = normalize(path)
        out: set[str] = set()
        budget = GlobBudget()
        for backend, inner, prefix in self._involved(virtual):
            try:
                paths = backend.glob("**", inner)
            except BackendError:
                continue
            for found in paths:
                outer = self._outer(prefix, found)
                rel = relative_to(outer, virtual)
                if rel and not self._shadowed(prefix, outer) and glob_match(pattern, rel, budget):
                    out.add(outer)
        return sorted(out)

    def grep(self, pattern: str, path: str = "/", glob: str | None = None) -> list[GrepMatch]:
        require_pattern(pattern)
        virtual = normalize(path)
        out: list[GrepMatch] = []
        budget = GlobBudget()
        for backend, inner, prefix in self._involved(virtual):
            try:
                matches = backend.grep(pattern, inner,
                                       glob if glob and "/" not in glob else None)
            except BackendError:
                continue
            for match in matches:
                outer = self._outer(prefix, match.path)
                if self._shadowed(prefix, outer) or not grep_glob_match(glob, outer, budget):
                    continue
                out.append(GrepMatch(outer, match.line_number, match.line))
        out.sort(key=lambda m: (m.path, m.line_number))
        return out[:GREP_LIMIT]

    def execute(self, command: str, timeout: float | None = None) -> ExecuteResult:
        if isinstance(self.default, ShellCapable):
            return self.default.execute(command, timeout)
        raise BackendError("This workspace cannot run commands: its default backend is not a "
                           "shell backend.")
