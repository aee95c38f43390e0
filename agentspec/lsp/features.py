"""The requests, as functions of the analysis, a file and a place: definition, references,
rename, completion, hover, code actions and document symbols."""

from __future__ import annotations

import re
from pathlib import Path

from lsprotocol import types as lsp

from agentspec.diagnostics import Diagnostic, Severity, lookup
from agentspec.language.common import is_reserved_word
from agentspec.lsp.analysis import Analysis, file_kind, is_data_file
from agentspec.lsp.cursor import context_at, word_at
from agentspec.lsp.evalfiles import eval_completion
from agentspec.lsp.positions import pos_of, range_of, uri_of
from agentspec.lsp.pycomplete import python_completion
from agentspec.lsp.schemahelp import describe, keys_at
from agentspec.lsp.symbols import KINDS, FileIndex, Occurrence
from agentspec.project_files import Project, resolved
from agentspec.source import Span

__all__ = ["completion", "definition", "diagnostics_of", "hover", "lines_of", "references",
           "rename"]

#: the kinds of name a key's value names, for completion
_EXPECTS = {"model": "model", "tools": "tool", "sub_agents": "agent", "agents": "agent",
            "extends": "agent", "agent": "agent", "root": "agent", "filesystem": "backend",
            "default": "backend", "routes": "backend", "backend": "backend"}
_RENAMABLE = ("agent", "tool", "model", "backend")
_SEVERITY = {Severity.ERROR: lsp.DiagnosticSeverity.Error,
             Severity.WARNING: lsp.DiagnosticSeverity.Warning,
             Severity.INFO: lsp.DiagnosticSeverity.Information}


def lines_of(analysis: Analysis, path: Path) -> list[str]:
    for done in analysis.checks.values():  # the text the check read: no second parse
        if path in done.files:
            return list(done.files[path].lines)
    index = analysis.index(path)
    if index is not None:
        return list(index.source.lines)
    return (analysis.text_of(path) or "").splitlines()


def diagnostics_of(analysis: Analysis, path: Path, found: list[Diagnostic],
                   summaries: list[Diagnostic] | None = None) -> list[lsp.Diagnostic]:
    """`found` (and the import `summaries`) as the protocol's diagnostics."""
    lines = lines_of(analysis, path)
    shown: list[lsp.Diagnostic] = []
    for diag in [*found, *(summaries or ())]:
        span = diag.span or Span(str(path), pos_of(lsp.Position(0, 0), lines))
        message = diag.message + (f"\n{diag.hint}" if diag.hint else "")
        shown.append(lsp.Diagnostic(range_of(span, lines), message, _SEVERITY[diag.severity],
                                    code=diag.code, source="agentspec",
                                    data={"hint": diag.hint or "", "name": diag.name,
                                          "message": diag.message,
                                          "summary": diag in (summaries or ())}))
    return shown


def _tree(analysis: Analysis, path: Path, *, last_parsed: bool = False
          ) -> list[tuple[Path, FileIndex]]:
    """The indexes of every file of the trees `path` is in (the file first); with
    `last_parsed`, a file that does not parse now gives its last index that did."""
    files: dict[Path, None] = {path: None}
    for root in analysis.roots_of(path):
        done = analysis.checks.get(root)
        for file in done.files if done else ():
            if file.suffix in (".yaml", ".yml"):
                files[file] = None
        files.update(dict.fromkeys(_data_files(analysis, root)))
    found: list[tuple[Path, FileIndex]] = []
    for file in files:
        index = analysis.index(file)
        if last_parsed and (index is None or index.positions is None):
            index = analysis.last_parsed.get(file, index)
        if index is not None:
            found.append((file, index))
    return found


def _data_files(analysis: Analysis, root: Path) -> list[Path]:
    """The scenario and eval files on disk beside the spec `root` is (or is a data file
    of), open or not, as `validate` finds them: each checks against the spec, so its names
    are the spec's. None outside the project."""
    from agentspec.testing.discover import scenarios_by_name

    spec = root.parent.parent / f"{root.stem}.yaml" if is_data_file(root) else root
    project = Project.of(spec, None)
    scenarios = spec.parent / "scenarios" / f"{spec.stem}.yaml"
    if not scenarios.is_file():  # named after the spec's `name:`, as the check read it
        done = analysis.checks.get(spec)
        data = done.document.data if done is not None and done.document is not None else {}
        scenarios = scenarios_by_name(spec, data.get("name")) or scenarios
    found = []
    for candidate in (scenarios, spec.parent / "evals" / f"{spec.stem}.yaml"):
        if candidate.is_file() and project.judge(candidate) != "outside":
            found.append(resolved(candidate))
    return found


