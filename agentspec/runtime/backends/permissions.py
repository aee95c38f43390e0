"""Path permissions: a backend's `read` and `write` glob lists, enforced on its file tools.

A path is readable (writable) when the backend has no `read` (`write`) list, or when one of
its globs matches the path. A denied read or write is a `BackendError` naming the path and the
rule, which the file tools hand the model as a tool error; listings, globs and greps leave the
unreadable files out. A path is judged as given and as its symbolic links resolve (on a
directory backend, `resolve`), so a link under an allowed path cannot reach a denied one.
Globs are `/`-rooted and matched whole (`/*.md` is a file at the top, not
every Markdown file), in time linear in the path whatever the pattern (`globs.py`), within one
`GlobBudget` per call. `execute` is passed through: a command is not a path.
"""

from __future__ import annotations

from agentspec.contract.globs import permits as allowed
from agentspec.runtime.backends import (
    Backend,
    BackendError,
    ExecuteResult,
    FileInfo,
    GlobBudget,
    GrepMatch,
    ShellCapable,
    normalize,
)
from agentspec.runtime.backends.transfer import Transfers

__all__ = ["Permitted", "ShellPermitted", "allowed", "check", "permitted"]


def _listed(globs: tuple[str, ...]) -> str:
    return ", ".join(f"`{glob}`" for glob in globs) if globs else "nothing"


def check(name: str, rule: str, globs: tuple[str, ...] | None, path: str,
          budget: GlobBudget, real: str | None = None) -> None:
    """BackendError, naming the path and the rule, when backend `name`'s `rule` list
    (`read` or `write`: `globs`) denies `path`, or `real`, where its symbolic links lead:
    a link under an allowed path reaches no path the lists deny."""
    if globs is None:
        return
    asked = normalize(path)
    for judged in (asked, real or asked):
        if not allowed(globs, judged, budget):
            action = "Reading" if rule == "read" else "Writing"
            through = "" if judged == asked else \
                f" (a symbolic link to {real}, which the rule does not allow)"
            raise BackendError(
                f"{action} {asked} is not allowed{through}: backend `{name}` lets the "
                f"file tools {rule} only {_listed(globs)} (its `{rule}` rule)")


class Permitted(Transfers):
    """`inner` with backend `name`'s `read` and `write` lists enforced."""

    def __init__(self, inner: Backend, name: str, read: tuple[str, ...] | None,
                 write: tuple[str, ...] | None) -> None:
        self.inner, self.name, self.read_globs, self.write_globs = inner, name, read, write

    def resolve(self, path: str) -> str:
        """The path `path` leads to (`inner`'s symbolic links followed), or `path`."""
        resolve = getattr(self.inner, "resolve", None)
        return str(resolve(path)) if resolve is not None else normalize(path)

    def _check(self, rule: str, path: str, budget: GlobBudget) -> None:
        check(self.name, rule, self.read_globs if rule == "read" else self.write_globs, path,
              budget, self.resolve(path))

    def _readable(self, path: str, budget: GlobBudget) -> bool:
        if self.read_globs is None:
            return True
        return allowed(self.read_globs, path, budget) and \
            allowed(self.read_globs, self.resolve(path), budget)

    def ls(self, path: str) -> list[FileInfo]:
        budget = GlobBudget()
        return [entry for entry in self.inner.ls(path)
                if entry.is_dir or self._readable(entry.path, budget)]

    def read(self, path: str) -> str:
        self._check("read", path, GlobBudget())
        return self.inner.read(path)

    def write(self, path: str, content: str) -> None:
        self._check("write", path, GlobBudget())
        self.inner.write(path, content)

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> int:
        budget = GlobBudget()
        self._check("read", path, budget)
        self._check("write", path, budget)
        return self.inner.edit(path, old, new, replace_all)

    def glob(self, pattern: str, path: str = "/") -> list[str]:
        budget = GlobBudget()
        return [found for found in self.inner.glob(pattern, path)
                if self._readable(found, budget)]

    def grep(self, pattern: str, path: str = "/", glob: str | None = None) -> list[GrepMatch]:
        budget = GlobBudget()
        return [match for match in self.inner.grep(pattern, path, glob)
                if self._readable(match.path, budget)]


class ShellPermitted(Permitted):
    """A `Permitted` over a backend that runs commands (which no path list confines)."""

    inner: ShellCapable

    def execute(self, command: str, timeout: float | None = None) -> ExecuteResult:
        return self.inner.execute(command, timeout)


def permitted(inner: Backend, name: str, read: tuple[str, ...] | None,
              write: tuple[str, ...] | None) -> Backend:
    """`inner` with its permissions; itself when it has none."""
    if read is None and write is None:
        return inner
    if isinstance(inner, ShellCapable):
        return ShellPermitted(inner, name, read, write)
    return Permitted(inner, name, read, write)
