"""The two versions `diff` compares, and the changes it reports."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentspec.diagnostics import Diagnostic
from agentspec.ir.lower import lower
from agentspec.ir.tree import AgentNode, AppNode, LlmFields, agents_called
from agentspec.review.changes import RISKS, SPEC, Change, Where
from agentspec.validate.check import CheckResult, check

__all__ = ["RISKS", "SPEC", "Change", "Side", "Where", "absent_side", "agents", "load_side"]

@dataclass
class Side:
    """One version of a spec, resolved and lowered."""

    label: str  # how files are shown: the path, or REV:path
    result: CheckResult
    app: AppNode | None
    problems: list[Diagnostic] = field(default_factory=list)
    display: Mapping[str, str] = field(default_factory=dict)  # source file -> shown name
    #: the spec does not exist in this version (added or removed since)
    absent: bool = False

    @property
    def agents(self) -> dict[str, AgentNode]:
        return {} if self.app is None else dict(agents(self.app.root))

    def has(self, *path: str | int) -> bool:
        """Whether the resolved document has an entry at `path`."""
        document = self.result.document
        return document is not None and document.pos.find(path) is not None

    def value(self, *path: str | int) -> Any:
        """The resolved document's value at `path` (None when there is none)."""
        value: Any = None if self.result.document is None else self.result.document.data
        for part in path:
            inside = part in value if isinstance(value, dict) else isinstance(
                value, list) and isinstance(part, int) and 0 <= part < len(value)
            if not inside:
                return None
            value = value[part]
        return value

    def defined(self, section: str, name: str | None, *under: str | int) -> Where | None:
        """Where a definition agents share (an entry of `models`, `backends`, `tools`), or a
        key under it, is; None when the spec has no such definition."""
        if name is None or not self.has(section, name):
            return None
        return self.where(section, name, *under)

    def where(self, *path: str | int, key: bool = False) -> Where | None:
        """The position of `path` in the resolved document (the key or the value)."""
        document = self.result.document
        if document is None:
            return None
        span = document.pos.key_span(path) if key else document.pos.value_span(path)
        found = document.pos.find(path)
        if found is None:  # fall back to the nearest enclosing entry that exists
            return self.where(*path[:-1], key=True) if len(path) > 1 else None
        return Where(self.display.get(span.file, span.file), span.start.line, span.start.col)

    def outside(self, relative: str | None) -> bool:
        """Whether a file named relative to the spec's directory is outside the project."""
        project = self.result.project
        return relative is not None and project is not None and project.judge(
            self.result.path.resolve().parent / relative) != "inside"


def load_side(path: Path, label: str, *, environment: str | None = None,
              environ: Mapping[str, str] | None = None,
              display: Mapping[str, str] | None = None, project: Path | None = None) -> Side:
    """One version of a spec; `project` is its project's root when it is not where the file
    is (a revision extracted from git)."""
    result = check(path, environment=environment, environ=environ, all_environments=False,
                   project=project)
    errors = [d for d in result.diagnostics if d.is_error]
    if errors:
        return Side(label, result, None, errors, dict(display or {}))
    app, problems = lower(result)
    return Side(label, result, app, problems, dict(display or {}))


def absent_side(path: Path, label: str) -> Side:
    """A version that has no spec at `path`: what an added spec is compared with."""
    return Side(label, CheckResult(path), None, absent=True)


def agents(root: AgentNode) -> Iterator[tuple[str, AgentNode]]:
    """Every agent the tree runs, by name (the general-purpose copy is its caller's)."""
    seen: set[str] = set()
    todo = [root]
    while todo:
        node = todo.pop(0)
        if node.name in seen:
            continue
        seen.add(node.name)
        yield node.name, node
        todo += [agent for agent in agents_called(node)
                 if not _general_purpose(node, agent)]


def _general_purpose(caller: AgentNode, agent: AgentNode) -> bool:
    """Whether `agent` is `caller`'s general-purpose copy (its `task` runs it)."""
    return isinstance(caller, LlmFields) and any(
        kind == "general-purpose" and copy is agent for kind, copy in caller.task.items())
