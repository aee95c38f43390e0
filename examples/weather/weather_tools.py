"""A weather tool backed by the free Open-Meteo API (https://open-meteo.com, no API key).

Coordinates of common cities come from the bundled `cities.json`; other names are looked up
with Open-Meteo's geocoding API. Needs network access; offline it returns a clear error.
"""

from __future__ import annotations

import json
import unicodedata
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

__all__ = ["get_weather"]

FORECAST_URL = "https://api.open-meteo.com/v1/forecast"
GEOCODING_URL = "https://geocoding-api.open-meteo.com/v1/search"
TIMEOUT_SECONDS = 10
_CITIES = Path(__file__).with_name("cities.json")

# WMO weather interpretation codes, as documented by Open-Meteo.
WEATHER_CODES = {
    0: "clear sky", 1: "mainly clear", 2: "partly cloudy", 3: "overcast", 45: "fog",
    48: "depositing rime fog", 51: "light drizzle", 53: "moderate drizzle", 55: "dense drizzle",
    56: "light freezing drizzle", 57: "dense freezing drizzle", 61: "slight rain",
    63: "moderate rain", 65: "heavy rain", 66: "light freezing rain", 67: "heavy freezing rain",
    71: "slight snowfall", 73: "moderate snowfall", 75: "heavy snowfall", 77: "snow grains",
    80: "slight rain showers", 81: "moderate rain showers", 82: "violent rain showers",
    85: "slight snow showers", 86: "heavy snow showers", 95: "thunderstorm",
    96: "thunderstorm with slight hail", 99: "thunderstorm with heavy hail"}


class WeatherError(Exception):
    """A problem to report to the model as an error result."""


def _key(name: str) -> str:
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return " ".join(folded.lower().replace(",", " ").split())


def _get_json(url: str, params: dict[str, Any]) -> dict[str, Any]:
    full = f"{url}?{urllib.parse.urlencode(params)}"
    request = urllib.request.Request(full, headers={"User-Agent": "agentspec-weather-example/1.0"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            payload: dict[str, Any] = json.loads(response.read().decode("utf-8"))
            return payload
    except urllib.error.HTTPError as exc:
        raise WeatherError(f"Open-Meteo answered HTTP {exc.code}: "
                           f"{exc.read().decode('utf-8', 'replace')[:200]}") from exc
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise WeatherError("The weather service cannot be reached (no network access?): "
                           f"{getattr(exc, 'reason', exc)}") from exc


def _matches(place: dict[str, Any], qualifier: str) -> bool:
    """Whether "Oregon" or "France" in "Portland, Oregon" fits a place."""
    if not qualifier:
        return True
    names = (place.get("country", ""), place.get("admin1", ""), place.get("country_code", ""))
    return any(_key(qualifier) == _key(n) for n in names if n)


def _locate(city: str) -> dict[str, Any]:
    name, _, qualifier = city.partition(",")
    cities: dict[str, dict[str, Any]] = json.loads(_CITIES.read_text(encoding="utf-8"))
    known = cities.get(_key(name))
    if known and _matches(known, qualifier.strip()):
        return known
    found = _get_json(GEOCODING_URL, {"name": name.strip(), "count": 10, "language": "en",
                                      "format": "json"}).get("results") or []
    found = [p for p in found if _matches(p, qualifier.strip())]
    if not found:
        raise WeatherError(f"No place called {city!r} was found; check the spelling, or "
                           "give the country or region after a comma.")
    place = found[0]
    return {"name": place["name"], "country": place.get("country", ""),
            "latitude": place["latitude"], "longitude": place["longitude"],
            "timezone": place.get("timezone", "auto")}


def get_weather(city: str, days: int = 3) -> dict[str, Any]:
    """Get the current weather and a daily forecast for a city.

    Args:
        city: The city name, optionally with its country, for example "Paris" or
            "Portland, Oregon".
        days: Number of forecast days including today, from 1 to 7. Defaults to 3.

    Returns:
        `{"status": "success", "location": {...}, "current": {...}, "daily": [...]}` with
        temperatures in degrees Celsius, wind in km/h and precipitation in mm, or
        `{"status": "error", "error": ...}` explaining what went wrong.
    """
    if not city.strip():
        return {"status": "error", "error": "Which city? The city name is empty."}
    days = max(1, min(int(days), 7))
    try:
        place = _locate(city.strip())
        data = _get_json(FORECAST_URL, {
            "latitude": place["latitude"], "longitude": place["longitude"],
            "timezone": place["timezone"], "forecast_days": days,
            "current": "temperature_2m,apparent_temperature,relative_humidity_2m,"
                       "weather_code,wind_speed_10m",
            "daily": "weather_code,temperature_2m_max,temperature_2m_min,"
                     "precipitation_sum,precipitation_probability_max"})
    except WeatherError as exc:
        return {"status": "error", "error": str(exc)}
    current, daily = data["current"], data["daily"]
    return {
        "status": "success",
        "location": {k: place[k] for k in ("name", "country", "latitude", "longitude")},
        "current": {
            "time": current["time"], "conditions": WEATHER_CODES.get(current["weather_code"],
                                                                     "unknown"),
            "temperature_c": current["temperature_2m"],
            "feels_like_c": current["apparent_temperature"],
            "humidity_percent": current["relative_humidity_2m"],
            "wind_kmh": current["wind_speed_10m"]},
        "daily": [
            {"date": day, "conditions": WEATHER_CODES.get(code, "unknown"),
             "min_c": low, "max_c": high, "precipitation_mm": rain,
             "precipitation_chance_percent": chance}
            for day, code, low, high, rain, chance in zip(
                daily["time"], daily["weather_code"], daily["temperature_2m_min"],
                daily["temperature_2m_max"], daily["precipitation_sum"],
                daily["precipitation_probability_max"], strict=True)]}
