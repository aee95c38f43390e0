"""Naming codes the way users do: `AS215`, its name `interrupt-unknown-tool`, a prefix such as
`AS2` (every 2xx code) or `AS21`, or `ALL`; and which of a run's codes a user chose to hear
(`--select`/`--ignore`, ruff's rules: the most specific selector that matches a code wins,
and on a tie `ignore` does)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from agentspec.diagnostics.codes import REGISTRY, lookup
from agentspec.diagnostics.model import Category, Risk, Severity

__all__ = ["ChangeSelector", "Selection", "Selector", "change_selector", "selector", "split"]

_PREFIX = re.compile(r"AS\d{0,3}", re.IGNORECASE)


@dataclass(frozen=True)
class Selector:
    """A set of codes: those that start with `prefix` (`AS` is every code)."""

    text: str  # as the user wrote it
    prefix: str

    def matches(self, code: str) -> bool:
        return code.startswith(self.prefix)

    @property
    def specificity(self) -> int:
        return len(self.prefix)

    @property
    def only_errors(self) -> bool:
        """Whether every code it names is an error (which no selection hides)."""
        return _only_errors(self.prefix, len(REGISTRY))


def selector(text: str) -> Selector | None:
    """The codes `text` names, None when it names none (a typo, a code never registered)."""
    return _selector(text, len(REGISTRY))


@lru_cache(maxsize=4096)  # a file may repeat one entry on every line
def _selector(text: str, registered: int) -> Selector | None:
    key = text.strip()
    if key.upper() == "ALL":
        return Selector(key, "AS")
    code = lookup(key)
    if code is not None:
        return Selector(key, code.code)
    if _PREFIX.fullmatch(key) and any(c.startswith(key.upper()) for c in REGISTRY):
        return Selector(key, key.upper())
    return None


@lru_cache(maxsize=4096)
def _only_errors(prefix: str, registered: int) -> bool:
    return all(REGISTRY[c].severity is Severity.ERROR for c in REGISTRY if c.startswith(prefix))


def split(values: Iterable[str]) -> list[str]:
    """Options given several times and comma-separated lists, as one list of entries."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


@dataclass(frozen=True)
class Selection:
    """Which codes a user hears: those `select` names (every code when it is empty) that
    `ignore` does not name more specifically."""

    select: tuple[Selector, ...] = ()
    ignore: tuple[Selector, ...] = ()

    def hears(self, code: str) -> bool:
        chosen = max((s.specificity for s in self.select if s.matches(code)),
                     default=-1 if self.select else 0)
        dropped = max((s.specificity for s in self.ignore if s.matches(code)), default=-1)
        return chosen >= 0 and chosen > dropped


@dataclass(frozen=True)
class ChangeSelector:
    """Diff changes named by `diff --fail-on` and `--except`: a risk, a category, or codes."""

    text: str
    risk: Risk | None = None
    category: Category | None = None
    codes: Selector | None = None

    def matches(self, code: str, risk: Risk, category: Category | None, *,
                or_higher: bool = False) -> bool:
        """Whether a change of `code` with `risk` and `category` is named; with `or_higher`
        (`--fail-on`), a risk names that risk and every higher one."""
        if self.risk is not None:
            order = tuple(Risk)
            return order.index(risk) <= order.index(self.risk) if or_higher else \
                risk is self.risk
        if self.category is not None:
            return category is self.category
        return self.codes is not None and self.codes.matches(code)


def change_selector(text: str) -> ChangeSelector | None:
    key = text.strip()
    if key.lower() in tuple(Risk):
        return ChangeSelector(key, risk=Risk(key.lower()))
    if key.lower() in tuple(Category):
        return ChangeSelector(key, category=Category(key.lower()))
    codes = selector(key)
    if codes is None or not any(c.startswith(codes.prefix) and REGISTRY[c].category
                                for c in REGISTRY):
        return None  # no diff code
    return ChangeSelector(key, codes=codes)
