"""Files kept in session state, so they persist with the session service."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Protocol

from agentspec.runtime.backends import (
    GREP_LIMIT,
    BackendError,
    FileInfo,
    GlobBudget,
    GrepMatch,
    apply_edit,
    glob_match,
    grep_glob_match,
    matching_lines,
    normalize,
    relative_to,
    require_pattern,
)
from agentspec.runtime.backends.transfer import Transfers

__all__ = ["DEFAULT_KEY", "StateBackend"]

DEFAULT_KEY = "agentspec:files"


class _StateLike(Protocol):
    """A MutableMapping, or ADK's `State` (which has the same item access)."""

    def __getitem__(self, key: str) -> Any: ...

    def __setitem__(self, key: str, value: Any) -> None: ...

    def get(self, key: str, default: Any = None) -> Any: ...


class StateBackend(Transfers):
    """Files as `{virtual path: {"content": str, "modified": iso time}}` under one state key.

    Directories are implicit: a directory exists while a file lies under it. Every change
    reassigns the whole dict, so ADK records a state delta and the files persist.
    """

    def __init__(self, state: _StateLike, key: str = DEFAULT_KEY) -> None:
        self.state = state
        self.key = key

    def _files(self) -> dict[str, dict[str, Any]]:
        files = self.state.get(self.key)
        return dict(files) if isinstance(files, dict) else {}

    def _is_dir(self, files: dict[str, dict[str, Any]], path: str) -> bool:
        prefix = path.rstrip("/") + "/"
        return path == "/" or any(p.startswith(prefix) for p in files)

    def ls(self, path: str) -> list[FileInfo]:
        path = normalize(path)
        files = self._files()
        if path in files:
            return [FileInfo(path, False, _size(files[path]))]
        if not self._is_dir(files, path):
            raise BackendError(f"No such file or directory: {path}")
        found: dict[str, FileInfo] = {}
        for name, entry in files.items():
            rel = relative_to(name, path)
            if not rel:
                continue
            head, sep, _ = rel.partition("/")
            child = path.rstrip("/") + "/" + head
            found[child] = FileInfo(child, True, 0) if sep else FileInfo(child, False,
                                                                         _size(entry))
        return sorted(found.values(), key=lambda f: f.path)

    def read(self, path: str) -> str:
        path = normalize(path)
        files = self._files()
        if path not in files:
            if self._is_dir(files, path):
                raise BackendError(f"{path} is a directory; use ls to list it.")
            raise BackendError(f"File not found: {path}")
        return str(files[path].get("content", ""))

    def write(self, path: str, content: str) -> None:
        path = normalize(path)
        if path == "/":
            raise BackendError("Cannot write to `/`; give a file path such as `/notes.md`.")
        files = self._files()
        if path not in files and self._is_dir(files, path):
            raise BackendError(f"{path} is a directory; choose a file path.")
        parent = path
        while parent != "/":
            parent = parent.rsplit("/", 1)[0] or "/"
            if parent in files:
                raise BackendError(f"{parent} is a file, so it cannot contain {path}.")
        files[path] = {"content": str(content),
                       "modified": datetime.now(UTC).isoformat(timespec="seconds")}
        self.state[self.key] = files

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> int:
        path = normalize(path)
        text, count = apply_edit(self.read(path), path, old, new, replace_all)
        self.write(path, text)
        return count

    def glob(self, pattern: str, path: str = "/") -> list[str]:
        path = normalize(path)
        out = []
        budget = GlobBudget()
        for name in self._files():
            rel = relative_to(name, path)
            if rel and glob_match(pattern, rel, budget):
                out.append(name)
        return sorted(out)

    def grep(self, pattern: str, path: str = "/", glob: str | None = None) -> list[GrepMatch]:
        require_pattern(pattern)
        path = normalize(path)
        out: list[GrepMatch] = []
        files = self._files()
        budget = GlobBudget()
        for name in sorted(files):
            if relative_to(name, path) is None or not grep_glob_match(glob, name, budget):
                continue
            for number, line in matching_lines(str(files[name].get("content", "")), pattern):
                out.append(GrepMatch(name, number, line))
                if len(out) >= GREP_LIMIT:
                    return out
        return out


def _size(entry: dict[str, Any]) -> int:
    return len(str(entry.get("content", "")).encode("utf-8"))
