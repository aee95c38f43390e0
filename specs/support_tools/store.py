"""Reading the support data files and appending to the work queues."""

from __future__ import annotations

import json
import os
import re
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["append_record", "load_records", "rank", "words"]

_DEFAULT_DATA = Path(__file__).resolve().parent / "data"
_STOPWORDS = {"a", "an", "and", "are", "can", "do", "does", "for", "how", "i", "in", "is", "it",
              "my", "of", "on", "or", "the", "to", "what", "when", "why", "with", "you", "your"}


def data_dir() -> Path:
    return Path(os.environ.get("SUPPORT_DATA_DIR") or _DEFAULT_DATA)


def queue_dir() -> Path:
    return Path(os.environ.get("SUPPORT_QUEUE_DIR") or ".support_queue")


def load_records(name: str) -> list[dict[str, Any]]:
    """The list stored in `<data dir>/<name>.json`."""
    with (data_dir() / f"{name}.json").open(encoding="utf-8") as handle:
        records = json.load(handle)
    if not isinstance(records, list):
        raise ValueError(f"{name}.json must hold a JSON list of records")
    return records


def append_record(queue: str, prefix: str, record: dict[str, Any]) -> dict[str, Any]:
    """Append `record` with a new id and timestamp to `<queue dir>/<queue>.jsonl`."""
    entry = {"id": f"{prefix}-{uuid.uuid4().hex[:8].upper()}",
             "created_at": datetime.now(UTC).isoformat(timespec="seconds"), **record}
    folder = queue_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / f"{queue}.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry, sort_keys=True) + "\n")
    return entry


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOPWORDS}


def rank(query: str, records: list[dict[str, Any]], fields: dict[str, int],
         limit: int = 3) -> list[dict[str, Any]]:
    """Records sharing the most query words, weighted per field; best first."""
    wanted = words(query)
    scored = []
    for record in records:
        score = 0
        for field, weight in fields.items():
            value = record.get(field, "")
            text = " ".join(value) if isinstance(value, list) else str(value)
            score += weight * len(wanted & words(text))
        if score:
            scored.append((score, record))
    scored.sort(key=lambda pair: -pair[0])
    return [record for _, record in scored[:limit]]
