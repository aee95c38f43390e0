"""Evaluation results as a table, JSON or markdown; and the delta between two sides (`eval
--base REV`: the spec at REV and the working tree), per case and criterion."""

from __future__ import annotations

import json
from dataclasses import dataclass

from agentspec.evaluation.runner import CaseResult, Score

__all__ = ["Delta", "deltas", "delta_markdown", "delta_table", "json_report", "markdown",
           "table"]


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _rows(results: list[CaseResult]) -> list[tuple[str, Score]]:
    return [(r.name, s) for r in results for s in r.scores.values()]


def _summary(results: list[CaseResult]) -> str:
    failed = sum(not r.passed for r in results)
    return f"{len(results) - failed} passed" + (f", {failed} failed" if failed else "")


def table(results: list[CaseResult], runs: int) -> str:
    """A plain-text table: a line per case and criterion, the errors under it."""
    rows = [("CASE", "CRITERION", "THRESHOLD", "MEAN", "SPREAD", "RESULT")]
    notes: dict[int, list[str]] = {}
    for case, score in _rows(results):
        rows.append((case, score.criterion, _number(score.threshold), _number(score.mean),
                     _number(score.spread), "pass" if score.passed else "FAIL"))
        notes[len(rows) - 1] = list(dict.fromkeys(score.errors))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for index, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths,
                                                                        strict=True)).rstrip())
        lines += [f"    {note}" for note in notes.get(index, [])]
    lines.append(f"{_summary(results)} ({runs} run{'s' * (runs != 1)} each)")
    return "\n".join(lines) + "\n"


def json_report(results: list[CaseResult], runs: int) -> str:
    return json.dumps({"runs": runs, "passed": all(r.passed for r in results),
                       "cases": [r.to_dict() for r in results]}, indent=2) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(results: list[CaseResult], runs: int) -> str:
    lines = [f"### Evaluation: {_summary(results)} ({runs} run{'s' * (runs != 1)} each)", "",
             "| Case | Criterion | Threshold | Mean | Spread | Result |",
             "| --- | --- | --- | --- | --- | --- |"]
    for case, score in _rows(results):
        result = "✅ pass" if score.passed else "❌ fail"
        if score.errors:
            result += ": " + "; ".join(dict.fromkeys(score.errors))
        lines.append(f"| {_cell(case)} | `{score.criterion}` | {_number(score.threshold)} | "
                     f"{_number(score.mean)} | {_number(score.spread)} | {_cell(result)} |")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Delta:
    """One case and criterion on both sides (None: the side has no such score)."""

    case: str
    criterion: str
    threshold: float
    base: Score | None
    new: Score | None

    @property
    def change(self) -> float | None:
        if self.base is None or self.new is None or self.base.mean is None \
                or self.new.mean is None:
            return None
        return self.new.mean - self.base.mean

    @property
    def verdict(self) -> str:
        if self.base is None or self.new is None:
            return "new" if self.base is None else "removed"
        was = self.base is not None and self.base.passed
        now = self.new is not None and self.new.passed
        if was == now:
            return "pass" if now else "fail"
        return "fixed" if now else "REGRESSED"

    def to_dict(self) -> dict[str, object]:
        return {"case": self.case, "criterion": self.criterion, "threshold": self.threshold,
                "base": self.base.to_dict() if self.base else None,
                "new": self.new.to_dict() if self.new else None, "change": self.change,
                "verdict": self.verdict}


def deltas(base: list[CaseResult], new: list[CaseResult]) -> list[Delta]:
    before = dict(((case, s.criterion), s) for case, s in _rows(base))
    after = dict(((case, s.criterion), s) for case, s in _rows(new))
    keys = list(dict.fromkeys([*after, *before]))
    return [Delta(case, criterion, (after.get((case, criterion)) or before[(case, criterion)])
                  .threshold, before.get((case, criterion)), after.get((case, criterion)))
            for case, criterion in keys]


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}"


def delta_table(found: list[Delta], base: str) -> str:
    rows = [("CASE", "CRITERION", "THRESHOLD", base.upper()[:20], "NOW", "CHANGE", "RESULT")]
    for d in found:
        rows.append((d.case, d.criterion, _number(d.threshold),
                     _number(d.base.mean if d.base else None),
                     _number(d.new.mean if d.new else None), _signed(d.change), d.verdict))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]
    regressed = sum(d.verdict == "REGRESSED" for d in found)
    fixed = sum(d.verdict == "fixed" for d in found)
    lines.append(f"{regressed} regressed, {fixed} fixed, against {base}")
    return "\n".join(lines) + "\n"


def delta_markdown(found: list[Delta], base: str) -> str:
    regressed = sum(d.verdict == "REGRESSED" for d in found)
    fixed = sum(d.verdict == "fixed" for d in found)
    marks = {"pass": "✅ pass", "fail": "❌ fail", "fixed": "✅ fixed",
             "REGRESSED": "🔻 regressed", "new": "new", "removed": "removed"}
    lines = [f"### Evaluation against `{_cell(base)}`: {regressed} regressed, {fixed} fixed", "",
             f"| Case | Criterion | Threshold | `{_cell(base)}` | This change | Δ | Result |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for d in found:
        lines.append(f"| {_cell(d.case)} | `{d.criterion}` | {_number(d.threshold)} | "
                     f"{_number(d.base.mean if d.base else None)} | "
                     f"{_number(d.new.mean if d.new else None)} | {_signed(d.change)} | "
                     f"{marks[d.verdict]} |")
    return "\n".join(lines) + "\n"
