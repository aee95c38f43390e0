"""Token counts and cost of model calls, from the responses' usage metadata, summed per agent
and per model; and what a call costs, from the spec's `price:` or the dated table."""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from agentspec.contract.prices import table_price

__all__ = ["ANSWERED_BY", "BudgetExceeded", "Ledger", "Tokens", "budget_stop", "call_cost",
           "call_tokens"]

#: the id of the model that answered the model call in progress, when a composite (fallback,
#: routed) model chose it
ANSWERED_BY: ContextVar[str | None] = ContextVar("agentspec_answered_by", default=None)


class BudgetExceeded(RuntimeError):
    """A run or job reached its `budget` before a model call."""


def budget_stop(error: BaseException) -> BudgetExceeded | None:
    """The budget stop `error` is or carries (ADK wraps what a plugin raises)."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, BudgetExceeded):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


@dataclass
class Tokens:
    """Sums over model calls; `cost` is None once a call's price is unknown."""

    calls: int = 0
    prompt: int = 0  # cached included
    cached: int = 0
    output: int = 0  # thinking included
    thoughts: int = 0
    cost: float | None = 0.0

    @property
    def total(self) -> int:
        return self.prompt + self.output

    def add(self, other: Tokens) -> None:
        self.calls += other.calls
        self.prompt += other.prompt
        self.cached += other.cached
        self.output += other.output
        self.thoughts += other.thoughts
        self.cost = None if self.cost is None or other.cost is None else self.cost + other.cost

    def as_json(self) -> dict[str, Any]:
        return {"calls": self.calls, "prompt_tokens": self.prompt, "cached_tokens": self.cached,
                "output_tokens": self.output, "thinking_tokens": self.thoughts,
                "total_tokens": self.total,
                "cost_usd": None if self.cost is None else round(self.cost, 6)}

    @classmethod
    def from_json(cls, value: Any) -> Tokens:
        """`as_json` read back (what is not a count reads as 0)."""
        found = value if isinstance(value, Mapping) else {}

        def count(key: str) -> int:
            number = found.get(key)
            return number if type(number) is int else 0

        cost = found.get("cost_usd", 0.0)
        return cls(calls=count("calls"), prompt=count("prompt_tokens"),
                   cached=count("cached_tokens"), output=count("output_tokens"),
                   thoughts=count("thinking_tokens"),
                   cost=float(cost) if isinstance(cost, (int, float)) else None)

    def text(self) -> str:
        cost = "cost unknown" if self.cost is None else f"${self.cost:.4f}"
        cached = f", {self.cached} cached" if self.cached else ""
        return (f"{self.total} tokens ({self.prompt} in{cached}, {self.output} out) in "
                f"{self.calls} call{'s' * (self.calls != 1)}, {cost}")


def call_tokens(usage: Any) -> Tokens:
    """One call's counts from a `GenerateContentResponseUsageMetadata` (None: a call that
    reported none)."""
    def count(name: str) -> int:
        return int(getattr(usage, name, None) or 0)

    thoughts = count("thoughts_token_count")
    return Tokens(calls=1, prompt=count("prompt_token_count"),
                  cached=count("cached_content_token_count"),
                  output=count("candidates_token_count") + thoughts, thoughts=thoughts)


def call_cost(tokens: Tokens, model: str | None,
              prices: Mapping[str, Mapping[str, float | None]]) -> float | None:
    """US dollars for one call to `model`: the spec's price, else the table's; None when
    neither knows it."""
    if model is None:
        return None
    given = prices.get(model)
    if given is not None:
        input_price, output_price = float(given["input"] or 0), float(given["output"] or 0)
        cached_price = given.get("cached")
    else:
        found = table_price(model)
        if found is None:
            return None
        long = found.long_from is not None and tokens.prompt > found.long_from
        input_price = found.long_input if long else found.input
        output_price = found.long_output if long else found.output
        cached_price = found.long_cached if long else found.cached
    cached = float(cached_price) if cached_price is not None else input_price
    fresh = tokens.prompt - tokens.cached
    return (fresh * input_price + tokens.cached * cached + tokens.output * output_price) / 1e6


@dataclass
class Ledger:
    """One run's (or job's, or turn's) sums: in all, per agent, per model."""

    total: Tokens = field(default_factory=Tokens)
    agents: dict[str, Tokens] = field(default_factory=dict)
    models: dict[str, Tokens] = field(default_factory=dict)

    def record(self, agent: str, model: str, call: Tokens) -> None:
        self.total.add(call)
        self.agents.setdefault(agent, Tokens()).add(call)
        self.models.setdefault(model, Tokens()).add(call)

    def add(self, other: Ledger) -> None:
        self.total.add(other.total)
        for name, tokens in other.agents.items():
            self.agents.setdefault(name, Tokens()).add(tokens)
        for name, tokens in other.models.items():
            self.models.setdefault(name, Tokens()).add(tokens)

    @classmethod
    def from_json(cls, value: Any) -> Ledger:
        """`as_json` read back (a job's earlier attempts, from its store)."""
        found = value if isinstance(value, Mapping) else {}

        def each(key: str) -> dict[str, Tokens]:
            named = found.get(key)
            return {str(k): Tokens.from_json(v) for k, v in named.items()} \
                if isinstance(named, Mapping) else {}

        return cls(Tokens.from_json(found.get("total")), each("agents"), each("models"))

    def as_json(self) -> dict[str, Any]:
        return {"total": self.total.as_json(),
                "agents": {k: v.as_json() for k, v in sorted(self.agents.items())},
                "models": {k: v.as_json() for k, v in sorted(self.models.items())}}

    def lines(self) -> list[str]:
        """A summary for a person: the total, then each agent and each model."""
        if not self.total.calls:
            return ["usage: no model calls"]
        out = [f"usage: {self.total.text()}"]
        out += [f"  agent {name}: {t.text()}" for name, t in sorted(self.agents.items())]
        out += [f"  model {name}: {t.text()}" for name, t in sorted(self.models.items())]
        return out
