"""The file tools (ls, read_file, write_file, edit_file, glob, grep, execute) for ADK.

The functions below are the tools' templates: their names, signatures and docstrings are
what the model sees. `make_file_tools` binds them to a backend factory (ToolContext ->
Backend) and returns FunctionTools. Tools never raise into ADK: failures come back as
`{"error": message}`.
"""

import asyncio
import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any

from google.adk.tools.tool_context import ToolContext

from agentspec.contract.harness_names import FILE_TOOLS
from agentspec.runtime.backends import GREP_LIMIT, Backend, BackendError, ShellCapable
from agentspec.runtime.harness.callbacks import HarnessTool
from agentspec.runtime.telemetry import set_attributes

__all__ = ["DEFAULT_READ_LINES", "FILE_TOOL_NAMES", "MAX_LINE_CHARS", "MAX_LIST_ENTRIES",
           "MAX_PATTERN_CHARS", "MAX_READ_CHARS", "MAX_READ_LINES", "BackendFactory",
           "make_file_tools"]

BackendFactory = Callable[[ToolContext], Backend]

MAX_LINE_CHARS = 2000
MAX_LIST_ENTRIES = 1000
#: read_file returns this many lines unless asked for more (deepagents' default), and at most
#: MAX_READ_LINES lines and MAX_READ_CHARS characters per call
DEFAULT_READ_LINES = 100
MAX_READ_LINES = 2000
MAX_READ_CHARS = 100_000
#: longest glob pattern or grep regular expression accepted
MAX_PATTERN_CHARS = 500


# -- templates: what the model sees ---------------------------------------------------------

def ls(path: str, tool_context: ToolContext) -> Any:
    """Lists the files and directories directly inside a directory of the workspace.

    Use this to explore the workspace before reading or editing; directories are shown
    with a trailing `/`, files with their size in bytes.

    Args:
      path: Absolute path of the directory to list, such as `/` or `/notes`.
    """
    raise NotImplementedError


def read_file(file_path: str, offset: int = 0, limit: int = 100,
              tool_context: ToolContext | None = None) -> Any:
    """Reads a text file from the workspace, with line numbers (like `cat -n`).

    Lines are numbered from 1, each as `<number><TAB><line>`. Lines longer than 2000
    characters are cut. For long files read a window at a time with `offset` and `limit`.
    Always read a file before editing it, so your edit matches its exact text (the line
    numbers and the TAB after them are not part of the file).

    Args:
      file_path: Absolute path of the file, such as `/notes/plan.md`.
      offset: Number of lines to skip before the first line returned (0 = from the start).
      limit: Maximum number of lines to return (default 100, at most 2000).
    """
    raise NotImplementedError


def write_file(file_path: str, content: str, tool_context: ToolContext) -> Any:
    """Writes a whole text file in the workspace, creating parent directories as needed.

    An existing file is replaced entirely; to change part of a file use edit_file instead.

    Args:
      file_path: Absolute path of the file, such as `/notes/plan.md`.
      content: The complete new content of the file.
    """
    raise NotImplementedError


def edit_file(file_path: str, old_string: str, new_string: str, replace_all: bool = False,
              tool_context: ToolContext | None = None) -> Any:
    """Replaces exact text in a file of the workspace.

    `old_string` must match the file exactly (whitespace and indentation included, without
    the line-number prefix read_file shows) and must be unique in the file, unless
    `replace_all` is true. Read the file first. Returns how many occurrences were replaced.

    Args:
      file_path: Absolute path of the file to edit.
      old_string: The exact text to replace; add surrounding lines to make it unique.
      new_string: The text to put in its place (may be empty to delete it).
      replace_all: Replace every occurrence instead of requiring exactly one.
    """
    raise NotImplementedError


def glob(pattern: str, path: str = "/", tool_context: ToolContext | None = None) -> Any:
    """Finds files whose path matches a glob pattern, such as `**/*.py` or `notes/*.md`.

    `*` matches within one directory level, `**` across levels, `?` one character,
    `[abc]` a character set, `{a,b}` alternatives. A pattern without `/` matches file names
    at any depth (`*.py` finds every Python file); one with `/` is matched against paths
    relative to `path`. Returns matching file paths (at most 1000).

    Args:
      pattern: The glob pattern.
      path: Absolute path of the directory to search in (default `/`, the whole workspace).
    """
    raise NotImplementedError


