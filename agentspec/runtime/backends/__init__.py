"""Backends: where the harness file tools read and write, over virtual absolute paths.

Every backend sees paths such as `/notes/a.md`: absolute, `/`-separated, rooted at the
backend's own `/`. `normalize` turns whatever a user or a model wrote into that form and
refuses what cannot be one. Nothing here imports ADK, so backends are plain, testable
Python; the tools in `agentspec.runtime.harness` adapt them to ADK.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from agentspec.contract.globs import GlobBudget, glob_match, grep_glob_match
from agentspec.contract.virtual_paths import MAX_NAME_CHARS, MAX_PATH_CHARS, BackendError, normalize

__all__ = ["GREP_LIMIT", "MAX_EDIT_CHARS", "MAX_PATH_CHARS", "MAX_NAME_CHARS", "Backend",
           "BackendError", "ExecuteResult", "FileInfo", "GlobBudget", "GrepMatch", "ShellCapable",
           "apply_edit", "glob_match", "grep_glob_match", "is_utf8", "matching_lines",
           "normalize", "relative_to", "require_pattern"]

GREP_LIMIT = 1000
"""Backends return at most this many grep matches; the tools say when the cap was hit."""
MAX_EDIT_CHARS = 10 * 1024 * 1024
"""An edit whose result would be longer is refused before the text is built: `replace_all`
multiplies (a 10 MB file of one letter, each made 1,000, is 10 GB of memory)."""


@dataclass(frozen=True)
class FileInfo:
    path: str
    is_dir: bool
    size: int = 0


@dataclass(frozen=True)
class GrepMatch:
    path: str
    line_number: int
    line: str


@dataclass(frozen=True)
class ExecuteResult:
    output: str
    exit_code: int | None
    truncated: bool = False
    timed_out: bool = False


@runtime_checkable
class Backend(Protocol):
    """Files addressed by virtual absolute paths (`/notes/a.md`)."""

    def ls(self, path: str) -> list[FileInfo]: ...

    def read(self, path: str) -> str: ...

    def write(self, path: str, content: str) -> None: ...

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> int: ...

    def glob(self, pattern: str, path: str = "/") -> list[str]: ...

    def grep(self, pattern: str, path: str = "/",
             glob: str | None = None) -> list[GrepMatch]: ...


@runtime_checkable
class ShellCapable(Backend, Protocol):
    """A backend that can also run shell commands."""

    def execute(self, command: str, timeout: float | None = None) -> ExecuteResult: ...


def relative_to(path: str, base: str) -> str | None:
    """`path` relative to directory `base` (both normalized), or None when outside it."""
    if base == "/":
        return path.lstrip("/")
    if path == base:
        return ""
    if path.startswith(base + "/"):
        return path[len(base) + 1:]
    return None


def is_utf8(text: str) -> bool:
    """False for text no file system or database keeps: a lone surrogate (a name that was not
    valid UTF-8 on disk, surrogate-escaped by Python, or one a model wrote)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def require_pattern(pattern: str) -> None:
    if not pattern:
        raise BackendError("The pattern is empty; give the text to search for.")


def matching_lines(text: str, pattern: str) -> Iterator[tuple[int, str]]:
    """The (1-based number, line) of each line of `text` containing `pattern`, literally.

    Literal, as deepagents' grep: a pattern from the model can never make the search take
    exponential time (a regular expression such as `(a+)+$` can, and Python's `re` cannot
    be interrupted), and a file without the text is skipped in one pass."""
    if pattern not in text:
        return
    for number, line in enumerate(text.splitlines(), 1):
        if pattern in line:
            yield number, line


def apply_edit(content: str, path: str, old: str, new: str, replace_all: bool) -> tuple[str, int]:
    """The edited text and the number of replacements, or a BackendError a model can act on."""
    if old == "":
        raise BackendError("old_string is empty; give the exact text to replace (use "
                           "write_file to create or overwrite a whole file).")
    count = content.count(old)
    if count == 0:
        raise BackendError(f"old_string was not found in {path}. Read the file again and copy "
                           "the text exactly, including whitespace and indentation.")
    if count > 1 and not replace_all:
        raise BackendError(f"old_string appears {count} times in {path}. Add surrounding lines "
                           "to make it unique, or set replace_all=true to replace every one.")
    size = len(content) + (count if replace_all else 1) * (len(new) - len(old))
    if size > MAX_EDIT_CHARS:
        raise BackendError(f"The edit would make {path} {size:,} characters long; an edit may "
                           f"leave a file of at most {MAX_EDIT_CHARS:,}. Replace fewer "
                           "occurrences, or split the file.")
    if replace_all:
        return content.replace(old, new), count
    return content.replace(old, new, 1), 1
