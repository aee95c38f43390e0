"""Fetch a web page and return its readable text."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from typing import Any

__all__ = ["fetch_page"]

TIMEOUT_SECONDS = 20
MAX_DOWNLOAD_BYTES = 2_000_000
_SKIPPED = {"script", "style", "noscript", "template", "svg", "head", "nav", "footer"}
_BLOCKS = {"p", "div", "section", "article", "li", "tr", "br", "h1", "h2", "h3", "h4", "h5",
           "h6", "pre", "blockquote", "table", "ul", "ol", "header", "main"}


class _TextExtractor(HTMLParser):
    """Collects visible text, one line per block element, and the page title."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.current: list[str] = []
        self.title = ""
        self.skipping = 0
        self.in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        elif tag in _SKIPPED:
            self.skipping += 1
        elif tag in _BLOCKS:
            self.flush()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        elif tag in _SKIPPED:
            self.skipping = max(0, self.skipping - 1)
        elif tag in _BLOCKS:
            self.flush()

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
        elif not self.skipping:
            self.current.append(data)

    def flush(self) -> None:
        line = " ".join("".join(self.current).split())
        if line:
            self.lines.append(line)
        self.current = []


def fetch_page(url: str, max_chars: int = 20000) -> dict[str, Any]:
    """Download a web page and return its title and readable text.

    Use this to read a search result before quoting or citing it. Scripts, styles and
    navigation are removed; the text keeps one line per paragraph or list item.

    Args:
        url: The full http(s) URL of the page.
        max_chars: Return at most this many characters of text. Defaults to 20000.

    Returns:
        `{"status": "success", "url": <final URL after redirects>, "title": ..., "text": ...,
        "truncated": bool}`, or `{"status": "error", "error": ...}` when the page cannot be
        fetched or is not text.
    """
    parsed = urllib.parse.urlparse(url.strip())
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        return {"status": "error", "error": f"Not an http(s) URL: {url!r}"}
    request = urllib.request.Request(url.strip(), headers={
        "User-Agent": "Mozilla/5.0 (compatible; agentspec-research-tools/1.0)",
        "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            content_type = response.headers.get_content_type()
            charset = response.headers.get_content_charset() or "utf-8"
            body = response.read(MAX_DOWNLOAD_BYTES)
            final_url = response.geturl()
    except urllib.error.HTTPError as exc:
        return {"status": "error", "error": f"{url} answered HTTP {exc.code} {exc.reason}"}
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        return {"status": "error", "error": f"{url} could not be reached: "
                                            f"{getattr(exc, 'reason', exc)}"}
    if not (content_type.startswith("text/") or content_type in (
            "application/xhtml+xml", "application/json", "application/xml")):
        return {"status": "error", "error": f"{url} is {content_type}, not a text page"}
    text = body.decode(charset, errors="replace")
    title = ""
    if content_type in ("text/html", "application/xhtml+xml"):
        extractor = _TextExtractor()
        extractor.feed(text)
        extractor.close()
        extractor.flush()
        text, title = "\n".join(extractor.lines), " ".join(extractor.title.split())
    limit = max(1, int(max_chars))
    return {"status": "success", "url": final_url, "title": title, "text": text[:limit],
            "truncated": len(text) > limit}
