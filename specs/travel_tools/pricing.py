"""Trip quotes: flights, hotel, daily spending and the desk's service fee, in one currency.

`trip_quoter(...)` is a tool factory: the spec calls it with the desk's settings (currency,
service fee, longest stay) and gets back an ADK `FunctionTool` named `quote_trip`.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from google.adk.tools.function_tool import FunctionTool

from .datastore import MONTHS, load, parse_date, resolve_city
from .fares import FareError, find_fare, search_fares

__all__ = ["HOTEL_TIERS", "trip_quoter"]

HOTEL_TIERS = ("budget", "standard", "premium")


def _cheapest_return(outbound: dict[str, Any], nights: int) -> dict[str, Any] | None:
    """The cheapest flight back in the same cabin, `nights` after the outbound flight."""
    back_day = parse_date(outbound["date"])
    if back_day is None:
        return None
    origin, destination = outbound["fare_id"].split(":")[1].split("-")
    found = search_fares(destination, origin, (back_day + timedelta(days=nights)).isoformat(),
                         cabin=outbound["cabin"], max_results=1)
    options: list[dict[str, Any]] = found.get("options", [])
    return options[0] if options else None


def trip_quoter(currency: str = "EUR", service_fee_pct: float = 0.0,
                max_nights: int = 30) -> FunctionTool:
    """Build the `quote_trip` tool for a desk that quotes in `currency`, adds
    `service_fee_pct` percent to every quote and sells stays of at most `max_nights` nights.

    Raises ValueError for a currency without an exchange rate in the fare data, a fee outside
    0-25 %, or `max_nights` outside 1-365, so a bad spec fails when the agent is built.
    """
    rates: dict[str, float] = load("fares")["eur_rates"]
    code = currency.strip().upper()
    if code not in rates:
        raise ValueError(f"no exchange rate for {currency!r}; known: {', '.join(sorted(rates))}")
    if not 0 <= service_fee_pct <= 25:
        raise ValueError(f"service_fee_pct must be between 0 and 25, not {service_fee_pct}")
    if not 1 <= max_nights <= 365:
        raise ValueError(f"max_nights must be between 1 and 365, not {max_nights}")
    rate = float(rates[code])

    def money(eur: float) -> float:
        return round(eur * rate, 0 if code == "JPY" else 2)

    def quote_trip(destination: str, nights: int, travelers: int = 1,
                   hotel_tier: str = "standard", fare_id: str = "") -> dict[str, Any]:
        """Price a whole trip: return flights, hotel, daily spending and the service fee.

        Args:
            destination: City name or code of the stay, for example "Lisbon".
            nights: Number of nights at the destination.
            travelers: Number of travelers; two share a hotel room.
            hotel_tier: "budget", "standard" or "premium".
            fare_id: Optional outbound `fare_id` from search_fares; the cheapest flight back
                in the same cabin after `nights` nights is added. Empty to leave flights out.

        Returns:
            `{"status": "success", "currency", "lines": [{"item", "amount"}], "subtotal",
            "service_fee", "total", "per_person", "assumptions"}`, or an error.
        """
        city, suggestions = resolve_city(destination)
        if city is None:
            hint = f" Did you mean {' or '.join(suggestions)}?" if suggestions else ""
            return {"status": "error", "error": f"No hotel data for {destination!r}.{hint}"}
        if not 1 <= nights <= max_nights:
            return {"status": "error", "error": f"The desk quotes stays of 1 to {max_nights} "
                    "nights."}
        if not 1 <= travelers <= 9:
            return {"status": "error", "error": "The desk quotes parties of 1 to 9 travelers."}
        tier = hotel_tier.strip().lower()
        if tier not in HOTEL_TIERS:
            return {"status": "error", "error": f"hotel_tier must be one of "
                    f"{', '.join(HOTEL_TIERS)}."}
        lines: list[tuple[str, float]] = []
        assumptions = [f"{math.ceil(travelers / 2)} room(s) for {travelers} traveler(s)"]
        season = 1.0
        if fare_id:
            try:
                outbound = find_fare(fare_id)
            except FareError as error:
                return {"status": "error", "error": str(error)}
            if not outbound["fare_id"].split(":")[1].endswith(city["code"]):
                return {"status": "error", "error": f"{fare_id} does not fly to "
                        f"{city['name']}."}
            lines.append((f"Flight out {outbound['flight_no']} on {outbound['date']}",
                          outbound["price_eur"] * travelers))
            back = _cheapest_return(outbound, nights)
            if back is None:
                assumptions.append("no flight back found: return flight not included")
            else:
                lines.append((f"Flight back {back['flight_no']} on {back['date']}",
                              back["price_eur"] * travelers))
            day = parse_date(outbound["date"])
            if day is not None:
                season = float(load("fares")["season_factor"][MONTHS[day.month - 1]])
                assumptions.append(f"hotel prices adjusted for {MONTHS[day.month - 1]} "
                                   f"(x{season})")
        rooms = math.ceil(travelers / 2)
        nightly = city["hotel_nightly_eur"][tier] * season
        lines.append((f"Hotel, {tier}, {nights} night(s) x {rooms} room(s)",
                      nightly * nights * rooms))
        lines.append((f"Meals, transport and entries, {nights + 1} day(s)",
                      city["daily_spend_eur"] * (nights + 1) * travelers))
        subtotal = sum(amount for _, amount in lines)
        fee = subtotal * service_fee_pct / 100
        return {"status": "success", "currency": code, "destination": city["name"],
                "lines": [{"item": item, "amount": money(amount)} for item, amount in lines],
                "subtotal": money(subtotal), "service_fee": money(fee),
                "service_fee_pct": service_fee_pct, "total": money(subtotal + fee),
                "per_person": money((subtotal + fee) / travelers),
                "assumptions": assumptions}

    return FunctionTool(quote_trip)
