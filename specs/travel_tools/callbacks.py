"""Agent, model and tool callbacks of the travel desk.

- `stamp_session` (before_agent): records when the session started and today's date in state,
  so instructions can say `{today?}`.
- `mark_planning_started` / `mark_planning_finished` (before_agent / after_agent of the
  planning pipeline): how long the last planning run took.
- `redact_card_numbers` (before_model): payment card numbers and security codes never reach
  the model; the last four digits stay so the traveler can still refer to "the card ending
  4242".
- `redact_card_numbers_in_reply` (after_model): the same guard on what the model says.
- `check_travel_dates` (before_tool): refuses tool calls with malformed, past or too distant
  dates before the tool runs, with an error the model can act on.
- `truncate_tool_result` (after_tool): keeps very large tool results from flooding the context.
- `keep_traveler_profile` (after_tool of the `traveler_profiler` task agent): stores the profile
  it finishes with in state, where the concierge's instruction reads it as
  `{traveler_profile?}`.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from pydantic import ValidationError

from .schemas import TravelerProfile

__all__ = ["check_travel_dates", "keep_traveler_profile", "mark_planning_finished",
           "mark_planning_started", "redact_card_numbers", "redact_card_numbers_in_reply",
           "redact_cards", "stamp_session", "truncate_tool_result"]

REDACTIONS_KEY = "temp:card_redactions"
FINISH_TASK_TOOL = "finish_task"
PROFILE_KEY = "traveler_profile"
MAX_RESULT_CHARS = 6000
MAX_LIST_ITEMS = 8
MAX_TEXT_CHARS = 1200
MAX_DAYS_AHEAD = 330

# 13 to 19 digits, optionally grouped by single spaces or dashes
_CARD = re.compile(r"(?<![\d+-])\d(?:[ -]?\d){12,18}(?![\d-])")
_SECURITY_CODE = re.compile(r"\b(cvv2?|cvc2?|csc|security code)(\s*(?:is|:|=)?\s*)\d{3,4}\b",
                            re.IGNORECASE)


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def redact_cards(text: str) -> tuple[str, int]:
    """Mask payment card numbers (Luhn-valid, 13-19 digits) and security codes in `text`;
    return the new text and how many were masked."""
    count = 0

    def card(match: re.Match[str]) -> str:
        nonlocal count
        digits = re.sub(r"\D", "", match.group(0))
        if not _luhn(digits):
            return match.group(0)
        count += 1
        return f"[card ending {digits[-4:]}]"

    def code(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return f"{match.group(1)}{match.group(2)}[removed]"

    text = _CARD.sub(card, text)
    text = _SECURITY_CODE.sub(code, text)
    return text, count


def _redact_value(value: Any) -> tuple[Any, int]:
    if isinstance(value, str):
        return redact_cards(value)
    if isinstance(value, dict):
        out, total = {}, 0
        for key, item in value.items():
            out[key], found = _redact_value(item)
            total += found
        return out, total
    if isinstance(value, list):
        items, total = [], 0
        for item in value:
            new, found = _redact_value(item)
            items.append(new)
            total += found
        return items, total
    return value, 0


def _count(callback_context: CallbackContext, found: int) -> None:
    if found:
        callback_context.state[REDACTIONS_KEY] = (
            int(callback_context.state.get(REDACTIONS_KEY) or 0) + found)


def redact_card_numbers(callback_context: CallbackContext,
                        llm_request: LlmRequest) -> LlmResponse | None:
    """before_model: mask card numbers and security codes in every message of the request
    (text, function call arguments and function results), in place. The system instruction
    is the spec's own text and is left alone. Returns None, so the model is still called."""
    total = 0
    for content in llm_request.contents or []:
        for part in content.parts or []:
            if part.text:
                part.text, found = redact_cards(part.text)
                total += found
            if part.function_call is not None and part.function_call.args:
                part.function_call.args, found = _redact_value(part.function_call.args)
                total += found
            if part.function_response is not None and part.function_response.response:
                part.function_response.response, found = _redact_value(
                    part.function_response.response)
                total += found
    _count(callback_context, total)
    return None


