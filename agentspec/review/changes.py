"""What `diff` reports: changes, with a risk and their positions in both versions."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from agentspec.diagnostics.codes import REGISTRY
from agentspec.diagnostics.model import Category, Risk

__all__ = ["RISKS", "SPEC", "Change", "Where"]

#: highest first
RISKS = tuple(Risk)

#: what app-level changes are reported under, in place of an agent's name
SPEC = "(spec)"


@dataclass(frozen=True)
class Where:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Change:
    #: the agent it concerns; for a definition several agents share, every agent it
    #: reaches, joined by ", " (`agents` lists them)
    agent: str
    change: str  # the rule's name: tool-added, approval-dropped, ...
    risk: Risk
    reason: str
    old: Where | None = None
    new: Where | None = None
    detail: str = ""  # the instruction's unified diff, old -> new values, ...
    code: str = ""  # the rule's code, AS5xx
    #: every agent it reaches, when that is more than `agent`
    reaches: tuple[str, ...] = ()

    @property
    def category(self) -> Category | None:
        """What the change concerns, as its code declares."""
        code = REGISTRY.get(self.code)
        return code.category if code is not None else None

    @property
    def agents(self) -> tuple[str, ...]:
        return self.reaches or (self.agent,)

    def reaching(self, agent: str) -> Change:
        """The same change, reaching `agent` too."""
        agents = (*self.agents, agent)
        return replace(self, agent=", ".join(agents), reaches=agents)

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "agents": list(self.agents), "change": self.change,
                "code": self.code, "risk": self.risk, "category": self.category,
                "reason": self.reason,
                "old": str(self.old) if self.old else None,
                "new": str(self.new) if self.new else None, "detail": self.detail}
