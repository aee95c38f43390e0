"""Model callbacks that keep personal data out of model requests."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["redact_pii", "redact_text"]

EMAIL_MARK = "[redacted email]"
PHONE_MARK = "[redacted phone]"
STATE_KEY = "temp:pii_redactions"

_EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
# A run of digits, spaces, dots, dashes and parentheses, possibly after a `+`; whether it is a
# phone number is decided by `_is_phone`, which rejects dates, IP addresses and decimals.
_PHONE_CANDIDATE = re.compile(r"(?<![\w/.+-])\+?\(?\d[\d\s().-]{5,}\d(?![\w/])")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_IPV4 = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
_DECIMAL = re.compile(r"\d+\.\d+")


def _is_phone(candidate: str) -> bool:
    stripped = candidate.strip()
    digits = sum(ch.isdigit() for ch in stripped)
    if _ISO_DATE.search(stripped) or _IPV4.fullmatch(stripped) or _DECIMAL.fullmatch(stripped):
        return False
    if stripped.startswith("+"):
        return 8 <= digits <= 15
    return 10 <= digits <= 15


def redact_text(text: str) -> tuple[str, int]:
    """Replace email addresses and phone numbers in `text`; return the text and the count."""
    count = 0

    def phone(match: re.Match[str]) -> str:
        nonlocal count
        if not _is_phone(match.group(0)):
            return match.group(0)
        count += 1
        trailing = match.group(0)[len(match.group(0).rstrip()):]
        return PHONE_MARK + trailing

    text, emails = _EMAIL.subn(EMAIL_MARK, text)
    text = _PHONE_CANDIDATE.sub(phone, text)
    return text, emails + count


def _redact_value(value: Any) -> tuple[Any, int]:
    """Redact every string inside a JSON-like value (tool arguments and results)."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        total, out = 0, {}
        for key, item in value.items():
            out[key], found = _redact_value(item)
            total += found
        return out, total
    if isinstance(value, list):
        total, items = 0, []
        for item in value:
            redacted, found = _redact_value(item)
            items.append(redacted)
            total += found
        return items, total
    return value, 0


def redact_pii(callback_context: Any, llm_request: Any) -> None:
    """before_model callback: redact emails and phone numbers in the request's contents.

    Text parts, function call arguments and function responses of every message in
    `llm_request.contents` are rewritten in place; the system instruction is left alone.
    The number of redactions made for this call is stored in the invocation-scoped state key
    `temp:pii_redactions`. Returns None, so the (redacted) request goes on to the model.
    """
    total = 0
    for content in llm_request.contents or []:
        for part in content.parts or []:
            if part.text:
                part.text, found = redact_text(part.text)
                total += found
            if part.function_call is not None and part.function_call.args:
                part.function_call.args, found = _redact_value(part.function_call.args)
                total += found
            if part.function_response is not None and part.function_response.response:
                part.function_response.response, found = _redact_value(
                    part.function_response.response)
                total += found
    if total:
        callback_context.state[STATE_KEY] = total
    return None
