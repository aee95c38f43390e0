"""City facts: what the desk knows about a destination, its climate and its sights."""

from __future__ import annotations

from typing import Any

from .datastore import MONTHS, WEEKDAYS, fold, parse_date, parse_month, resolve_city

__all__ = ["find_city", "list_sights", "weather_outlook"]


def _unknown_city(query: str, suggestions: list[str]) -> dict[str, Any]:
    hint = f" Did you mean {' or '.join(suggestions)}?" if suggestions else ""
    return {"status": "error", "error": f"The travel desk has no data for {query!r}.{hint}"}


def find_city(query: str) -> dict[str, Any]:
    """Look up a destination the travel desk covers, by city name, city code or airport code.

    Use this to turn what the traveler wrote ("Lisboa", "NYC", "LHR") into
    the city code the other tools expect, and to learn its country, currency and time zone.

    Args:
        query: A city name, alias, city code or airport code, for example "Lisbon" or "LHR".

    Returns:
        `{"status": "success", "code", "name", "country", "country_code", "currency",
        "timezone", "airports", "hotel_nightly_eur", "daily_spend_eur"}`, or an error with
        suggestions.
    """
    city, suggestions = resolve_city(query)
    if city is None:
        return _unknown_city(query, suggestions)
    keys = ("code", "name", "country", "country_code", "currency", "timezone", "airports",
            "hotel_nightly_eur", "daily_spend_eur")
    return {"status": "success", **{key: city[key] for key in keys}}


def _feel(high: float) -> str:
    if high >= 30:
        return "hot"
    if high >= 24:
        return "warm"
    if high >= 17:
        return "mild"
    if high >= 10:
        return "cool"
    return "cold"


def _wetness(rain_days: int) -> str:
    if rain_days <= 3:
        return "mostly dry"
    if rain_days <= 8:
        return "some rainy days"
    return "often wet"


def _packing(high: float, low: float, rain_days: int) -> list[str]:
    items = []
    if high >= 24:
        items += ["light breathable clothes", "sun hat", "sunscreen", "refillable water bottle"]
    elif high >= 15:
        items += ["layers: t-shirts plus a light sweater", "light jacket for the evenings"]
    else:
        items += ["warm coat", "sweaters", "scarf and gloves"]
    if low <= 2:
        items.append("thermal base layer")
    if rain_days >= 7:
        items += ["compact umbrella", "waterproof shoes"]
    items.append("comfortable walking shoes")
    return items


def weather_outlook(city: str, month: str) -> dict[str, Any]:
    """Describe the usual weather of a city in a given month, with packing advice.

    The figures are long-term monthly averages, not a forecast: say so when you use them.

    Args:
        city: City name or code, for example "Rome" or "ROM".
        month: The month of travel: a name ("July"), a number ("7") or a date ("2026-07-14").

    Returns:
        `{"status": "success", "city", "month", "avg_high_c", "avg_low_c", "rain_days",
        "summary", "packing"}`, plus the neighbouring months for comparison, or an error.
    """
    found, suggestions = resolve_city(city)
    if found is None:
        return _unknown_city(city, suggestions)
    key = parse_month(month)
    if key is None:
        return {"status": "error", "error": f"Cannot read a month from {month!r}; write a "
                "month name, a number from 1 to 12, or a date like 2026-07-14."}
    climate = found["climate"]
    normal = climate[key]
    high, low, rain = normal["high_c"], normal["low_c"], normal["rain_days"]
    index = MONTHS.index(key)
    around = {MONTHS[i % 12]: climate[MONTHS[i % 12]] for i in (index - 1, index + 1)}
    return {"status": "success", "city": found["name"], "month": key, "avg_high_c": high,
            "avg_low_c": low, "rain_days": rain,
            "summary": f"{_feel(high).capitalize()} and {_wetness(rain)}: around {high} C by "
                       f"day and {low} C at night, rain on about {rain} days of the month.",
            "packing": _packing(high, low, rain), "neighbouring_months": around,
            "note": "Long-term averages, not a forecast."}


def _weekday(day: str) -> str | None:
    text = fold(day)
    parsed = parse_date(text)
    if parsed is not None:
        return WEEKDAYS[parsed.weekday()]
    return next((name for name in WEEKDAYS if text and name.startswith(text[:3])), None)


def _matches(sight: dict[str, Any], interests: list[str]) -> bool:
    text = fold(" ".join([sight["name"], sight["category"], sight["advice"]]))
    return any(fold(interest) in text or fold(interest).rstrip("s") == sight["category"]
               for interest in interests)


def list_sights(city: str, interests: list[str] | None = None, day: str = "",
                max_results: int = 6) -> dict[str, Any]:
    """List the sights of a city with opening hours, price, time needed and booking advice.

    Args:
        city: City name or code, for example "Amsterdam" or "AMS".
        interests: Optional filters such as ["museums", "food", "outdoors", "landmark",
            "neighborhood"] or free words like "art"; empty for everything.
        day: Optional weekday ("Monday") or date ("2026-07-14"): sights closed that day are
            left out and listed under `closed_that_day`.
        max_results: At most this many sights (1 to 10).

    Returns:
        `{"status": "success", "city", "sights": [{"name", "category", "hours", "closed_on",
        "price_eur", "duration_hours", "advice"}], "closed_that_day"}`, or an error.
    """
    found, suggestions = resolve_city(city)
    if found is None:
        return _unknown_city(city, suggestions)
    sights: list[dict[str, Any]] = list(found["sights"])
    wanted = [i for i in interests or [] if i.strip()]
    if wanted:
        sights = [s for s in sights if _matches(s, wanted)] or sights
    closed: list[str] = []
    weekday = _weekday(day) if day else None
    if day and weekday is None:
        return {"status": "error", "error": f"Cannot read a weekday from {day!r}."}
    if weekday is not None:
        closed = [s["name"] for s in sights if weekday.capitalize() in s["closed_on"]]
        sights = [s for s in sights if s["name"] not in closed]
    limit = max(1, min(10, max_results))
    return {"status": "success", "city": found["name"], "sights": sights[:limit],
            "closed_that_day": closed}
