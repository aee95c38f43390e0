"""Reading deals and their activities from a CRM export (CSV)."""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

__all__ = ["get_deal", "list_open_deals", "load_activities", "load_deals"]

_DEFAULT_DATA = Path(__file__).resolve().parent / "data"
OPEN_STAGES = ("discovery", "qualification", "proposal", "negotiation")
_NUMBERS = {"amount": float, "employees": int}
_FLAGS = ("champion", "economic_buyer_engaged")


def _data_dir() -> Path:
    return Path(os.environ.get("DEAL_DATA_DIR") or _DEFAULT_DATA)


def _read(name: str) -> list[dict[str, str]]:
    with (_data_dir() / name).open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def load_deals() -> dict[str, dict[str, Any]]:
    """Every deal by id, with numbers and yes/no flags converted."""
    deals: dict[str, dict[str, Any]] = {}
    for row in _read("deals.csv"):
        deal: dict[str, Any] = dict(row)
        for field, convert in _NUMBERS.items():
            deal[field] = convert(row[field]) if row.get(field) else None
        for flag in _FLAGS:
            deal[flag] = row.get(flag, "").strip().lower() in ("yes", "true", "1")
        deals[row["deal_id"]] = deal
    return deals


def load_activities(deal_id: str) -> list[dict[str, str]]:
    """The deal's activities, newest first."""
    rows = [r for r in _read("activities.csv") if r["deal_id"] == deal_id]
    return sorted(rows, key=lambda r: r["date"], reverse=True)


def list_open_deals(owner: str = "", stage: str = "") -> dict[str, Any]:
    """List the open deals in the pipeline, largest first.

    Args:
        owner: Only deals of this account executive (full name, case-insensitive); empty for
            all owners.
        stage: Only deals in this stage: discovery, qualification, proposal or negotiation;
            empty for all open stages.

    Returns:
        The deals with id, account, stage, amount, currency, expected close date and owner.
    """
    if stage and stage.lower() not in OPEN_STAGES:
        return {"status": "error", "error": f"Unknown stage {stage!r}; use one of "
                + ", ".join(OPEN_STAGES)}
    selected = [
        {k: d[k] for k in ("deal_id", "account", "stage", "amount", "currency", "close_date",
                           "owner")}
        for d in load_deals().values()
        if d["stage"] in OPEN_STAGES
        and (not owner or d["owner"].lower() == owner.strip().lower())
        and (not stage or d["stage"] == stage.lower())]
    selected.sort(key=lambda d: d["amount"] or 0, reverse=True)
    return {"status": "success", "deals": selected}


def get_deal(deal_id: str) -> dict[str, Any]:
    """Get everything the CRM knows about one deal: its fields and all logged activities.

    Args:
        deal_id: The deal id, for example "D-1007".

    Returns:
        The deal (account, industry, employees, stage, amount, close date, owner, champion,
        economic buyer engaged, competitor, next step) and its activities, newest first.
    """
    deal = load_deals().get(deal_id.strip().upper())
    if deal is None:
        return {"status": "error", "error": f"No deal with id {deal_id!r}; use "
                "list_open_deals to find the id."}
    return {"status": "success", "deal": deal, "activities": load_activities(deal["deal_id"])}
