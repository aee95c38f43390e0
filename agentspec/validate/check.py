"""The front end in one call: load, resolve, validate, for one spec file."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from agentspec.diagnostics import Diagnostic, normalize
from agentspec.diagnostics.config import Config, find_config, load_config
from agentspec.diagnostics.selectors import Selection, Selector
from agentspec.diagnostics.suppress import hear
from agentspec.language import Spec
from agentspec.parse.incremental import Reparser
from agentspec.project_files import Project, resolved
from agentspec.resolve import Document, check_overlays, load_tree, resolve
from agentspec.source import SourceFile
from agentspec.validate.semantic import semantic
from agentspec.validate.structural import structural

__all__ = ["CheckResult", "check", "heard"]


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
    #: what the user hears of it (`heard`): its scenario files are told the same
    selection: Selection = field(default_factory=Selection)


def _place(diag: Diagnostic) -> tuple[str, int, int, str]:
    file, line, col, code, _ = diag.sort_key()
    return file, line, col, code


def check(path: Path, *, environment: str | None = None,
          environ: Mapping[str, str] | None = None, all_environments: bool = True,
          project: Path | None = None, texts: Mapping[Path, str] | None = None,
          select: tuple[Selector, ...] | None = None,
          ignore: tuple[Selector, ...] = (), reparser: Reparser | None = None) -> CheckResult:
    """Validate `path`, reporting what the user chose to hear (`heard`). A `reparser`
    parses only what changed since the texts it last parsed (the language server's)."""
    return heard(_check(path, environment=environment, environ=environ,
                        all_environments=all_environments, project=project, texts=texts,
                        reparser=reparser),
                 select, ignore,
                 project=project)


def heard(result: CheckResult, select: tuple[Selector, ...] | None = None,
          ignore: tuple[Selector, ...] = (), *, project: Path | None = None) -> CheckResult:
    """`result` without the warnings its spec's `# agentspec: ignore[...]` comments and its
    project's config file hide (`select` replaces the file's, `ignore` adds to it), with
    the problems of both; errors and the config file's problems are never hidden. The
    config file is looked for up to `project` when given (a revision's extracted tree),
    else up to the spec's project root."""
    config = load_config(find_config(result.path, top=project)) if result.readable \
        else Config()
    result.selection = config.selection(select, ignore)
    if config.source is not None:
        result.sources[config.source.name] = config.source
    spec = resolved(result.path)
    own = {name for name, source in result.sources.items() if resolved(source.path) == spec}
    # the file's own problems are always heard: its `select` must not hide its typos
    result.diagnostics = normalize([*hear(result.diagnostics, result.sources,
                                          result.selection, unused_in=own),
                                    *config.diagnostics])
    return result


def _check(path: Path, *, environment: str | None, environ: Mapping[str, str] | None,
           all_environments: bool, project: Path | None,
           texts: Mapping[Path, str] | None, reparser: Reparser | None) -> CheckResult:
    """Validate `path`.

    With `environment`, the spec is checked with that overlay applied. Without it the base spec
    is checked and, when `all_environments` is set, each overlay too, so a broken `prod`
    overlay fails in CI before anyone deploys it. Paths must stay in the project: the git
    work tree holding the spec, its directory, or `project` when given. `texts` stands in
    for spec files on disk, by path (an editor's unsaved buffers; `check_text`).
    """
    environ = os.environ if environ is None else environ
    loaded = load_tree(path, project=project, texts=texts, reparser=reparser)
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
