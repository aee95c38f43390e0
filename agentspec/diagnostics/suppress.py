"""What a user chose to hear: `# agentspec: ignore[CODE, ...]` on a spec line hides the
warnings and information of those codes reported at that line, and a selection (`--select`,
`--ignore`, the project's config) the rest. Errors are always reported: `build` refuses a
spec that has one, so `validate` must say so. A suppression that hides nothing is reported
(AS018), as is one that cannot apply (AS019)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from agentspec.diagnostics import codes
from agentspec.diagnostics.codes import REGISTRY
from agentspec.diagnostics.model import Diagnostic
from agentspec.diagnostics.selectors import Selection, Selector, selector
from agentspec.source import Pos, SourceFile, Span

__all__ = ["Suppression", "hear", "suppressions"]

_COMMENT = re.compile(r"(?:^|[ \t])(#[ \t]*agentspec:[ \t]*ignore)\b(?:\[([^\]\n]*)\])?")
_YAML = (".yaml", ".yml")
#: what every suppression comment holds (`_COMMENT` matches only where this does)
_MARK = re.compile(r"#[ \t]*agentspec:[ \t]*ignore")


@dataclass(frozen=True)
class Suppression:
    """One code named by a suppression comment, at its place in the comment."""

    file: str
    line: int  # the line whose diagnostics it hides
    span: Span  # the entry, for AS018
    selector: Selector


def hear(diagnostics: Iterable[Diagnostic], sources: Mapping[str, SourceFile],
         selection: Selection | None = None, *,
         unused_in: Container[str] | None = None) -> list[Diagnostic]:
    """`diagnostics` without what the spec's comments and `selection` hide, with what those
    comments did wrong; errors are always kept. Suppressions that hide nothing are reported
    in the files `unused_in` names (every file when None): a file imported by several specs
    may hold one that only another spec needs."""
    found: list[Suppression] = []
    problems: list[Diagnostic] = []
    for source in sources.values():
        more, wrong = suppressions(source)
        found += more
        problems += wrong
    at: dict[tuple[str, int], list[Suppression]] = {}
    for entry in found:
        at.setdefault((entry.file, entry.line), []).append(entry)
    used: set[Suppression] = set()
    kept: list[Diagnostic] = []
    for diag in diagnostics:
        place = (diag.span.file, diag.span.start.line) if diag.span else None
        hits = [] if diag.is_error or place is None else \
            [e for e in at.get(place, ()) if e.selector.matches(diag.code)]
        used.update(hits)
        if not hits:
            kept.append(diag)
    problems += [codes.UNUSED_SUPPRESSION(
        f"`# agentspec: ignore[{entry.selector.text}]` hides nothing on this line",
        entry.span, hint=f"remove `{entry.selector.text}` from the comment")
        for entry in found
        if entry not in used and (unused_in is None or entry.file in unused_in)]
    chosen = selection or Selection()
    return [d for d in (*kept, *problems) if d.is_error or chosen.hears(d.code)]


def suppressions(source: SourceFile) -> tuple[list[Suppression], list[Diagnostic]]:
    """The suppression comments of a YAML file, and the problems of those that cannot
    apply. Text inside a value (a block of instruction text, a quoted string) is never a
    comment."""
    if not source.name.endswith(_YAML) and not str(source.path).endswith(_YAML):
        return [], []
    if _MARK.search(source.text) is None:  # one scan of the text, not one per line
        return [], []
    candidates = [(number, match) for number, line in enumerate(source.lines, 1)
                  for match in _COMMENT.finditer(line)]
    if not candidates:
        return [], []
    values = _values(source.text)  # in the order of the text, none inside another
    starts = [low for low, _ in values]
    found: list[Suppression] = []
    problems: list[Diagnostic] = []
    for number, match in candidates:
        start = source.offset(Pos(number, match.start(1) + 1))
        inside = bisect.bisect_right(starts, start) - 1  # the last value starting before it
        if inside >= 0 and start < values[inside][1]:
            continue
        where = Span(source.name, Pos(number, match.start(1) + 1))
        if match.group(2) is None or not match.group(2).strip():
            problems.append(codes.INVALID_SUPPRESSION(
                "the suppression names no code", where,
                hint="name the codes it hides: `# agentspec: ignore[AS215]`"))
            continue
        column = match.start(2)
        for part in match.group(2).split(","):
            text = part.strip()
            entry = Span(source.name, Pos(number, column + part.find(text) + 1))
            column += len(part) + 1
            chosen = selector(text) if text else None
            if chosen is None:
                problems.append(codes.INVALID_SUPPRESSION(
                    f"`{text}` names no code", entry,
                    hint="name a code (`AS215`), a code's name or a prefix such as `AS2`; "
                    "`agentspec explain --all` lists them"))
            elif all(REGISTRY[c].category is not None for c in REGISTRY if chosen.matches(c)):
                problems.append(codes.INVALID_SUPPRESSION(
                    f"`{text}` names diff changes, which a spec's comments never hide", entry,
                    hint="the reviewer of a change decides: `diff --except` or the config "
                    "file's `[diff] except`"))
            elif chosen.only_errors:
                problems.append(codes.INVALID_SUPPRESSION(
                    f"`{text}` names only errors, which are never hidden", entry,
                    hint="fix the error; `build` refuses a spec that has one"))
            else:
                found.append(Suppression(source.name, number, entry, chosen))
    return found, problems


def _values(text: str) -> list[tuple[int, int]]:
    """Where the text's scalars are (keys and values, quoted or block), by offset; up to
    the first YAML error, which the spec's own diagnostics report."""
    spans: list[tuple[int, int]] = []
    try:
        for token in YAML(typ="safe", pure=True).scan(text):
            if type(token).__name__ == "ScalarToken":
                spans.append((token.start_mark.index, token.end_mark.index))
    except (YAMLError, ValueError, RecursionError):
        pass
    return spans
