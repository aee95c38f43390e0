"""Entry requirements for short tourist stays, from the sample rules in visa_rules.json."""

from __future__ import annotations

from typing import Any

from .datastore import fold, load, resolve_city

__all__ = ["check_visa"]

DISCLAIMER = ("Sample rules for short tourist stays; entry rules change. Confirm with the "
              "destination's official government website before booking.")


def _nationality(value: str, names: dict[str, str], demonyms: dict[str, str]) -> str | None:
    """The country code of "DE", "Germany" or "German"."""
    text = fold(value)
    if text.upper() in names:
        return text.upper()
    if text in demonyms:
        return demonyms[text]
    return next((code for code, country in names.items() if fold(country) == text), None)


def _destination(value: str, destinations: dict[str, Any],
                 names: dict[str, str]) -> str | None:
    text = fold(value)
    if text.upper() in destinations:
        return text.upper()
    city, _ = resolve_city(value)
    if city is not None:
        return str(city["country_code"])
    return next((code for code, country in names.items()
                 if fold(country) == text and code in destinations), None)


def check_visa(nationality: str, destination: str, stay_days: int) -> dict[str, Any]:
    """Check what a traveler of one nationality needs to enter a destination as a tourist.

    Args:
        nationality: The passport's country, as a two-letter code ("DE") or a name
            ("Germany", "German").
        destination: A city the desk covers ("Tokyo") or a country code ("JP").
        stay_days: Length of the stay in days.

    Returns:
        `{"status": "success", "nationality", "destination", "requirement", "documents",
        "max_stay_days", "stay_allowed", "passport_validity", "note", "disclaimer"}`, or an
        error listing what is covered.
    """
    rules = load("visa_rules")
    names: dict[str, str] = rules["nationalities"]
    destinations: dict[str, Any] = rules["destinations"]
    nat = _nationality(nationality, names, rules["demonyms"])
    if nat is None:
        return {"status": "error", "error": f"No rules for passports of {nationality!r}. "
                f"Covered: {', '.join(sorted(names.values()))}."}
    dest = _destination(destination, destinations, names)
    if dest is None or dest not in destinations:
        covered = ", ".join(f"{d['area']} ({code})" for code, d in destinations.items())
        return {"status": "error", "error": f"No entry rules for {destination!r}. Covered: "
                f"{covered}."}
    if stay_days < 1:
        return {"status": "error", "error": "stay_days must be at least 1."}
    area = destinations[dest]
    rule = rules["rules"][area["by_nationality"][nat]]
    limit = rule["max_stay_days"]
    allowed = limit is None or stay_days <= limit
    result = {"status": "success", "nationality": names[nat], "destination": area["area"],
              "requirement": rule["status"], "documents": rule["documents"],
              "max_stay_days": limit, "stay_allowed": allowed,
              "passport_validity": area["passport_validity"], "note": rule["note"],
              "disclaimer": DISCLAIMER}
    if not allowed:
        result["warning"] = (f"A stay of {stay_days} days is longer than the {limit} days "
                             "allowed; a long-stay visa would be needed.")
    return result
