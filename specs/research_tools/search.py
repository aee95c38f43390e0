"""Web search through the Brave Search API (https://api.search.brave.com)."""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

__all__ = ["web_search"]

API_URL = "https://api.search.brave.com/res/v1/web/search"
API_KEY_ENV = "BRAVE_SEARCH_API_KEY"
TIMEOUT_SECONDS = 15
_TAGS = re.compile(r"<[^>]+>")


def web_search(query: str, max_results: int = 5) -> dict[str, Any]:
    """Search the web and return the most relevant pages for a query.

    Use this to find sources for a topic or to check a single fact. Each result has a title,
    its URL, a short snippet and, when known, the page's age. Snippets are only previews:
    read the page itself before quoting it or citing a number from it.

    Args:
        query: A search-engine style query, specific enough to find primary sources,
            for example "EU AI Act obligations for general-purpose AI models".
        max_results: How many results to return, from 1 to 20. Defaults to 5.

    Returns:
        On success `{"status": "success", "query": ..., "results": [{"title", "url",
        "snippet", "age"}, ...]}`; when the search cannot run, `{"status": "error",
        "error": <what went wrong and how to fix it>}`.
    """
    query = query.strip()
    if not query:
        return {"status": "error", "error": "The query is empty; pass the words to search for."}
    api_key = os.environ.get(API_KEY_ENV, "").strip()
    if not api_key:
        return {"status": "error",
                "error": f"Web search is not configured: set the {API_KEY_ENV} environment "
                         "variable to a Brave Search API key (https://brave.com/search/api/)."}
    count = max(1, min(int(max_results), 20))
    url = f"{API_URL}?{urllib.parse.urlencode({'q': query, 'count': count})}"
    request = urllib.request.Request(url, headers={
        "Accept": "application/json", "X-Subscription-Token": api_key,
        "User-Agent": "agentspec-research-tools/1.0"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            payload = json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")[:300]
        return {"status": "error", "error": f"The search API answered HTTP {exc.code}: {detail}"}
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return {"status": "error", "error": f"The search API could not be reached: {reason}"}
    except json.JSONDecodeError:
        return {"status": "error", "error": "The search API returned a response that is not JSON."}
    results = payload.get("web", {}).get("results", [])
    return {"status": "success", "query": query,
            "results": [_result(item) for item in results][:count]}


def _result(item: dict[str, Any]) -> dict[str, str]:
    return {"title": _plain(item.get("title", "")), "url": item.get("url", ""),
            "snippet": _plain(item.get("description", "")),
            "age": item.get("age") or item.get("page_age") or ""}


def _plain(text: str) -> str:
    """Brave marks matches with <strong>; the model wants plain text."""
    return " ".join(_TAGS.sub("", text).split())
