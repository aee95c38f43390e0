"""Holding a fare for the traveler: a reservation kept in session state, never a purchase."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, date, datetime, timedelta
from typing import Any

from google.adk.tools.tool_context import ToolContext

from .fares import FareError, find_fare

__all__ = ["HOLDS_KEY", "hold_booking"]

HOLDS_KEY = "booking_holds"
HOLD_HOURS = 24
_NAME = re.compile(r"^[^\W\d_]+(?:[ '.-][^\W\d_]+)+$")


def hold_booking(fare_id: str, traveler_names: list[str],
                 tool_context: ToolContext) -> dict[str, Any]:
    """Hold a fare from search_fares for 24 hours under the travelers' names.

    A hold reserves the seats at the quoted price; nothing is paid. The traveler pays on the
    secure payment page with the hold reference. Only call this after the traveler has
    confirmed the flight, date, cabin and price.

    Args:
        fare_id: The `fare_id` of the chosen option from search_fares.
        traveler_names: Full names as written in each traveler's passport, one per traveler.

    Returns:
        `{"status": "success", "reference", "expires_at", "fare", "travelers", "total_eur"}`,
        or an error.
    """
    names = [" ".join(n.split()) for n in traveler_names if n.strip()]
    if not names:
        return {"status": "error", "error": "Give the full name of every traveler."}
    if len(names) > 9:
        return {"status": "error", "error": "A hold covers at most 9 travelers."}
    bad = [n for n in names if not _NAME.match(n)]
    if bad:
        return {"status": "error", "error": f"Use first and last name as in the passport: "
                f"{', '.join(bad)}."}
    try:
        fare = find_fare(fare_id)
    except FareError as error:
        return {"status": "error", "error": str(error)}
    if date.fromisoformat(fare["date"]) <= date.today():
        return {"status": "error", "error": "Flights leaving today or earlier cannot be held."}
    now = datetime.now(UTC)
    hold = {"reference": f"TD-{uuid.uuid4().hex[:6].upper()}",
            "created_at": now.isoformat(timespec="seconds"),
            "expires_at": (now + timedelta(hours=HOLD_HOURS)).isoformat(timespec="seconds"),
            "fare": fare, "travelers": names, "total_eur": fare["price_eur"] * len(names)}
    holds = list(tool_context.state.get(HOLDS_KEY) or [])
    holds.append(hold)
    tool_context.state[HOLDS_KEY] = holds  # a new list, so the change is recorded
    return {"status": "success", **hold,
            "next_step": "Pay on the secure payment page with the reference before it expires."}
