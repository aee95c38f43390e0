"""Reading the travel desk's data files, and the lookups every tool shares."""

from __future__ import annotations

import difflib
import json
import os
import unicodedata
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["MONTHS", "WEEKDAYS", "cities", "data_dir", "fold", "load", "parse_date",
           "parse_month", "resolve_city"]

_DEFAULT_DATA = Path(__file__).resolve().parent / "data"
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def data_dir() -> Path:
    """`TRAVEL_DESK_DATA_DIR` when set, otherwise the sample data shipped with the package."""
    return Path(os.environ.get("TRAVEL_DESK_DATA_DIR") or _DEFAULT_DATA)


@lru_cache(maxsize=16)
def _read(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        document = json.load(handle)
    if not isinstance(document, dict):
        raise ValueError(f"{path} must hold a JSON object")
    return document


def load(name: str) -> dict[str, Any]:
    """The JSON object stored in `<data dir>/<name>.json` (read once, then cached)."""
    return _read(str(data_dir() / f"{name}.json"))


def cities() -> dict[str, dict[str, Any]]:
    """Every city by its three-letter code."""
    return {str(city["code"]): city for city in load("cities")["cities"]}


def fold(text: str) -> str:
    """Lower case without accents or surrounding spaces, for matching names."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).strip().lower()


def resolve_city(query: str) -> tuple[dict[str, Any] | None, list[str]]:
    """The city a name, alias, city code or airport code means, else close matches."""
    wanted = fold(query)
    known = cities()
    for city in known.values():
        names = {fold(city["code"]), fold(city["name"]), *map(fold, city["aliases"]),
                 *map(fold, city["airports"])}
        if wanted in names:
            return city, []
    # "Paris, France" or "Lisbon (LIS)": try the first word group on its own
    head = wanted.replace("(", ",").split(",")[0].strip()
    if head and head != wanted:
        found, _ = resolve_city(head)
        if found is not None:
            return found, []
    labels = {fold(c["name"]): c["name"] for c in known.values()}
    close = difflib.get_close_matches(wanted, list(labels), n=3, cutoff=0.6)
    return None, [labels[c] for c in close]


def parse_date(value: str) -> date | None:
    """A `YYYY-MM-DD` date, or None."""
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        return None


def parse_month(value: str) -> str | None:
    """The three-letter month key of "July", "jul", "7", "07" or "2026-07-14"; else None."""
    text = fold(value)
    day = parse_date(text)
    if day is not None:
        return MONTHS[day.month - 1]
    if text.isdigit() and 1 <= int(text) <= 12:
        return MONTHS[int(text) - 1]
    return text[:3] if len(text) >= 3 and text[:3] in MONTHS else None
