"""What every semantic check reads: the typed spec, the positions, the sources."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any

from agentspec.diagnostics import Diagnostic, codes
from agentspec.language import Spec
from agentspec.language.agents import LlmAgent
from agentspec.project_files import Project, resolved
from agentspec.resolve.document import Document
from agentspec.source import SourceFile, Span

__all__ = ["Context"]


@dataclass
class Context:
    spec: Spec
    doc: Document
    sources: dict[str, SourceFile]
    #: names defined in each section, valid or not, so a broken definition is not also "unknown"
    defined: Mapping[str, set[str]]
    #: where paths may lead
    project: Project
    #: agents with structural errors: parts of them were cut out before these checks
    broken: set[str] = field(default_factory=set)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: `project.spec_paths`: the spec's paths, found once for the checks that read them
    paths: list[tuple[tuple[str | int, ...], str, str]] | None = None
    #: `directory_of` by file name: resolving a path asks the file system, per component
    directories: dict[str, FsPath] = field(default_factory=dict)

    def report(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(diagnostic)

    def at(self, *path: str | int) -> Span:
        return self.doc.pos.value_span(path)

    def key_at(self, *path: str | int) -> Span:
        return self.doc.pos.key_span(path)

    def has(self, *path: str | int) -> bool:
        return self.doc.pos.find(path) is not None

    def directory_of(self, span: Span) -> FsPath:
        """The directory of the file a value was written in: its paths are relative to it."""
        found = self.directories.get(span.file)
        if found is None:
            source = self.sources.get(span.file)
            found = resolved(source.path if source else FsPath(span.file)).parent
            self.directories[span.file] = found
        return found

    def outside(self, target: FsPath, span: Span, what: str, written: str = "") -> bool:
        """Whether `target` (written `written` at `span`) leads outside the project without
        `outside_project` allowing it; reported, and then never read."""
        where = self.project.judge(target)
        real = resolved(target)
        shown = f"`{written or target}`"
        if real != FsPath(os.path.normpath(target.absolute())):  # through a link
            shown += f" (which leads to `{real}`)"
        if where == "allowed":
            self.report(codes.OUTSIDE_PROJECT_USED(
                f"the {what} {shown} is outside the project; `outside_project` allows it",
                span))
        elif where == "outside":
            self.report(codes.PATH_OUTSIDE_PROJECT(
                f"the {what} {shown} is outside the project `{self.project.root}`", span,
                hint="keep the files a spec names inside its project; list a directory in "
                "`outside_project` only if the spec must reach outside"))
        return where == "outside"

    def raw_agent(self, name: str) -> dict[str, Any]:
        """An agent as resolved, before structural validation (also when it was invalid)."""
        agent = self.doc.section("agents").get(name)
        return agent if isinstance(agent, dict) else {}

    def agents(self) -> Iterator[tuple[str, Any]]:
        yield from self.spec.agents.items()

    def llm_agents(self) -> Iterator[tuple[str, LlmAgent]]:
        for name, agent in self.spec.agents.items():
            if isinstance(agent, LlmAgent):  # DeepAgent is an LlmAgent
                yield name, agent
