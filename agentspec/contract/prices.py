"""What known Gemini models cost, dated, for usage summaries and cost budgets when a spec gives
no `price:`. Compiler (validate: a cost budget needs every model's price) and runtime (the
cost of each call) read the same table."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["PRICES_AS_OF", "TablePrice", "table_price"]

#: when the table was taken: the Gemini API's paid tier, text input, US dollars per million
#: tokens (Vertex AI and batch prices differ; a spec's `price:` says what its contract is)
PRICES_AS_OF = "2025-06-17"


@dataclass(frozen=True)
class TablePrice:
    input: float
    output: float  # thinking included
    cached: float | None
    #: prompts over this many tokens are billed at the `long_*` prices (None: one tier)
    long_from: int | None = None
    long_input: float = 0.0
    long_output: float = 0.0
    long_cached: float | None = None


_TABLE: dict[str, TablePrice] = {
    "gemini-2.5-pro": TablePrice(1.25, 10.0, 0.31, 200_000, 2.50, 15.0, 0.625),
    "gemini-2.5-flash": TablePrice(0.30, 2.50, 0.075),
    "gemini-2.5-flash-lite": TablePrice(0.10, 0.40, 0.025),
    "gemini-2.0-flash": TablePrice(0.10, 0.40, 0.025),
    "gemini-2.0-flash-lite": TablePrice(0.075, 0.30, None),
}

#: `models/` (the API's resource name) and LiteLLM's provider prefixes name the same model;
#: a stable version suffix (`-001`) is priced as its model; previews and other names are not
_NAME = re.compile(r"^(?:models/|gemini/|vertex_ai/)?(?P<id>[a-z0-9.-]+?)(?:-\d{3})?$")


def table_price(model: str) -> TablePrice | None:
    """The table's price of `model`; None when the table does not know it (never a guess)."""
    match = _NAME.match(model.strip().lower())
    return _TABLE.get(match.group("id")) if match else None
