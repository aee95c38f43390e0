"""A transparent, rule-based deal health score computed from CRM data."""

from __future__ import annotations

from datetime import date
from typing import Any

from .crm import OPEN_STAGES, load_activities, load_deals

__all__ = ["score_deal"]

_STAGE_POINTS = {"discovery": 5, "qualification": 12, "proposal": 20, "negotiation": 28}


def _days_between(earlier: str, later: date) -> int:
    return (later - date.fromisoformat(earlier)).days


def score_deal(deal_id: str, as_of: str = "") -> dict[str, Any]:
    """Compute a 0-100 health score for an open deal from its CRM data, with the reasons.

    The score adds points for stage, an identified champion, an engaged economic buyer, a
    concrete next step and recent activity, and subtracts points for a close date in the
    past, a named competitor and silence. Use its factors as evidence; the final judgement
    is yours.

    Args:
        deal_id: The deal id, for example "D-1007".
        as_of: The date to score at, as YYYY-MM-DD; empty for today.

    Returns:
        `{"status": "success", "deal_id", "score", "band" (strong, at_risk or weak),
        "factors": [{"factor", "points", "detail"}]}`, or an error.
    """
    deal = load_deals().get(deal_id.strip().upper())
    if deal is None:
        return {"status": "error", "error": f"No deal with id {deal_id!r}."}
    if deal["stage"] not in OPEN_STAGES:
        return {"status": "error", "error": f"Deal {deal['deal_id']} is {deal['stage']}; only "
                "open deals are scored."}
    try:
        today = date.fromisoformat(as_of) if as_of else date.today()
    except ValueError:
        return {"status": "error", "error": f"as_of must be YYYY-MM-DD, not {as_of!r}."}
    factors = _factors(deal, load_activities(deal["deal_id"]), today)
    score = max(0, min(100, 30 + sum(points for _, points, _ in factors)))
    band = "strong" if score >= 70 else "at_risk" if score >= 45 else "weak"
    return {"status": "success", "deal_id": deal["deal_id"], "as_of": today.isoformat(),
            "score": score, "band": band,
            "factors": [{"factor": f, "points": p, "detail": d} for f, p, d in factors]}


def _factors(deal: dict[str, Any], activities: list[dict[str, str]],
             today: date) -> list[tuple[str, int, str]]:
    found = [("stage", _STAGE_POINTS[deal["stage"]], f"stage is {deal['stage']}")]
    found.append(("champion", 12, "a champion is identified") if deal["champion"]
                 else ("champion", -8, "no champion identified"))
    found.append(("economic_buyer", 10, "the economic buyer is engaged")
                 if deal["economic_buyer_engaged"]
                 else ("economic_buyer", -6, "the economic buyer is not engaged"))
    found.append(("next_step", 6, f"next step: {deal['next_step']}") if deal["next_step"].strip()
                 else ("next_step", -6, "no next step recorded"))
    if deal["competitor"].strip():
        found.append(("competitor", -5, f"competing with {deal['competitor']}"))
    overdue = _days_between(deal["close_date"], today)
    if overdue > 0:
        found.append(("close_date", -min(20, 5 + overdue // 7),
                      f"close date {deal['close_date']} passed {overdue} days ago"))
    if activities:
        silent = _days_between(activities[0]["date"], today)
        points = 8 if silent <= 7 else 2 if silent <= 21 else -min(20, silent // 7)
        found.append(("activity", points, f"last activity {silent} days ago "
                      f"({activities[0]['type']})"))
    else:
        found.append(("activity", -15, "no activity logged"))
    return found
