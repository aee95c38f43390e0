"""Project defaults: `agentspec.toml`, or the `[tool.agentspec]` table of `pyproject.toml`,
in the spec's directory or one above it inside its project. The nearest file wins
(`agentspec.toml` before `pyproject.toml` in one directory; a `pyproject.toml` without the
table is passed over).

```toml
[tool.agentspec]            # in agentspec.toml: the keys at the top level, and [diff]
select = ["AS2", "unknown-key"]
ignore = ["AS018"]

[tool.agentspec.diff]
fail-on = ["high", "security"]
except = ["AS518"]
```

A problem in the file is a diagnostic (AS015) at its line, and the file's other settings
still apply."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from agentspec.diagnostics import codes
from agentspec.diagnostics.codes import REGISTRY
from agentspec.diagnostics.model import Category, Diagnostic, Risk
from agentspec.diagnostics.selectors import (
    ChangeSelector,
    Selection,
    Selector,
    change_selector,
    selector,
)
from agentspec.diagnostics.suggest import did_you_mean
from agentspec.project_files import display_name, is_file, project_root, resolved
from agentspec.safefs import directory, read_file
from agentspec.source import Pos, SourceFile, Span

__all__ = ["Config", "find_config", "load_config"]

#: a config file is a few lines; anything larger is not one
MAX_BYTES = 256 * 1024

_KEYS = ("select", "ignore", "diff")
_DIFF_KEYS = ("fail-on", "except")
#: what entries are compared with for a did-you-mean
_WORDS = [*REGISTRY, *(c.name for c in REGISTRY.values()), *Risk, *Category]


@dataclass(frozen=True)
class Config:
    """What a project chose: None where the file does not say."""

    source: SourceFile | None = None
    select: tuple[Selector, ...] | None = None
    ignore: tuple[Selector, ...] = ()
    fail_on: tuple[ChangeSelector, ...] | None = None
    except_: tuple[ChangeSelector, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = field(default=())

    def selection(self, select: tuple[Selector, ...] | None = None,
                  ignore: tuple[Selector, ...] = ()) -> Selection:
        """The command line's over the file's: `--select` replaces the file's `select`,
        `--ignore` adds to its `ignore`."""
        chosen = select if select is not None else self.select or ()
        return Selection(chosen, (*self.ignore, *ignore))


def find_config(start: Path, *, top: Path | None = None) -> Path | None:
    """The config file for a spec (or a directory): the nearest above it, up to its
    project's root (or `top`)."""
    directory = resolved(start) if start.is_dir() else resolved(start).parent
    if top is not None:
        top = resolved(top)
        if not directory.is_relative_to(top):
            return None
    else:
        top = project_root(start) if not start.is_dir() else project_root(start / "spec")
    for candidate in (directory, *directory.parents):
        if is_file(candidate / "agentspec.toml"):
            return candidate / "agentspec.toml"
        pyproject = candidate / "pyproject.toml"
        if is_file(pyproject) and _has_table(pyproject):
            return pyproject
        if candidate == top:
            return None
    return None


def _read(path: Path, limit: int) -> bytes:
    """At most `limit` bytes of the regular file `path`: never through a link (a planted
    `agentspec.toml` must not show another file's lines), never waiting on a FIFO."""
    with directory(path.parent, create=False) as parent:
        return read_file(parent, path.name, shown=display_name(path), limit=limit)


def _has_table(pyproject: Path) -> bool:
    try:
        head = _read(pyproject, MAX_BYTES)
    except OSError:
        return False
    return re.search(rb"^\s*\[\s*tool\s*\.\s*agentspec\s*[\].]|^\s*tool\s*\.\s*agentspec\b",
                     head, re.MULTILINE) is not None


def load_config(path: Path | None) -> Config:
    """The settings of a config file (no file: no settings)."""
    if path is None:
        return Config()
    import tomllib  # only a project with a config file pays for the parser

    display = display_name(path)
    try:
        data = _read(path, MAX_BYTES + 1)
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        problem = codes.CONFIG_INVALID(f"cannot read the config file `{display}`: {error}",
                                       Span(display, Pos(1, 1)),
                                       hint="fix or remove the file")
        return Config(diagnostics=(problem,))
    source = SourceFile(path, text, display)
    if len(data) > MAX_BYTES:
        return Config(source, diagnostics=(codes.CONFIG_INVALID(
            f"the config file is larger than {MAX_BYTES // 1024} KiB",
            Span(display, Pos(1, 1)), hint="keep only agentspec's settings in it"),))
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        return Config(source, diagnostics=(_syntax(source, error),))
    except RecursionError:  # tomllib descends into nested arrays and tables recursively
        return Config(source, diagnostics=(codes.CONFIG_INVALID(
            "the config file nests arrays or tables too deeply", Span(source.name, Pos(1, 1)),
            hint="agentspec's settings are flat lists of strings"),))
    table: Any = document
    prefix: tuple[str, ...] = ()
    if path.name == "pyproject.toml":
        tool = document.get("tool")
        table, prefix = tool.get("agentspec", {}) if isinstance(tool, dict) else {}, \
            ("tool", "agentspec")
    return _Reader(source, prefix).read(table)


