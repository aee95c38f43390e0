"""Store URLs as they may be shown: a URL (the job store's, the conversation store's) may hold
a password, so diff, the CLI and the runtime only ever print it redacted."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

__all__ = ["redacted"]


def redacted(url: str) -> str:
    """`url` without its user's password and query values: safe to print."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<a URL that cannot be read>"
    if parts.password is None and not parts.query:
        return url  # nothing to hide (and `sqlite:////abs` keeps its slashes)
    netloc = parts.netloc
    if parts.password is not None:
        user, host = netloc.rsplit("@", 1)
        netloc = f"{user.split(':', 1)[0]}:***@{host}"
    query = "&".join(f"{pair.split('=', 1)[0]}=***" for pair in parts.query.split("&")
                     if pair)
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))
