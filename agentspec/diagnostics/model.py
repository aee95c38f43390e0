"""The Diagnostic value every stage returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from agentspec.source import Span

__all__ = ["Diagnostic", "Related", "Severity"]


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"  # something a reviewer should see, which is not a problem


@dataclass(frozen=True, slots=True)
class Related:
    """Another place that explains a diagnostic (the first definition of a duplicate, say)."""

    span: Span
    message: str


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    name: str
    severity: Severity
    message: str
    span: Span | None
    hint: str | None = None
    related: tuple[Related, ...] = field(default=())

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def sort_key(self) -> tuple[str, int, int, str, str]:
        file, line, col = self.span.sort_key() if self.span else ("", 0, 0)
        return (file, line, col, self.code, self.message)

    def as_error(self) -> Diagnostic:
        """The same diagnostic as an error (`--strict`): information stays information."""
        if self.severity is Severity.INFO:
            return self
        return Diagnostic(self.code, self.name, Severity.ERROR, self.message, self.span,
                          self.hint, self.related)
