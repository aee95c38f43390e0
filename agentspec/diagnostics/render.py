"""Renderers: concise, full (excerpt and caret), json, github annotations."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from agentspec.diagnostics.model import Diagnostic, Severity
from agentspec.source import SourceFile, Span

__all__ = ["FORMATS", "normalize", "render", "summary"]

Sources = Mapping[str, SourceFile]


def normalize(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Sort by file, line, column and code, dropping exact repeats."""
    unique: dict[tuple[object, ...], Diagnostic] = {}
    for diag in diagnostics:
        unique.setdefault((*diag.sort_key(), diag.severity), diag)
    return sorted(unique.values(), key=Diagnostic.sort_key)


#: C0 and C1 controls (escape sequences), and the bidi controls that can reorder what a
#: reader sees; newlines are shown as `\n`
_UNPRINTABLE = (*range(0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A),
                0x200E, 0x200F, 0x061C)
_CONTROL = {c: f"\\u{c:04x}" if c > 0xFF else f"\\x{c:02x}" for c in _UNPRINTABLE if c != 0x0A}
_CONTROL_ONE_LINE = {**_CONTROL, 0x0A: "\\n"}


def _printable(text: str, *, one_line: bool = True) -> str:
    """Spec values end up in messages; never let them drive the terminal."""
    return text.translate(_CONTROL_ONE_LINE if one_line else _CONTROL)


def _where(span: Span | None) -> str:
    return _printable(f"{span.file}:{span.start.line}:{span.start.col}") if span else "agentspec"


def _concise(diag: Diagnostic) -> str:
    level = "" if diag.is_error else f"{diag.severity.value}: "
    line = f"{_where(diag.span)}: {diag.code} {level}{_printable(diag.message)}"
    return f"{line} (hint: {_printable(diag.hint)})" if diag.hint else line


def _caret(span: Span, source: SourceFile) -> list[str]:
    text = _printable(source.line(span.start.line).replace("\t", " "))
    width = 1
    if span.end and span.end.line == span.start.line:
        width = max(1, span.end.col - span.start.col)
    gutter = len(str(span.start.line))
    return [f"{' ' * gutter} |",
            f"{span.start.line} | {text}",
            f"{' ' * gutter} | {' ' * (span.start.col - 1)}{'^' * width}"]


def _full(diag: Diagnostic, sources: Sources) -> str:
    lines = [f"{diag.severity.value}[{diag.code}] {diag.name}: {_printable(diag.message)}",
             f"  --> {_where(diag.span)}"]
    if diag.span and diag.span.file in sources:
        lines += ["  " + row for row in _caret(diag.span, sources[diag.span.file])]
    for rel in diag.related:
        lines.append(f"  note: {_printable(rel.message)} at {_where(rel.span)}")
    if diag.hint:
        lines.append(f"  help: {_printable(diag.hint)}")
    return "\n".join(lines) + "\n"


def _span_json(span: Span | None) -> dict[str, object] | None:
    if span is None:
        return None
    end = span.end or span.start
    return {"file": span.file, "line": span.start.line, "column": span.start.col,
            "end_line": end.line, "end_column": end.col}


def _json(diagnostics: Sequence[Diagnostic]) -> str:
    import json  # deferred: the other formats, validate's usual ones, do without it

    rows = [{"code": d.code, "name": d.name, "severity": d.severity.value, "message": d.message,
             "hint": d.hint, "location": _span_json(d.span),
             "related": [{"message": r.message, "location": _span_json(r.span)}
                         for r in d.related]} for d in diagnostics]
    return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"


def _github_escape(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _github_property(text: str) -> str:
    return _github_escape(text).replace(":", "%3A").replace(",", "%2C")


def _github(diag: Diagnostic) -> str:
    level = {Severity.ERROR: "error", Severity.WARNING: "warning"}.get(diag.severity, "notice")
    props = f"title={_github_property(f'{diag.code} {diag.name}')}"
    if diag.span:
        props = (f"file={_github_property(_printable(diag.span.file))},"
                 f"line={diag.span.start.line},col={diag.span.start.col},{props}")
    body = diag.message + (f" (hint: {diag.hint})" if diag.hint else "")
    return f"::{level} {props}::{_github_escape(_printable(body, one_line=False))}"


def summary(diagnostics: Sequence[Diagnostic]) -> str:
    """`N errors, M warnings` (and `, K info` when there is information)."""
    counts = {s: sum(d.severity is s for d in diagnostics) for s in Severity}
    text = (f"{counts[Severity.ERROR]} error{'s' * (counts[Severity.ERROR] != 1)}, "
            f"{counts[Severity.WARNING]} warning{'s' * (counts[Severity.WARNING] != 1)}")
    infos = counts[Severity.INFO]
    return text + (f", {infos} info" if infos else "")


def _lines(fn: Callable[[Diagnostic], str]) -> Callable[[Sequence[Diagnostic], Sources], str]:
    def render_lines(diagnostics: Sequence[Diagnostic], sources: Sources) -> str:
        return "".join(fn(d) + "\n" for d in diagnostics)
    return render_lines


def _render_full(diagnostics: Sequence[Diagnostic], sources: Sources) -> str:
    body = "\n".join(_full(d, sources) for d in diagnostics)
    return body + (f"\n{summary(diagnostics)}\n" if diagnostics else "")


FORMATS: dict[str, Callable[[Sequence[Diagnostic], Sources], str]] = {
    "concise": _lines(_concise),
    "full": _render_full,
    "json": lambda diagnostics, sources: _json(diagnostics),
    "github": _lines(_github),
}


def render(diagnostics: Sequence[Diagnostic], sources: Sources, fmt: str = "concise") -> str:
    return FORMATS[fmt](diagnostics, sources)
