"""Imports: merge the models, tools, backends and agents of other spec files."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agentspec.diagnostics import Diagnostic, Related, codes, did_you_mean
from agentspec.parse import Parsed, PosNode, load
from agentspec.paths import display_name, is_dir, is_file, resolved
from agentspec.resolve.document import SECTIONS, Document
from agentspec.source import SourceFile
from agentspec.spec.document import TOP_LEVEL_KEYS

__all__ = ["Loaded", "load_tree"]

MAX_IMPORT_DEPTH = 64
_IMPORTABLE = {*SECTIONS, "imports", "agentspec", "description"}


@dataclass
class Loaded:
    """The root document with every import merged in, and each file's source."""

    document: Document | None
    readable: bool = True
    sources: dict[str, SourceFile] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)




class _Importer:
    def __init__(self) -> None:
        self.result = Loaded(None)
        self.done: set[Path] = set()

    def load(self, path: Path, display: str) -> Parsed:
        parsed = load(path, display=display)
        self.result.sources[parsed.source.name] = parsed.source
        self.result.diagnostics.extend(parsed.diagnostics)
        return parsed

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
        if not is_file(child):
            problem = "is a directory" if is_dir(child) else "does not exist"
            self.result.diagnostics.append(codes.IMPORT_NOT_FOUND(
                f"the imported file `{entry}` {problem}", span,
                hint=f"the path is relative to `{display_name(path)}`"))
            return
        parsed = self.load(child, display_name(child))
        self.done.add(child)
        if parsed.positions is None:
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


def load_tree(path: Path) -> Loaded:
    """Load `path` and merge its imports (depth first, each file once)."""
    importer = _Importer()
    root_path = resolved(path)
    parsed = importer.load(path, display_name(path) if path.is_absolute() else str(path))
    importer.result.readable = parsed.readable
    if parsed.positions is None:
        return importer.result
    document = Document(parsed.value, parsed.positions)
    importer.done.add(root_path)
    importer.merge_imports(document, document, root_path, (root_path,))
    importer.result.document = document
    return importer.result
