"""Flight timetable and fares from the sample data, priced for a given day."""

from __future__ import annotations

from datetime import date
from typing import Any

from .datastore import MONTHS, WEEKDAYS, load, parse_date, resolve_city

__all__ = ["CABINS", "FareError", "find_fare", "price_on", "search_fares"]

CABINS = ("economy", "premium", "business")


class FareError(ValueError):
    """A fare request the data cannot answer; the message is meant for the traveler."""


def price_on(base_eur: float, day: date, today: date | None = None) -> int:
    """A one-way fare in EUR on `day`: season, weekday and late-booking factors applied."""
    table = load("fares")
    factor = table["season_factor"][MONTHS[day.month - 1]]
    factor *= table["weekday_factor"][WEEKDAYS[day.weekday()]]
    late = table["late_booking"]
    if (day - (today or date.today())).days < late["within_days"]:
        factor *= late["factor"]
    return int(round(base_eur * factor))


def _city(query: str) -> dict[str, Any]:
    city, suggestions = resolve_city(query)
    if city is None:
        hint = f" Did you mean {' or '.join(suggestions)}?" if suggestions else ""
        raise FareError(f"No flights are listed for {query!r}.{hint}")
    return city


def _route(origin: str, destination: str) -> tuple[dict[str, Any], dict[str, Any],
                                                   dict[str, Any]]:
    start, end = _city(origin), _city(destination)
    if start["code"] == end["code"]:
        raise FareError("Origin and destination are the same city.")
    for route in load("fares")["routes"]:
        if route["origin"] == start["code"] and route["destination"] == end["code"]:
            return start, end, route
    raise FareError(f"No flights are listed from {start['name']} to {end['name']}.")


def _fare_id(flight: dict[str, Any], route: dict[str, Any], day: date, cabin: str) -> str:
    return f"{flight['flight_no']}:{route['origin']}-{route['destination']}:{day}:{cabin}"


def _option(flight: dict[str, Any], route: dict[str, Any], day: date,
            cabin: str) -> dict[str, Any]:
    minutes = int(flight["duration_minutes"])
    return {"fare_id": _fare_id(flight, route, day, cabin), "flight_no": flight["flight_no"],
            "carrier": flight["carrier"], "date": day.isoformat(),
            "depart_time": flight["depart_time"],
            "duration": f"{minutes // 60}h{minutes % 60:02d}", "stops": flight["stops"],
            "via": flight["via"], "cabin": cabin,
            "price_eur": price_on(flight["fares_eur"][cabin], day)}


def find_fare(fare_id: str) -> dict[str, Any]:
    """The priced option a `fare_id` from `search_fares` stands for; FareError if unknown."""
    try:
        flight_no, pair, day_text, cabin = fare_id.strip().split(":")
        origin, destination = pair.split("-")
    except ValueError:
        raise FareError(f"{fare_id!r} is not a fare id from search_fares.") from None
    day = parse_date(day_text)
    if day is None or cabin not in CABINS:
        raise FareError(f"{fare_id!r} is not a fare id from search_fares.")
    _, _, route = _route(origin, destination)
    for flight in route["flights"]:
        if flight["flight_no"] == flight_no and cabin in flight["fares_eur"]:
            return _option(flight, route, day, cabin)
    raise FareError(f"Fare {fare_id!r} is no longer offered.")


def search_fares(origin: str, destination: str, depart_date: str, cabin: str = "economy",
                 max_stops: int = 1, max_results: int = 5) -> dict[str, Any]:
    """Search one-way flights for one day, cheapest first, with prices per person in EUR.

    Prices depend on the season, the weekday and how soon the flight leaves (flights within
    14 days cost more). For a return trip, search the way back separately with the return
    date.

    Args:
        origin: Departure city name or code, for example "Lisbon" or "LIS".
        destination: Arrival city name or code, for example "Tokyo" or "TYO".
        depart_date: Day of the flight, YYYY-MM-DD.
        cabin: "economy", "premium" or "business".
        max_stops: 0 for direct flights only, 1 to allow one connection.
        max_results: At most this many options (1 to 10).

    Returns:
        `{"status": "success", "origin", "destination", "distance_km", "options": [{"fare_id",
        "flight_no", "carrier", "date", "depart_time", "duration", "stops", "via", "cabin",
        "price_eur"}]}`; keep the `fare_id` to quote or hold the fare. Or an error.
    """
    day = parse_date(depart_date)
    if day is None:
        return {"status": "error", "error": f"depart_date must be YYYY-MM-DD, not "
                f"{depart_date!r}."}
    wanted = cabin.strip().lower()
    if wanted not in CABINS:
        return {"status": "error", "error": f"cabin must be one of {', '.join(CABINS)}."}
    try:
        start, end, route = _route(origin, destination)
    except FareError as error:
        return {"status": "error", "error": str(error)}
    flights = [f for f in route["flights"] if f["stops"] <= max(0, max_stops)
               and wanted in f["fares_eur"]]
    options = sorted((_option(f, route, day, wanted) for f in flights),
                     key=lambda o: (o["price_eur"], o["stops"]))
    result: dict[str, Any] = {"status": "success", "origin": start["name"],
                              "destination": end["name"], "distance_km": route["distance_km"],
                              "options": options[:max(1, min(10, max_results))]}
    if not options:
        result["note"] = (f"No {wanted} flights with at most {max_stops} stop(s); try another "
                          "cabin or allow a connection.")
    return result
