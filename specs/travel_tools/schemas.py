"""Structured inputs and outputs of the travel desk's agents (pydantic models)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["FareAdvice", "FareQuery", "PackingRequest", "TravelerProfile", "TripRequest"]

Cabin = Literal["economy", "premium", "business"]
HotelTier = Literal["budget", "standard", "premium"]


class TripRequest(BaseModel):
    """What the traveler asked for, normalised for the planning pipeline."""

    origin: str = Field(description="Departure city name or code, e.g. Lisbon or LIS.")
    destination: str = Field(description="Destination city name or code, e.g. Tokyo or TYO.")
    depart_date: str | None = Field(None, description="Outbound date, YYYY-MM-DD; null when "
                                    "the traveler gave none.")
    nights: int = Field(ge=1, le=60, description="Nights at the destination.")
    travelers: int = Field(1, ge=1, le=9, description="Number of travelers.")
    cabin: Cabin = Field("economy", description="Flight cabin.")
    hotel_tier: HotelTier = Field("standard", description="Hotel comfort level.")
    budget_eur: float | None = Field(None, ge=0, description="Total budget in EUR, if given.")
    interests: list[str] = Field(default_factory=list, description="What the travelers enjoy, "
                                 "e.g. museums, food, outdoors.")
    nationality: str | None = Field(None, description="Passport country code, e.g. DE, if "
                                    "known.")


class FareQuery(BaseModel):
    """The arguments of the `fare_finder` agent tool."""

    origin: str = Field(description="Departure city name or code.")
    destination: str = Field(description="Arrival city name or code.")
    depart_date: str = Field(description="Day of the flight, YYYY-MM-DD.")
    cabin: Cabin = Field("economy", description="Flight cabin.")
    direct_only: bool = Field(False, description="Only direct flights.")


class FareAdvice(BaseModel):
    """The fare the `fare_finder` agent recommends, and why."""

    fare_id: str | None = Field(description="The recommended fare's id; null when none fits.")
    carrier: str | None = Field(None, description="Airline of the recommended fare.")
    depart_time: str | None = Field(None, description="Local departure time, HH:MM.")
    stops: int | None = Field(None, ge=0, description="Number of connections.")
    price_eur: float | None = Field(None, ge=0, description="One-way price per person, EUR.")
    reason: str = Field(description="One or two sentences: why this fare, or why none.")
    cheaper_alternative: str | None = Field(None, description="A cheaper option with its "
                                            "trade-off (connection, time), if one exists.")


class PackingRequest(BaseModel):
    """The arguments of the `packing_advisor` agent."""

    destination: str = Field(description="Destination city name or code.")
    month: str = Field(description="Month of travel, e.g. July, or a date YYYY-MM-DD.")
    nights: int = Field(ge=1, le=60, description="Length of the stay in nights.")
    activities: list[str] = Field(default_factory=list, description="Planned activities, e.g. "
                                  "hiking, business dinner, beach.")


class TravelerProfile(BaseModel):
    """Who is travelling, collected before a booking."""

    traveler_names: list[str] = Field(min_length=1, description="Full names as in each "
                                      "passport.")
    nationality: str = Field(description="Passport country code of the lead traveler, e.g. "
                             "DE.")
    home_city: str = Field(description="City the travelers usually depart from.")
    cabin: Cabin = Field("economy", description="Preferred flight cabin.")
    hotel_tier: HotelTier = Field("standard", description="Preferred hotel comfort level.")
    budget_eur: float | None = Field(None, ge=0, description="Usual total trip budget in EUR.")
    needs: str | None = Field(None, description="Accessibility, dietary or other needs, in the "
                              "traveler's words.")
