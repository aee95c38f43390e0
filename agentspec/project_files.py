"""Filesystem questions about paths that come from specs: answered, never raised."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

__all__ = ["Project", "display_name", "is_dir", "is_file", "list_dir", "project_root",
           "resolved"]


def is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):  # over-long names, NUL bytes, permissions
        return False


def is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def list_dir(path: Path) -> list[Path]:
    try:
        return sorted(path.iterdir())
    except (OSError, ValueError):
        return []


def resolved(path: Path) -> Path:
    """`path` made absolute and normalised, without failing on strange input."""
    try:
        return path.resolve()
    except (OSError, ValueError, RuntimeError):
        return path.absolute()


def display_name(path: Path) -> str:
    """How diagnostics name a file: relative to the working directory when it is below it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if relative.startswith("..") else relative


def _is_work_tree(directory: Path) -> bool:
    """Whether `directory` is the top of a git work tree: `.git` is a repository (a
    directory with HEAD) or a `gitdir:` file (a linked work tree, a submodule); a stray
    empty `.git` makes no project."""
    marker = directory / ".git"
    try:
        if marker.is_dir():
            return (marker / "HEAD").is_file()
        if not marker.is_file():  # absent, or a FIFO that would block
            return False
        info = marker.stat()
        # read again only when the file changed: the language server asks on every request
        return _names_gitdir(str(marker), (info.st_size, info.st_mtime_ns, info.st_ctime_ns,
                                           info.st_ino, info.st_dev))
    except OSError:
        return False


@lru_cache(maxsize=256)
def _names_gitdir(marker: str, stamp: tuple[int, ...]) -> bool:
    with open(marker, "rb") as handle:
        return handle.read(7) == b"gitdir:"


def project_root(spec: Path) -> Path:
    """The project a spec belongs to: the git work tree holding it (the nearest directory
    above it that is one), else the spec's own directory. Links are resolved first, so the
    project is where the file really is."""
    directory = resolved(spec).parent
    return next((c for c in (directory, *directory.parents) if _is_work_tree(c)), directory)


@dataclass(frozen=True)
class Project:
    """Where a spec's paths may lead: inside `root`, or under an `allowed` directory that
    the spec's `outside_project` lists (both resolved)."""

    root: Path
    allowed: tuple[Path, ...] = ()

    @classmethod
    def of(cls, spec: Path, entries: object, *, root: Path | None = None) -> Project:
        """The project of the main spec file `spec` (`root` overrides where it is), with
        its `outside_project` entries (literal strings; anything else is reported by
        validate and allows nothing)."""
        listed = [e for e in entries if isinstance(e, str) and e and "${" not in e] \
            if isinstance(entries, list) else []
        base = resolved(spec).parent
        return cls(resolved(root) if root is not None else project_root(spec),
                   tuple(resolved(base / entry) for entry in listed))

    def judge(self, path: Path) -> str:
        """`inside` the project, `allowed` by `outside_project`, or `outside`; `path` is
        resolved first (links and `..` count)."""
        target = resolved(path)
        if target.is_relative_to(self.root):
            return "inside"
        return "allowed" if any(target.is_relative_to(a) for a in self.allowed) else "outside"