def _at(analysis: Analysis, path: Path, position: lsp.Position
        ) -> tuple[FileIndex, Occurrence] | None:
    index = analysis.index(path)
    if index is None:
        return None
    occ = index.at(pos_of(position, list(index.source.lines)))
    return (index, occ) if occ is not None else None


def _location(analysis: Analysis, path: Path, span: Span) -> lsp.Location:
    return lsp.Location(uri_of(path), range_of(span, lines_of(analysis, path)))


def definition(analysis: Analysis, path: Path, position: lsp.Position
               ) -> list[lsp.Location]:
    here = _at(analysis, path, position)
    if here is None:
        return []
    _, occ = here
    if occ.kind == "python":
        found = _python(analysis, path, occ.name)
        return [found] if found else []
    if occ.kind == "file":
        return _files(path, occ.name)
    return [_location(analysis, file, o.span) for file, index in _tree(analysis, path)
            for o in index.occurrences
            if o.definition and o.kind == occ.kind and o.name == occ.name]


def _python(analysis: Analysis, spec: Path, reference: str) -> lsp.Location | None:
    """Where `module:attribute` is defined, in the module's file beside the spec (read as
    text, never imported; never outside the project)."""
    module, _, attribute = reference.partition(":")
    base = spec.parent.joinpath(*module.split("."))
    project = Project.of(spec, None)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if not candidate.is_file() or project.judge(candidate) == "outside":
            continue
        text = analysis.text_of(resolved(candidate)) or ""
        first = attribute.split(".")[0]
        pattern = re.compile(rf"^[ \t]*(?:async[ \t]+def|def|class)[ \t]+{re.escape(first)}\b"
                             rf"|^{re.escape(first)}\s*[:=]", re.M)
        match = pattern.search(text)
        row = text.count("\n", 0, match.start()) if match else 0
        start = lsp.Position(row, 0)
        return lsp.Location(uri_of(candidate), lsp.Range(start, start))
    return None


def _files(spec: Path, entry: str) -> list[lsp.Location]:
    """The project file `entry` names (relative to the spec); for a folder (skills), its
    `SKILL.md` files. Nothing outside the project, nothing through a link out of it."""
    project = Project.of(spec, None)
    target = spec.parent / entry
    if project.judge(target) == "outside" or not target.exists():
        return []
    files = sorted(target.glob("*/SKILL.md"))[:50] if target.is_dir() else [target]
    start = lsp.Position(0, 0)
    return [lsp.Location(uri_of(f), lsp.Range(start, start)) for f in files
            if f.is_file() and project.judge(f) != "outside"]


def references(analysis: Analysis, path: Path, position: lsp.Position,
               include_declaration: bool = True) -> list[lsp.Location]:
    here = _at(analysis, path, position)
    if here is None or here[1].kind in ("python", "file"):
        return []
    occ = here[1]
    return [_location(analysis, file, o.span) for file, index in _tree(analysis, path)
            for o in index.occurrences if o.kind == occ.kind and o.name == occ.name
            and (include_declaration or not o.definition)]


def rename(analysis: Analysis, path: Path, position: lsp.Position,
           new_name: str) -> lsp.WorkspaceEdit | None:
    here = _at(analysis, path, position)
    if here is None or here[1].kind not in _RENAMABLE \
            or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", new_name) \
            or is_reserved_word(new_name):
        return None
    occ = here[1]
    tree = _tree(analysis, path)
    defined = {o.name for _, index in tree for o in index.occurrences
               if o.definition and o.kind == occ.kind}
    if occ.name not in defined:
        return None  # a built-in tool or a toolset's: renaming its uses only breaks them
    if new_name != occ.name and new_name in defined:
        return None  # two definitions of one name: the edit would merge them
    changes: dict[str, list[lsp.TextEdit]] = {}
    for file, index in tree:
        lines = list(index.source.lines)
        for other in index.occurrences:
            if other.kind == occ.kind and other.name == occ.name:
                start = range_of(other.span, lines).start
                # the name itself, without quotes around a quoted scalar
                line = lines[other.span.start.line - 1]
                offset = line.find(occ.name, other.span.start.col - 1)
                start = lsp.Position(start.line, offset if offset >= 0 else start.character)
                end = lsp.Position(start.line, start.character + len(occ.name))
                changes.setdefault(uri_of(file), []).append(
                    lsp.TextEdit(lsp.Range(start, end), new_name))
    return lsp.WorkspaceEdit(changes=changes)