def redact_card_numbers_in_reply(callback_context: CallbackContext,
                                 llm_response: LlmResponse) -> LlmResponse | None:
    """after_model: mask card numbers the model wrote anyway (for example copied from a
    document). Returns the changed response, or None when there was nothing to mask."""
    if llm_response.content is None or not llm_response.content.parts:
        return None
    total = 0
    for part in llm_response.content.parts:
        if part.text and not part.thought:
            part.text, found = redact_cards(part.text)
            total += found
    if not total:
        return None
    _count(callback_context, total)
    return llm_response


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def stamp_session(callback_context: CallbackContext) -> None:
    """before_agent: `session_started_at` (once), `last_turn_at` and `today` (YYYY-MM-DD and
    the weekday) in state. Returns None, so the agent runs."""
    state = callback_context.state
    if not state.get("session_started_at"):
        state["session_started_at"] = _now()
    state["last_turn_at"] = _now()
    today = date.today()
    state["today"] = f"{today.isoformat()} ({today.strftime('%A')})"


def mark_planning_started(callback_context: CallbackContext) -> None:
    """before_agent of the planning pipeline: when this planning run started."""
    callback_context.state["planning_started_at"] = _now()


def mark_planning_finished(callback_context: CallbackContext) -> None:
    """after_agent of the planning pipeline: `planning_seconds` of the run, and how many
    plans this session has produced."""
    state = callback_context.state
    started = state.get("planning_started_at")
    if isinstance(started, str):
        elapsed = datetime.now(UTC) - datetime.fromisoformat(started)
        state["planning_seconds"] = round(elapsed.total_seconds(), 1)
    state["plans_made"] = int(state.get("plans_made") or 0) + 1


def check_travel_dates(tool: BaseTool, args: dict[str, Any],
                       tool_context: ToolContext) -> dict[str, Any] | None:
    """before_tool: every argument named `*date` must be a YYYY-MM-DD day from today up to
    330 days ahead (how far fares are published). A bad date skips the tool and returns an
    error the model can fix; good dates return None, so the tool runs."""
    today = date.today()
    for name, value in args.items():
        if not name.endswith("date") or not isinstance(value, str) or not value:
            continue
        try:
            day = date.fromisoformat(value.strip())
        except ValueError:
            return {"status": "error", "error": f"{name} must be a date like "
                    f"{today.isoformat()}, not {value!r}. Ask the traveler if unsure."}
        if day < today:
            return {"status": "error", "error": f"{name} {day} is in the past; today is "
                    f"{today}. Check the year with the traveler."}
        if (day - today).days > MAX_DAYS_AHEAD:
            return {"status": "error", "error": f"{name} {day} is more than "
                    f"{MAX_DAYS_AHEAD} days ahead; fares are not published yet."}
    return None


def _shrink(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_TEXT_CHARS:
        return value[:MAX_TEXT_CHARS] + f" ... [{len(value) - MAX_TEXT_CHARS} more characters]"
    if isinstance(value, list):
        kept = [_shrink(item) for item in value[:MAX_LIST_ITEMS]]
        if len(value) > MAX_LIST_ITEMS:
            kept.append(f"... {len(value) - MAX_LIST_ITEMS} more items left out")
        return kept
    if isinstance(value, dict):
        return {key: _shrink(item) for key, item in value.items()}
    return value


def truncate_tool_result(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext,
                         tool_response: Any) -> dict[str, Any] | None:
    """after_tool: a result longer than 6000 characters of JSON gets long lists cut to 8
    items and long texts to 1200 characters, with a note saying so. Smaller results are
    left alone (None)."""
    try:
        size = len(json.dumps(tool_response, default=str))
    except (TypeError, ValueError):
        return None
    if size <= MAX_RESULT_CHARS:
        return None
    shrunk = _shrink(tool_response if isinstance(tool_response, dict)
                     else {"result": tool_response})
    shrunk["truncated"] = (f"The result of {tool.name} had {size} characters and was "
                           "shortened; ask for fewer results or narrower filters for more.")
    return dict(shrunk)


def keep_traveler_profile(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext,
                          tool_response: Any) -> dict[str, Any] | None:
    """after_tool of the `traveler_profiler` task agent: when its `finish_task` call is
    accepted, store the profile (the call's arguments) in state as `traveler_profile`, where
    other agents read it. The result itself is passed on unchanged (None)."""
    if tool.name != FINISH_TASK_TOOL:
        return None
    failed = isinstance(tool_response, dict) and "error" in tool_response
    if failed:
        return None
    try:
        profile = TravelerProfile.model_validate(args)
    except ValidationError:
        return None
    tool_context.state[PROFILE_KEY] = profile.model_dump(mode="json")
    return None
