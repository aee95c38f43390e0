"""What known Gemini models cost, dated, for usage summaries and cost budgets when a spec gives
no `price:`. Compiler (validate: a cost budget needs every model's price) and runtime (the
cost of each call) read the same table.

Source: Google's Gemini Developer API pricing page (ai.google.dev/gemini-api/docs/pricing),
paid tier, text. That page itself could not be read when the table was checked (2026-11-26);
it was read through what quotes it: a transcription of the page of 2026-09-20 whose every
price was found verbatim on it (the api-evangelist/gemini repository,
plans/gemini-plans-pricing.yml), which confirms the 2.5 Pro input prices of both tiers, the
2.5 Flash input price and the 2.5 Flash-Lite output price; LiteLLM 1.96.2's price table,
whose rows link Google's pages, for every other figure; Google's developer forum, quoting
the page's 2.5 Pro caching prices (0.125 and 0.25 now, 0.31 and 0.625 in mid-2025). The
cached prices were corrected from the mid-2025 page (a quarter of the input price) to the
page's current tenth. `docs/language/observing.md` says which rows are confirmed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["PRICES_AS_OF", "TablePrice", "table_price"]

#: when the table was checked: the Gemini API's paid tier, text input, US dollars per million
#: tokens (Vertex AI and batch prices differ; a spec's `price:` says what its contract is)
PRICES_AS_OF = "2026-11-26"


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
    "gemini-2.5-pro": TablePrice(1.25, 10.0, 0.125, 200_000, 2.50, 15.0, 0.25),
    "gemini-2.5-flash": TablePrice(0.30, 2.50, 0.03),
    "gemini-2.5-flash-lite": TablePrice(0.10, 0.40, 0.01),
    # shut down on 2026-06-01; their last published prices
    "gemini-2.0-flash": TablePrice(0.10, 0.40, 0.025),
    "gemini-2.0-flash-lite": TablePrice(0.075, 0.30, None),  # no caching price published
}

#: `models/` (the API's resource name) and LiteLLM's provider prefixes name the same model;
#: a stable version suffix (`-001`) is priced as its model; previews and other names are not
_NAME = re.compile(r"^(?:models/|gemini/|vertex_ai/)?(?P<id>[a-z0-9.-]+?)(?:-\d{3})?$")


def table_price(model: str) -> TablePrice | None:
    """The table's price of `model`; None when the table does not know it (never a guess)."""
    match = _NAME.match(model.strip().lower())
    return _TABLE.get(match.group("id")) if match else None