def completion(analysis: Analysis, path: Path, position: lsp.Position
               ) -> list[lsp.CompletionItem]:
    lines = lines_of(analysis, path)
    ctx = context_at(lines, position.line, position.character)
    python = python_completion(path, ctx, position.line, position.character)
    if python is not None:
        return python
    used = eval_completion(analysis, path, ctx) if file_kind(path) == "eval" else None
    if used is not None:
        return used
    if ctx.line_prefix.rstrip().endswith("${vars.") or re.search(r"\$\{vars\.\w*$",
                                                                 ctx.line_prefix):
        return _names(analysis, path, "var")
    if re.search(r"(?<!\{)\{\w*$", ctx.line_prefix) and ctx.value_of in (
            "instruction", "global_instruction"):
        return _names(analysis, path, "state")
    expected = _EXPECTS.get(ctx.value_of or "")
    if ctx.value_of == "default" and "backends" not in ctx.path[:1]:
        expected = None
    if expected:
        return _names(analysis, path, expected)
    if ctx.value_of is None:
        keys = keys_at(ctx.path, language=file_kind(path))
        return [lsp.CompletionItem(key, kind=lsp.CompletionItemKind.Property,
                                   documentation=text or None, insert_text=f"{key}: ")
                for key, text in sorted(keys.items())]
    return []


def _names(analysis: Analysis, path: Path, kind: str) -> list[lsp.CompletionItem]:
    names: dict[str, str] = {}
    for file, index in _tree(analysis, path, last_parsed=True):
        for occ in index.occurrences:
            if occ.kind == kind and occ.definition:
                names.setdefault(occ.name, f"{kind} defined in {file.name}")
    return [lsp.CompletionItem(name, kind=lsp.CompletionItemKind.Reference, detail=detail)
            for name, detail in sorted(names.items())]


def hover(analysis: Analysis, path: Path, position: lsp.Position) -> lsp.Hover | None:
    """What is under the cursor (a code, a `${vars.X}`'s value, a key's meaning, a name),
    followed by the explanation of the code of each diagnostic there."""
    lines = lines_of(analysis, path)
    parts = [text for text in (_about(analysis, path, position, lines),
                               _codes_here(analysis, path, position, lines)) if text]
    return _md("\n\n---\n\n".join(parts)) if parts else None


def _explain(code: str) -> str | None:
    found = lookup(code)
    if found is None:
        return None
    return (f"**{found.code}** `{found.name}` ({found.severity.value})\n\n"
            f"{found.summary}.\n\n{found.explanation}")


def _codes_here(analysis: Analysis, path: Path, position: lsp.Position,
                lines: list[str]) -> str | None:
    pos = pos_of(position, lines)
    codes: dict[str, None] = {}
    for root in analysis.roots_of(path):
        done = analysis.checks.get(root)
        for diag in done.by_file.get(path, []) if done else []:
            span = diag.span
            if span is not None and span.start <= pos <= (span.end or span.start):
                codes[diag.code] = None
    shown = [text for code in codes if (text := _explain(code))]
    return "\n\n".join(shown) if shown else None


def _about(analysis: Analysis, path: Path, position: lsp.Position,
           lines: list[str]) -> str | None:
    line = lines[position.line] if position.line < len(lines) else ""
    word = word_at(line, position.character)
    if word is None:
        return None
    text, start, end = word
    if re.fullmatch(r"AS\d{3}", text):  # in `# agentspec: ignore[AS215]`, say
        return _explain(text)
    here = _at(analysis, path, position)
    if here is not None and here[1].kind == "var":
        for root in analysis.roots_of(path):
            done = analysis.checks.get(root)
            if done and here[1].name in done.variables:
                return f"`vars.{here[1].name}` = `{done.variables[here[1].name]!r}`"
    ctx = context_at(lines, position.line, start)
    if line[end:end + 1] == ":" and ctx.value_of is None:
        about = describe(ctx.path, text, language=file_kind(path))
        if about:
            return f"`{text}`: {about}"
    if here is not None and here[1].kind in KINDS:
        return f"{here[1].kind} `{here[1].name}`"
    return None


def _md(text: str) -> lsp.Hover:
    return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, text))
