"""The Diagnostic value every stage returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from agentspec.source import Span

__all__ = ["Category", "Diagnostic", "Related", "Risk", "Severity", "State"]


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"  # something a reviewer should see, which is not a problem


class Risk(StrEnum):
    """A diff change's risk class, highest first."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class Category(StrEnum):
    """What a diff change concerns (as buf groups its breaking rules): what the agents may
    reach or do, how they behave, how the app is run, or only how it reads."""

    SECURITY = "security"
    BEHAVIOUR = "behaviour"
    OPERATIONS = "operations"
    COSMETIC = "cosmetic"


class State(StrEnum):
    """Where a code is in its life: `preview` may still change, `deprecated` is no longer
    reported and stays registered so old suppressions and selections still name it."""

    STABLE = "stable"
    PREVIEW = "preview"
    DEPRECATED = "deprecated"


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
