"""validate's results for the specs an editor has open, cached by content.

What is incremental: a check of a spec is keyed by the hash of every text it read (the open
buffers and the files on disk it imports), so a request or a change that leaves them all
unchanged re-uses the last result; a keystroke re-runs `validate.check.check()` for the specs
whose tree holds the changed file (all the stages after parsing, for that tree only), and
re-indexes only the changed file's names (`symbols`, cached per text hash). Parsing, for the
checks and the indexes, goes through one `Reparser` (`parse.incremental`): an unchanged file
is not parsed again, and a changed one only in the piece (a top-level key, or one agent,
tool, model or backend) the edit is in. A keystroke in a scenario or
eval file checks that file only: what its spec tells of it (names, required state) is kept
while the spec's texts are unchanged. Diagnostics in an imported file are published on that
file and summarized at the `imports:` entry that brings it in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from agentspec.diagnostics import Diagnostic, Severity
from agentspec.diagnostics.selectors import Selection
from agentspec.diagnostics.suppress import hear
from agentspec.lsp.evalfiles import eval_occurrences
from agentspec.lsp.scenariofiles import scenario_occurrences
from agentspec.lsp.symbols import FileIndex, index_text
from agentspec.lsp.texts import Texts, digest
from agentspec.lsp.workspace import yaml_files
from agentspec.parse import MAX_BYTES
from agentspec.parse.incremental import Reparser
from agentspec.project_files import resolved
from agentspec.resolve.document import Document
from agentspec.source import SourceFile, Span

if TYPE_CHECKING:
    from agentspec.testing.names import SpecContext

__all__ = ["Analysis", "Checked", "file_kind", "is_data_file", "is_eval_file",
           "is_scenario_file"]


#: how many files `find_importers` reads at most
_SCAN = 400


def is_scenario_file(path: Path) -> bool:
    return path.parent.name == "scenarios" and path.suffix in (".yaml", ".yml")


def is_eval_file(path: Path) -> bool:
    return path.parent.name == "evals" and path.suffix in (".yaml", ".yml")


def is_data_file(path: Path) -> bool:
    """A scenario or eval file: checked against the spec beside its folder, and again when
    that spec changes."""
    return is_scenario_file(path) or is_eval_file(path)


def file_kind(path: Path) -> str:
    """Which language a file is written in: `spec`, `scenario` or `eval`."""
    return "scenario" if is_scenario_file(path) else "eval" if is_eval_file(path) else "spec"


@dataclass
class Checked:
    """One check of one spec (or scenario file) as the root."""

    root: Path
    key: tuple[tuple[str, str], ...]
    #: diagnostics by resolved file path
    by_file: dict[Path, list[Diagnostic]] = field(default_factory=dict)
    #: every file of the tree, by resolved path, with how diagnostics name it
    files: dict[Path, SourceFile] = field(default_factory=dict)
    #: the other files the check read: imports that did not parse or are not specs (not
    #: shown, as `validate` shows nothing of them), which a change must still re-check
    read: frozenset[Path] = frozenset()
    #: on the root: what each imported file's problems are, at its `imports:` entry
    summaries: list[Diagnostic] = field(default_factory=list)
    #: the resolved `vars` (hover shows a `${vars.X}`'s value)
    variables: dict[str, object] = field(default_factory=dict)
    #: the spec as resolved for its base environment, and its root agent (the outline's
    #: agent tree); None when it did not parse or has no root
    document: Document | None = None
    root_agent: str | None = None
    #: of a scenario or eval file: what its spec tells of it (the names it may use, the
    #: state it must give); None without a spec, or one that does not compile
    context: SpecContext | None = None


class Analysis:
    """The open buffers and the checks made of them."""

    def __init__(self) -> None:
        #: the open buffers and the files on disk, each read again only when it changed
        self.texts = Texts()
        self.checks: dict[Path, Checked] = {}
        #: parses a spec again piece by piece, keeping the pieces of the last texts
        self.reparser = Reparser()
        self._indexes: dict[tuple[Path, str], FileIndex] = {}
        #: each file's last index that parsed: completion offers its names while the line
        #: being typed leaves the file unparsable
        self.last_parsed: dict[Path, FileIndex] = {}
        #: what each spec tells its scenario and eval files, with the key of the texts it
        #: was read from: a keystroke in such a file does not check and lower the spec again
        self._contexts: dict[Path, tuple[tuple[tuple[str, str], ...], dict[Path, SourceFile],
                                          SpecContext, Selection]] = {}

    @property
    def buffers(self) -> dict[Path, str]:
        """The open documents' texts, by resolved path (the server sets them)."""
        return self.texts.buffers

    @buffers.setter
    def buffers(self, texts: dict[Path, str]) -> None:
        self.texts.buffers = texts

    def text_of(self, path: Path) -> str | None:
        return self.texts.text(path)

    def index(self, path: Path, display: str | None = None) -> FileIndex | None:
        text = self.text_of(path)
        if text is None or len(text) > MAX_BYTES:
            return None
        key = (path, self.texts.digest(path))
        found = self._indexes.get(key)
        if found is None:
            found = index_text(text, path, display or str(path), self.reparser.load_text)
            if is_eval_file(path):
                found.occurrences += eval_occurrences(found)
            elif is_scenario_file(path):
                found.occurrences += scenario_occurrences(found)
            if len(self._indexes) > 256:
                self._indexes.clear()
            self._indexes[key] = found
        if found.positions is not None:
            self.last_parsed[path] = found
        return found

    def roots_of(self, path: Path) -> list[Path]:
        """The specs last checked whose tree holds `path` (itself when none does): an
        imported file is checked as its importers see it, not as a spec of its own."""
        roots = [root for root, done in self.checks.items()
                 if (path in done.files or path in done.read) and root != path]
        importers = [root for root in roots if not is_data_file(root)]
        if importers:
            self.checks.pop(path, None)
        # the scenario and eval files of a spec are checked again when it changes
        return (importers or [path]) + [root for root in roots if is_data_file(root)]

    def find_importers(self, path: Path, folders: list[Path]) -> None:
        """Check the specs of `folders` that may import `path` (their text names it beside
        `imports`), so that it is checked as imported; at most `_SCAN` files are read, the
        nearest the top first (`workspace.yaml_files`)."""
        if any(path in done.files or path in done.read
               for root, done in self.checks.items() if root != path):
            return
        read = 0
        for folder in folders:
            for candidate in yaml_files(folder):
                if read >= _SCAN:
                    return
                if candidate == path:
                    continue
                target = resolved(candidate)
                if not target.is_relative_to(folder):  # a link out of the workspace
                    continue
                read += 1
                text = self.text_of(target) or ""
                if "imports" in text and path.name in text:
                    self.check(target)

    def check(self, root: Path) -> Checked:
        """The check of `root` with the open buffers in place of the files on disk; the last
        one when none of the texts it read has changed."""
        last = self.checks.get(root)
        if last is not None and last.key == self._key([*last.files, *last.read], root):
            return last
        done = self._data_file(root) if is_data_file(root) else self._spec(root)
        self.checks[root] = done
        return done

    def _key(self, files: Iterable[Path], root: Path, read: dict[Path, str] | None = None
             ) -> tuple[tuple[str, str], ...]:
        paths = sorted({root, *files})
        return tuple((str(p), digest(read[p]) if read and p in read else self.texts.digest(p))
                     for p in paths)

    def _spec(self, root: Path) -> Checked:
        from agentspec.validate.check import check

        texts = {p: t for p, t in self.buffers.items()}
        loaded: list[tuple[Path, str]] = []
        self.reparser.loaded = loaded
        try:
            result = check(root, texts=texts, reparser=self.reparser)
        finally:
            self.reparser.loaded = None
        files = {resolved(s.path): s for s in result.sources.values()}
        read = frozenset(resolved(p) for p, _ in loaded) - files.keys()
        # an import that did not parse: its problem is published on it, as validate names it
        by_name = {name: resolved(p) for p, name in loaded if resolved(p) in read}
        by_name.update({s.name: resolved(s.path) for s in result.sources.values()})
        done = Checked(root, (), files=files, read=read)
        for diag in result.diagnostics:
            where = by_name.get(diag.span.file) if diag.span else None
            done.by_file.setdefault(where or root, []).append(diag)
        done.by_file.setdefault(root, [])
        self._summarize_imports(done)
        data = result.document.data if result.document is not None else {}
        done.document, done.root_agent = result.document, result.root
        if isinstance(data.get("vars"), dict):
            done.variables = dict(data["vars"])
        # keyed by the texts the check read, not by a read after it: a file changed while
        # it was checked is checked again at the next request
        done.key = self._key([*files, *read], root, {p: s.text for p, s in files.items()})
        return done

    def _summarize_imports(self, done: Checked) -> None:
        """Each imported file's problems, summarized in the root at the `imports:` entry
        naming the file (at the `imports` key for a file imported through another). Found in
        the root's text: the root is not parsed a second time."""
        source = done.files.get(resolved(done.root))
        key = re.search(r"^imports[ \t]*:", source.text, re.M) if source else None
        if source is None or key is None:
            return
        for target, problems in done.by_file.items():
            if target == done.root or not problems:
                continue
            try:
                entry = target.relative_to(done.root.parent).as_posix()
            except ValueError:
                entry = target.name
            at = source.text.find(entry, key.end())
            start, end = (at, at + len(entry)) if at >= 0 else (key.start(), key.end() - 1)
            errors = sum(d.severity is Severity.ERROR for d in problems)
            first = next((d for d in problems if d.severity is Severity.ERROR), problems[0])
            summary = (f"`{entry}` has {len(problems)} problem{'s' * (len(problems) != 1)} "
                       f"({errors} error{'s' * (errors != 1)}); the first: {first.code} "
                       f"{first.message}")
            span = Span(source.name, source.pos_at(start), source.pos_at(end))
            done.summaries.append(replace(first, severity=Severity.ERROR if errors
                                          else Severity.WARNING, message=summary, span=span,
                                          hint=None, related=()))

    def _data_file(self, path: Path) -> Checked:
        """A scenario or eval file, checked as `validate` checks the one beside a spec."""
        from agentspec.testing.names import loose_context, spec_context

        spec = path.parent.parent / f"{path.stem}.yaml"
        context = loose_context()
        files: dict[Path, SourceFile] = {}
        selection = Selection()
        last = self._contexts.get(spec)
        if last is not None and last[0] == self._key(last[1], spec):
            _, files, context, selection = last
            files = dict(files)
        elif spec.is_file() or resolved(spec) in self.buffers:
            from agentspec.validate.check import check

            result = check(spec, texts=dict(self.buffers), reparser=self.reparser)
            context, selection = spec_context(result), result.selection
            # the spec's files are part of the key: a change in them re-checks this file
            files = {resolved(s.path): s for s in result.sources.values()}
            self._contexts[spec] = (self._key(files, spec), dict(files), context, selection)
        text = self.buffers.get(path)
        if is_eval_file(path):
            from agentspec.evaluation.check import check_evals

            found = check_evals(path, context.required, project=context.project,
                                names=context.names, text=text)
        else:
            from agentspec.testing.check import check_scenarios

            found = check_scenarios(path, context.required, project=context.project,
                                    names=context.names, text=text)
        files.update({resolved(s.path): s for s in found.sources.values()})
        done = Checked(path, (), files=files, context=context)
        # what the spec's project chose to hear, as `validate` tells of its scenario files
        done.by_file[path] = hear(found.diagnostics, found.sources, selection)
        done.key = self._key(files, path)
        return done