def grep(pattern: str, path: str = "/", glob: str | None = None,
         output_mode: str = "files_with_matches",
         tool_context: ToolContext | None = None) -> Any:
    """Searches the text files of the workspace for lines containing a text.

    The pattern is plain text, matched literally and case-sensitively (not a regular
    expression: `a.b` finds "a.b" only). Binary files are skipped and at most 1000 matching
    lines are considered.

    Args:
      pattern: The exact text to find, such as `def load_config` or `TODO`.
      path: Absolute path of a directory or file to search (default `/`, everything).
      glob: Only search files matching this glob, such as `*.py` (matched against the file
        name, or against the path when it contains `/`).
      output_mode: `files_with_matches` (default) lists the matching files; `content`
        shows the matching lines as `path:line_number: line`; `count` gives the number of
        matching lines per file.
    """
    raise NotImplementedError


def execute(command: str, timeout: float | None = None,
            tool_context: ToolContext | None = None) -> Any:
    """Runs a shell command (`/bin/sh -c`) in the workspace directory and returns its output.

    stdout and stderr are combined. Long output is cut, and a command that runs too long is
    killed together with everything it started. Use it for builds, tests, scripts and tools
    the file tools do not cover; use the file tools to read and edit files. Commands do
    not keep state between calls (no `cd` or variables carry over). Returns the output,
    the exit code, and whether the output was truncated or the command timed out.

    Args:
      command: The shell command line to run.
      timeout: Seconds before the command is killed (optional; it can only shorten the
        workspace's own limit).
    """
    raise NotImplementedError


_TEMPLATES: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (ls, read_file, write_file, edit_file, glob, grep, execute)}
FILE_TOOL_NAMES = FILE_TOOLS  # tests/test_contract.py: the tools made here are these


# -- implementations ------------------------------------------------------------------------

def _ls(backend: Backend, path: str) -> Any:
    entries = backend.ls(path)
    if not entries:
        return f"{path} is empty."
    lines = [f"{e.path}/" if e.is_dir else f"{e.path} ({e.size} bytes)"
             for e in entries[:MAX_LIST_ENTRIES]]
    if len(entries) > MAX_LIST_ENTRIES:
        lines.append(f"... [{len(entries) - MAX_LIST_ENTRIES} more entries not shown]")
    return "\n".join(lines)


def _read_file(backend: Backend, file_path: str, offset: int = 0,
               limit: int = DEFAULT_READ_LINES) -> Any:
    offset, limit = int(offset), int(limit)
    if offset < 0 or limit < 1:
        raise BackendError("offset must be 0 or more and limit 1 or more.")
    limit = min(limit, MAX_READ_LINES)
    text = backend.read(file_path)
    if text == "":
        return f"{file_path} exists but is empty."
    lines = text.splitlines()
    if offset >= len(lines):
        return (f"offset {offset} is past the end of {file_path}, which has {len(lines)} "
                "lines.")
    out: list[str] = []
    size = 0
    cut = False
    for number, line in enumerate(lines[offset:offset + limit], offset + 1):
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f"... [line cut at {MAX_LINE_CHARS} characters]"
        entry = f"{number:6d}\t{line}"
        if out and size + len(entry) + 1 > MAX_READ_CHARS - 200:  # room for the note
            cut = True
            break
        out.append(entry)
        size += len(entry) + 1
    shown_to = offset + len(out)
    if cut:
        out.append(f"... [output cut at {MAX_READ_CHARS:,} characters; {len(lines) - shown_to} "
                   f"more lines; read on with offset={shown_to}]")
    elif shown_to < len(lines):
        out.append(f"... [{len(lines) - shown_to} more lines; read on with offset={shown_to}]")
    return "\n".join(out)


def _write_file(backend: Backend, file_path: str, content: str) -> Any:
    backend.write(file_path, content)
    return {"status": "ok", "path": file_path, "bytes": len(content.encode("utf-8"))}


def _edit_file(backend: Backend, file_path: str, old_string: str, new_string: str,
               replace_all: bool = False) -> Any:
    count = backend.edit(file_path, old_string, new_string, bool(replace_all))
    return {"status": "ok", "path": file_path, "replacements": count}


