"""Imports: merge the models, tools, backends and agents of other spec files."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentspec.diagnostics import Diagnostic, Related, codes, did_you_mean
from agentspec.language.document import TOP_LEVEL_KEYS
from agentspec.parse import Parsed, PosNode, load, read_text
from agentspec.parse.incremental import Reparser
from agentspec.parse.loader import load_text
from agentspec.project_files import Project, display_name, is_dir, is_file, resolved
from agentspec.resolve.document import SECTIONS, Document
from agentspec.source import SourceFile, Span

__all__ = ["Loaded", "load_tree"]

MAX_IMPORT_DEPTH = 64
_IMPORTABLE = {*SECTIONS, "imports", "agentspec", "description"}


#: an imported file is a spec when it is a mapping with one of these
_SPEC_KEYS = {*SECTIONS, "imports", "agentspec"}
_SPEC_SUFFIXES = (".yaml", ".yml")


@dataclass
class Loaded:
    """The root document with every import merged in, each file's source, and the project
    its paths must stay in."""

    document: Document | None
    project: Project
    readable: bool = True
    sources: dict[str, SourceFile] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def _read(path: Path, display: str, texts: Mapping[Path, str],
          reparser: Reparser | None = None) -> Parsed:
    """A spec file parsed: from `texts` (an editor's unsaved buffers, by resolved path) when
    it is there, else from disk; by `reparser` when given (it keeps what it parsed)."""
    text = texts.get(resolved(path)) if texts else None
    if reparser is not None:
        if text is None:
            text, _ = read_text(path, display)
        if text is not None:
            return reparser.load_text(text, path=path, display=display)
    return load(path, display=display) if text is None else \
        load_text(text, path=path, display=display)


class _Importer:
    def __init__(self, project: Project, texts: Mapping[Path, str],
                 reparser: Reparser | None) -> None:
        self.result = Loaded(None, project)
        self.done: set[Path] = set()
        self.texts = texts
        self.reparser = reparser

    def register(self, parsed: Parsed) -> None:
        self.result.sources[parsed.source.name] = parsed.source
        self.result.diagnostics.extend(parsed.diagnostics)

    def allowed(self, child: Path, entry: str, span: Span) -> bool:
        """Whether the imported file may be read: inside the project (or under
        `outside_project`), and named like a spec file."""
        project = self.result.project
        where = project.judge(child)
        if where == "outside":
            self.result.diagnostics.append(codes.PATH_OUTSIDE_PROJECT(
                f"the imported file `{entry}` is outside the project `{project.root}`", span,
                hint="import files of the project; list a directory in `outside_project` "
                "only if the spec must read files outside it"))
            return False
        if where == "allowed":
            self.result.diagnostics.append(codes.OUTSIDE_PROJECT_USED(
                f"the imported file `{resolved(child)}` is outside the project; "
                "`outside_project` allows it", span))
        if child.suffix.lower() not in _SPEC_SUFFIXES:
            self.result.diagnostics.append(codes.IMPORT_NOT_A_SPEC(
                f"`{entry}` is not a spec file: imports take `.yaml` or `.yml` files", span))
            return False
        return True

    def parse_spec(self, child: Path, entry: str, span: Span) -> Parsed | None:
        """The imported file parsed, when it is a spec; a file that is not one is refused
        without its content appearing anywhere (no message quotes it, no excerpt shows it)."""
        parsed = _read(child, display_name(child), self.texts, self.reparser)
        if parsed.positions is not None and _SPEC_KEYS & set(parsed.value):
            self.register(parsed)
            return parsed
        refused = {codes.NOT_A_MAPPING.code, codes.EMPTY_FILE.code}
        if parsed.positions is not None or any(d.code in refused for d in parsed.diagnostics):
            self.result.diagnostics.append(codes.IMPORT_NOT_A_SPEC(
                f"`{entry}` is not a spec: it has none of `agents`, `tools`, `models`, "
                "`backends` or `imports` (its content is not shown)", span))
        else:  # unreadable, or not YAML: the problem, never the text around it
            self.result.diagnostics.extend(parsed.diagnostics)
        return None

    def merge_imports(self, target: Document, doc: Document, path: Path,
                      stack: tuple[Path, ...]) -> None:
        imports = doc.data.get("imports")
        if imports is None:
            return
        if not isinstance(imports, list):
            if doc is not target:  # the main spec's `imports` is checked structurally
                self.result.diagnostics.append(codes.WRONG_TYPE(
                    "`imports` must be a list of paths", doc.value_span("imports")))
            return
        for index, entry in enumerate(imports):
            if isinstance(entry, str):
                self.merge_one(target, doc, path, index, entry, stack)

    def merge_one(self, target: Document, doc: Document, path: Path, index: int, entry: str,
                  stack: tuple[Path, ...]) -> None:
        span = doc.value_span("imports", index)
        child = resolved(path.parent / entry)
        if "${" in entry:
            self.result.diagnostics.append(codes.BAD_INTERPOLATION(
                "`imports` paths are read before interpolation, so they cannot use `${...}`",
                span, hint="write the path literally"))
            return
        if len(stack) > MAX_IMPORT_DEPTH:
            self.result.diagnostics.append(codes.IMPORT_CYCLE(
                f"imports nest more than {MAX_IMPORT_DEPTH} files deep", span,
                hint="import the files from one place instead of in a chain"))
            return
        if child in stack:
            chain = " -> ".join(display_name(p) for p in (*stack[stack.index(child):], child))
            self.result.diagnostics.append(codes.IMPORT_CYCLE(
                f"import cycle: {chain}", span, hint="move shared definitions to a file "
                "that imports neither"))
            return
        if child in self.done:
            return  # a diamond: already merged once
        if not self.allowed(child, entry, span):
            return
        if not is_file(child):
            problem = "is a directory" if is_dir(child) else "does not exist"
            self.result.diagnostics.append(codes.IMPORT_NOT_FOUND(
                f"the imported file `{entry}` {problem}", span,
                hint=f"the path is relative to `{display_name(path)}`"))
            return
        self.done.add(child)
        parsed = self.parse_spec(child, entry, span)
        if parsed is None or parsed.positions is None:
            return
        imported = Document(parsed.value, parsed.positions)
        self.report_ignored(imported)
        self.merge_imports(target, imported, child, (*stack, child))
        self.merge_sections(target, imported)

    def report_ignored(self, doc: Document) -> None:
        version = doc.data.get("agentspec", 1)
        if version != 1 or isinstance(version, bool):
            self.result.diagnostics.append(codes.UNSUPPORTED_VERSION(
                f"language version `{version}` is not supported", doc.value_span("agentspec"),
                hint="this release supports version 1: write `agentspec: 1`"))
        for key in doc.data:
            if key not in TOP_LEVEL_KEYS:
                self.result.diagnostics.append(codes.UNKNOWN_KEY(
                    f"unknown top-level key `{key}`", doc.key_span(key),
                    hint=did_you_mean(key, TOP_LEVEL_KEYS)))
            elif key not in _IMPORTABLE:
                self.result.diagnostics.append(codes.IMPORT_IGNORED_KEY(
                    f"`{key}` in an imported file is ignored", doc.key_span(key),
                    hint="only models, tools, backends and agents are imported; set it in "
                    "the main spec"))

    def merge_sections(self, target: Document, doc: Document) -> None:
        for section in SECTIONS:
            entries = doc.data.get(section)
            if entries is None:
                continue
            if not isinstance(entries, dict):
                self.result.diagnostics.append(codes.WRONG_TYPE(
                    f"`{section}` must be a mapping of names", doc.value_span(section)))
                continue
            self.merge_section(target, doc, section, entries)

    def merge_section(self, target: Document, doc: Document, section: str,
                      entries: dict[str, object]) -> None:
        if section in target.data and not isinstance(target.data[section], dict):
            return  # the main spec's wrong type is reported by structural validation
        if section not in target.data:
            target.data[section] = {}
            target.pos = target.pos.with_child(section, PosNode(doc.value_span(section),
                                                                 doc.key_span(section)))
        for name, value in entries.items():
            node = doc.pos.find((section, name)) or PosNode(doc.value_span(section))
            if name in target.data[section]:
                self.result.diagnostics.append(codes.DUPLICATE_NAME(
                    f"`{name}` is defined twice in `{section}`", node.key or node.value,
                    hint="rename one of the two definitions",
                    related=[Related(target.key_span(section, name), "first defined here")]))
                continue
            target.set((section, name), value, node)


def load_tree(path: Path, *, project: Path | None = None,
              texts: Mapping[Path, str] | None = None,
              reparser: Reparser | None = None) -> Loaded:
    """Load `path` and merge its imports (depth first, each file once, none from outside
    the project: the git work tree holding `path`, its directory, or `project`). `texts`
    stands in for files on disk, by resolved path (an editor's unsaved buffers); a
    `reparser` parses what changed since its last texts only (the language server's)."""
    texts = {resolved(p): t for p, t in (texts or {}).items()}
    parsed = _read(path, display_name(path) if path.is_absolute() else str(path), texts,
                   reparser)
    entries = parsed.value.get("outside_project") if isinstance(parsed.value, dict) else None
    importer = _Importer(Project.of(path, entries, root=project), texts, reparser)
    importer.register(parsed)
    root_path = resolved(path)
    importer.result.readable = parsed.readable
    if parsed.positions is None:
        return importer.result
    document = Document(parsed.value, parsed.positions)
    importer.done.add(root_path)
    importer.merge_imports(document, document, root_path, (root_path,))
    importer.result.document = document
    return importer.result
