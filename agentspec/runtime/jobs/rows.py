"""Jobs as rows of the SQL stores, and rows back as jobs, or why one cannot be.

A row may hold what no job can: a result that is not JSON, text where a number belongs
(SQLite keeps whatever it is given). Such a row must neither crash every claim nor be lost,
so reading it raises UnreadableRow with the reason and the values that make it readable;
the store then sets it aside as FAILED, keeping the bad values in the error.
"""

from __future__ import annotations

from typing import Any

from agentspec.runtime.jobs import Clock, Job, decode, encode, now

__all__ = ["COLUMNS", "JSON_COLUMNS", "UnreadableRow", "job_from_row", "row_from_job"]

COLUMNS = ("id", "agent", "input", "app_name", "user_id", "session_id", "invocation_id",
           "function_call_id", "tool", "status", "attempts", "max_attempts", "lease_owner",
           "lease_expires_at", "available_at", "created_at", "updated_at", "started_at",
           "finished_at", "result", "error", "delivered_at", "output_key", "on_done",
           "resumed_at", "state", "usage", "last_event", "last_event_at")
#: the columns that hold a value as JSON text: the store encodes them as it writes them
JSON_COLUMNS = ("result", "state", "usage")

# what each column must hold, and what replaces a bad value
_TEXTS = ("agent", "input", "app_name", "user_id", "session_id", "invocation_id",
          "function_call_id", "tool", "status", "output_key", "on_done")
_OPTIONAL_TEXTS = ("lease_owner", "error", "last_event")
_INTEGERS = ("attempts", "max_attempts")
_TIMES = ("available_at", "created_at", "updated_at")
_OPTIONAL_TIMES = ("lease_expires_at", "started_at", "finished_at", "delivered_at",
                   "resumed_at", "last_event_at")


class UnreadableRow(Exception):
    """A row that is not a job: its id, why, and the values that replace the bad ones."""

    def __init__(self, job_id: Any, reason: str, repairs: dict[str, Any]) -> None:
        super().__init__(reason)
        self.job_id = job_id
        self.reason = reason
        self.repairs = repairs


def _number(value: Any) -> bool:
    return type(value) in (int, float)


def _problems(values: dict[str, Any], clock: Clock) -> tuple[list[str], dict[str, Any]]:
    checks: list[tuple[tuple[str, ...], Any, Any]] = [
        (_TEXTS, lambda v: isinstance(v, str), ""),
        (_OPTIONAL_TEXTS, lambda v: v is None or isinstance(v, str), None),
        (_INTEGERS, lambda v: type(v) is int, 0),
        (_TIMES, _number, clock()),
        (_OPTIONAL_TIMES, lambda v: v is None or _number(v), None),
    ]
    problems, repairs = [], {}
    for columns, valid, replacement in checks:
        for column in columns:
            if not valid(values[column]):
                problems.append(f"{column} holds {values[column]!r}")
                repairs[column] = replacement
    for column in ("state", "usage"):
        try:
            if not isinstance(decode(values[column]), dict):
                raise TypeError("not a mapping")
        except (TypeError, ValueError) as error:
            problems.append(f"{column} is not a JSON mapping ({error}): {values[column]!r}")
            repairs[column] = {}
    result = values["result"]
    if result is not None:
        try:
            decode(result)
        except (TypeError, ValueError) as error:
            problems.append(f"result is not JSON ({error}): {result!r}")
            repairs["result"] = None
    return problems, repairs


def job_from_row(row: tuple[Any, ...], clock: Clock = now) -> Job:
    """The job a row of COLUMNS holds, or UnreadableRow (whose repairs date a bad time by
    `clock`)."""
    values = dict(zip(COLUMNS, row, strict=True))
    problems, repairs = _problems(values, clock)
    if problems:
        raise UnreadableRow(values["id"], "; ".join(problems), repairs)
    for column in JSON_COLUMNS:
        values[column] = decode(values[column])
    return Job(**values)


def row_from_job(job: Job) -> tuple[Any, ...]:
    values = job.to_dict()
    for column in JSON_COLUMNS:
        values[column] = encode(values[column])
    return tuple(values[c] for c in COLUMNS)