def _check_pattern(kind: str, pattern: str) -> None:
    if len(pattern) > MAX_PATTERN_CHARS:
        raise BackendError(f"The {kind} is {len(pattern):,} characters long; the limit is "
                           f"{MAX_PATTERN_CHARS}. Use a shorter one.")


def _glob(backend: Backend, pattern: str, path: str = "/") -> Any:
    _check_pattern("glob pattern", pattern)
    paths = backend.glob(pattern, path)
    if not paths:
        return f"No files match {pattern!r} under {path}."
    lines = paths[:MAX_LIST_ENTRIES]
    if len(paths) > MAX_LIST_ENTRIES:
        lines.append(f"... [{len(paths) - MAX_LIST_ENTRIES} more matches not shown; use a "
                     "narrower pattern or path]")
    return "\n".join(lines)


def _grep(backend: Backend, pattern: str, path: str = "/", glob: str | None = None,
          output_mode: str = "files_with_matches") -> Any:
    if output_mode not in ("files_with_matches", "content", "count"):
        raise BackendError("output_mode must be files_with_matches, content or count.")
    _check_pattern("regular expression", pattern)
    if glob:
        _check_pattern("glob", glob)
    matches = backend.grep(pattern, path, glob)
    if not matches:
        return f"No matches for {pattern!r} under {path}."
    if output_mode == "content":
        lines = [f"{m.path}:{m.line_number}: {m.line[:MAX_LINE_CHARS]}" for m in matches]
    else:
        counts: dict[str, int] = {}
        for m in matches:
            counts[m.path] = counts.get(m.path, 0) + 1
        lines = ([f"{p}: {n}" for p, n in counts.items()] if output_mode == "count"
                 else list(counts))
    if len(matches) >= GREP_LIMIT:
        lines.append(f"... [results capped at {GREP_LIMIT} matching lines; narrow the search "
                     "with path, glob or a more specific pattern]")
    return "\n".join(lines)


def _execute(backend: Backend, command: str, timeout: float | None = None) -> Any:
    if not isinstance(backend, ShellCapable):
        raise BackendError("This workspace cannot run commands.")
    result = backend.execute(command, timeout)
    set_attributes(**{"agentspec.command.exit_code": result.exit_code,
                      "agentspec.command.timed_out": result.timed_out})
    return {"output": result.output, "exit_code": result.exit_code,
            "truncated": result.truncated, "timed_out": result.timed_out}


_IMPLS: dict[str, Callable[..., Any]] = {
    "ls": _ls, "read_file": _read_file, "write_file": _write_file, "edit_file": _edit_file,
    "glob": _glob, "grep": _grep, "execute": _execute}


# -- binding --------------------------------------------------------------------------------

def _error(exc: Exception) -> dict[str, str]:
    if isinstance(exc, BackendError):
        return {"error": str(exc)}
    return {"error": f"{type(exc).__name__}: {exc}"}


def _bind(name: str, factory: BackendFactory) -> Callable[..., Any]:
    template = _TEMPLATES[name]
    impl = _IMPLS[name]
    signature = inspect.signature(template)

    def call(kwargs: dict[str, Any]) -> Any:
        bound = signature.bind_partial(**kwargs)
        bound.apply_defaults()
        args = dict(bound.arguments)
        context = args.pop("tool_context", None)
        backend = factory(context)
        return impl(backend, **args)

    # Every tool runs in a worker thread, so a slow backend call (a huge directory tree, a
    # network filesystem) cannot block ADK's event loop.
    async def tool(**kwargs: Any) -> Any:
        try:
            return await asyncio.to_thread(call, kwargs)
        except Exception as exc:
            return _error(exc)

    functools.update_wrapper(tool, template)
    del tool.__wrapped__  # type: ignore[attr-defined]
    tool.__signature__ = signature  # type: ignore[attr-defined]
    return tool


def make_file_tools(backend_factory: BackendFactory,
                    names: Iterable[str] = FILE_TOOL_NAMES) -> list[HarnessTool]:
    """FunctionTools for `names` (any of FILE_TOOL_NAMES), each getting its backend from
    `backend_factory(tool_context)` on every call."""
    tools = []
    for name in names:
        if name not in _TEMPLATES:
            raise ValueError(f"unknown file tool {name!r}; expected one of {FILE_TOOL_NAMES}")
        tools.append(HarnessTool(_bind(name, backend_factory)))
    return tools
