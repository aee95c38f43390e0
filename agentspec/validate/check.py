"""The front end in one call: load, resolve, validate, for one spec file."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from agentspec.diagnostics import Diagnostic, normalize
from agentspec.language import Spec
from agentspec.project_files import Project
from agentspec.resolve import Document, check_overlays, load_tree, resolve
from agentspec.source import SourceFile
from agentspec.validate.semantic import semantic
from agentspec.validate.structural import structural

__all__ = ["CheckResult", "check"]


@dataclass
class CheckResult:
    """What the front end knows about one spec: the valid spec, its root, every problem."""

    path: Path
    #: where the spec's paths may lead (its project, and what `outside_project` allows)
    project: Project | None = None
    spec: Spec | None = None
    document: Document | None = None
    root: str | None = None
    sources: dict[str, SourceFile] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)

    #: False when the spec file itself could not be read (missing, a directory, ...)
    readable: bool = True


def _place(diag: Diagnostic) -> tuple[str, int, int, str]:
    file, line, col, code, _ = diag.sort_key()
    return file, line, col, code


def check(path: Path, *, environment: str | None = None,
          environ: Mapping[str, str] | None = None, all_environments: bool = True,
          project: Path | None = None, texts: Mapping[Path, str] | None = None
          ) -> CheckResult:
    """Validate `path`.

    With `environment`, the spec is checked with that overlay applied. Without it the base spec
    is checked and, when `all_environments` is set, each overlay too, so a broken `prod`
    overlay fails in CI before anyone deploys it. Paths must stay in the project: the git
    work tree holding the spec, its directory, or `project` when given. `texts` stands in
    for spec files on disk, by path (an editor's unsaved buffers; `check_text`).
    """
    environ = os.environ if environ is None else environ
    loaded = load_tree(path, project=project, texts=texts)
    result = CheckResult(path, loaded.project, sources=loaded.sources,
                         diagnostics=list(loaded.diagnostics), readable=loaded.readable)
    if loaded.document is None:
        result.diagnostics = normalize(result.diagnostics)
        return result
    result.diagnostics += check_overlays(loaded.document)
    runs = [environment]
    if environment is None and all_environments:
        runs += [name for name, overlay in loaded.document.section("environments").items()
                 if isinstance(overlay, dict)]
    seen: set[tuple[str, int, int, str]] = set()
    for index, env in enumerate(runs):
        doc, found = resolve(loaded.document, environment=env, environ=environ,
                             sources=loaded.sources)
        structure = structural(doc)
        root, more = semantic(structure, doc, result.sources, loaded.project)
        problems = found + structure.diagnostics + more
        if index == 0:
            result.spec, result.document, result.root = structure.spec, doc, root
            seen = {_place(d) for d in problems}
            result.diagnostics += problems
        else:  # only what this overlay adds, saying so
            result.diagnostics += [replace(d, message=f"{d.message} (in environment `{env}`)")
                                   for d in problems if _place(d) not in seen]
    result.diagnostics = normalize(result.diagnostics)
    return result
