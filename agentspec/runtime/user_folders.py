"""Where per-user files live in a backend: the names of the folders agentspec writes for a
conversation, and the one encoding that turns a user or session id into a path segment.

The folder of large results is `contract.backends.LARGE_RESULTS` (the bundle reads it too)."""

from __future__ import annotations

import hashlib
import re

__all__ = ["MAX_SEGMENT_CHARS", "path_segment"]


#: the longest segment `path_segment` returns (a file name stays well under 255 bytes)
MAX_SEGMENT_CHARS = 120

_KEPT = re.compile(r"[a-z0-9_-]")


def path_segment(text: str) -> str:
    """`text` as one path segment, injectively: lower-case letters, digits, `_` and `-` stay,
    every other character becomes `~` and the hex of its UTF-8 bytes (so `~` only ever starts
    an escape, and upper case is escaped too: two ids differing in case stay two folders on a
    case-insensitive file system). A result longer than `MAX_SEGMENT_CHARS` is `~~` and the
    SHA-256 of `text`, which no escaped form starts with. Never empty, `.` or `..`."""
    escaped = "".join(char if _KEPT.fullmatch(char) else
                      "".join(f"~{byte:02x}" for byte in char.encode("utf-8", "surrogatepass"))
                      for char in text)
    if not escaped:
        return "~"  # the empty id: `~` followed by no hex digits, no other id's form
    if len(escaped) > MAX_SEGMENT_CHARS:
        return "~~" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return escaped