def _syntax(source: SourceFile, error: ValueError) -> Diagnostic:
    found = re.search(r"\(at line (\d+), column (\d+)\)", str(error))
    end = source.pos_at(len(source.text))
    line, col = (int(found.group(1)), int(found.group(2))) if found else \
        (end.line, end.col) if "end of document" in str(error) else (1, 1)
    message = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(error))
    return codes.CONFIG_INVALID(f"the config file is not valid TOML: {message}",
                                Span(source.name, Pos(line, col)),
                                hint="fix the TOML syntax at this position")


T = TypeVar("T")


class _Reader:
    """Reads the table, with positions found in the text (tomllib keeps none)."""

    def __init__(self, source: SourceFile, prefix: tuple[str, ...]) -> None:
        self.source, self.prefix = source, prefix
        self.problems: list[Diagnostic] = []

    def read(self, table: object) -> Config:
        if not isinstance(table, dict):
            self._problem((), None, "`tool.agentspec` must be a table",
                          "write `[tool.agentspec]`")
            return Config(self.source, diagnostics=tuple(self.problems))
        self._unknown(table, _KEYS, ())
        diff = table.get("diff", {})
        if not isinstance(diff, dict):
            self._problem((), "diff", "`diff` must be a table", "write `[diff]` settings "
                          "as a table of `fail-on` and `except`")
            diff = {}
        self._unknown(diff, _DIFF_KEYS, ("diff",))
        select = self._list(table, (), "select", selector, "a code, a code's name or a "
                            "prefix such as `AS2`")
        ignore = self._list(table, (), "ignore", selector, "a code, a code's name or a "
                            "prefix such as `AS2`")
        for entry in ignore or ():
            if entry.only_errors:
                self._problem((), "ignore", f"`{entry.text}` in `ignore` names only errors, "
                              "which are always reported", "remove it: `build` refuses a "
                              "spec with an error, so `validate` always reports it",
                              entry.text)
        fail_on = self._list(diff, ("diff",), "fail-on", change_selector, "a risk, a "
                             "category or a diff code (AS5xx)")
        except_ = self._list(diff, ("diff",), "except", change_selector, "a risk, a "
                             "category or a diff code (AS5xx)")
        return Config(self.source, select, ignore or (), fail_on, except_ or (),
                      tuple(self.problems))

    def _unknown(self, table: Mapping[str, Any], known: tuple[str, ...],
                 section: tuple[str, ...]) -> None:
        for key in table:
            if key not in known:
                hint = did_you_mean(key, list(known))
                self._problem(section, key, f"unknown setting `{key}`",
                              hint or f"agentspec reads {', '.join(f'`{k}`' for k in known)}")

    def _list(self, table: Mapping[str, Any], section: tuple[str, ...], key: str,
              parse: Callable[[str], T | None], what: str) -> tuple[T, ...] | None:
        if key not in table:
            return None
        value = table[key]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self._problem(section, key, f"`{key}` must be a list of strings",
                          f'write `{key} = ["..."]`, each entry {what}')
            return None
        found: list[T] = []
        for entry in value:
            parsed = parse(entry)
            if parsed is None:
                close = did_you_mean(entry, _WORDS)
                self._problem(section, key, f"`{entry}` in `{key}` names nothing",
                              close or f"each entry is {what}; `agentspec explain --all` "
                              "lists the codes", entry)
            else:
                found.append(parsed)
        return tuple(found)

    def _problem(self, section: tuple[str, ...], key: str | None, message: str, hint: str,
                 entry: str | None = None) -> None:
        self.problems.append(codes.CONFIG_INVALID(
            message, self._where((*self.prefix, *section), key, entry), hint=hint))

    def _where(self, section: tuple[str, ...], key: str | None, entry: str | None) -> Span:
        """The entry's position: after the table's header, the key's line, the entry's
        string on it; the nearest of them that is found."""
        lines = list(self.source.lines)  # TOML's line breaks only, as the parser counts
        header = re.compile(r"\s*\[\s*" + r"\s*\.\s*".join(map(re.escape, section))
                            + r"\s*\]") if section else None
        start = 0
        if header is not None:
            start = next((i for i, line in enumerate(lines) if header.match(line)), -1)
            if start < 0:
                return Span(self.source.name, Pos(1, 1))
            start += 1
        found = Pos(start if start else 1, 1)
        if key is None:
            return Span(self.source.name, found)
        pattern = re.compile(r"\s*(" + re.escape(key) + r"|\"" + re.escape(key) + r"\")\s*=")
        for index in range(start, len(lines)):
            if index > start and lines[index].lstrip().startswith("["):
                break
            match = pattern.match(lines[index])
            if match is None:
                continue
            return self._entry(lines, index, match.end(), entry) or \
                Span(self.source.name, Pos(index + 1, match.start(1) + 1))
        return Span(self.source.name, found)

    def _entry(self, lines: list[str], row: int, col: int, entry: str | None) -> Span | None:
        """Where the string `entry` is written in the value that starts at `row`, `col`
        (a list may span lines, up to the next key or table)."""
        if entry is None:
            return None
        for index in range(row, len(lines)):
            text = lines[index] if index > row else " " * col + lines[index][col:]
            if index > row and re.match(r"\s*(\[|[\w\"'-]+\s*=)", text):
                return None
            for quote in ('"', "'"):
                at = text.find(f"{quote}{entry}{quote}")
                if at >= 0:
                    return Span(self.source.name, Pos(index + 1, at + 1))
        return None
