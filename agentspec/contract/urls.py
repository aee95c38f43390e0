"""URLs as they may be shown, and what a model server's URL may be.

A URL (the job store's, the conversation store's, a model server's) may hold a password, so
diff, the CLI and the runtime only ever print it `redacted`, and an error message that may
quote one (libpq quotes a URL it cannot read, or the part of it that it took for a host)
goes out `scrubbed` of the URL's secrets. `endpoint_problem` and `url_secrets` are what
validate checks a model's `base_url` against."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import unquote, urlsplit

from agentspec.contract.secrets import secret_name

__all__ = ["endpoint_problem", "masked", "redacted", "scrubbed", "unencoded_password",
           "url_secret_parts", "url_secrets"]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
#: `password=...` in a libpq connection string (`host=h password='p w'`)
_PAIR = re.compile(r"(?i)\b((?:ssl)?password|passwd|pwd)(\s*=\s*)('(?:[^'\\]|\\.)*'?|\S+)")
_MASK = "***"
#: secrets shorter than this are not searched for in free text (a one-letter password would
#: mask every such letter of a message; the URL-shaped parts are masked whatever their size)
_MIN_SECRET = 3


def _split(url: str) -> tuple[str, str | None, str]:
    """(scheme and `://`, userinfo or None, the rest). The userinfo runs to the last `@`
    of the URL, as a password may hold `/`, `?`, `#` or `@` that were not percent-encoded
    (a parser stopping at the first of them would show the rest as a host or a path)."""
    match = _SCHEME.match(url)
    if match is None:
        return "", None, url
    rest = url[match.end():]
    at = rest.rfind("@")
    if at < 0 or rest.startswith("/"):  # `sqlite:////a@b.db`: no authority, a path
        return match.group(0), None, rest
    return match.group(0), rest[:at], rest[at + 1:]


def redacted(url: str) -> str:
    """`url` without its user's password and query values, and without a fragment: safe
    to print. A connection string's `password=` is masked too."""
    head, userinfo, rest = _split(url)
    if not head:
        return _PAIR.sub(lambda m: m.group(1) + m.group(2) + _MASK, url)
    if userinfo is not None:
        user, colon, _ = userinfo.partition(":")
        head += (f"{user}:{_MASK}" if colon else user) + "@"
    rest = rest.split("#", 1)[0]
    where, question, query = rest.partition("?")
    if question:
        where += "?" + "&".join(f"{pair.split('=', 1)[0]}={_MASK}"
                                for pair in query.split("&") if pair)
    return head + where


def _secrets(url: str) -> set[str]:
    """The parts of `url` that are secret: its password (as written and decoded), query
    values, and a connection string's `password=`."""
    found: set[str] = set()
    head, userinfo, rest = _split(url)
    if userinfo is not None and ":" in userinfo:
        password = userinfo.split(":", 1)[1]
        found |= {password, unquote(password), userinfo, unquote(userinfo)}
        # a parser that splits the URL at a character of the password quotes a piece of it
        # (libpq: `invalid percent-encoded token: "p%q w"` for the password `p%q w@x?y`)
        cuts = [match.start() for match in re.finditer(r"[@/?#:\[\]]", password)]
        for start in [0, *(cut + 1 for cut in cuts)]:
            for end in [*(cut for cut in cuts if cut > start), len(password)]:
                found.add(password[start:end])
    query = rest.split("#", 1)[0].partition("?")[2]
    for pair in query.split("&"):
        value = pair.partition("=")[2]
        found |= {value, unquote(value)}
    if not head:
        for match in _PAIR.finditer(url):
            found |= {match.group(3), match.group(3).strip("'")}
    return {secret for secret in found if len(secret) >= _MIN_SECRET}


def unencoded_password(url: str) -> bool:
    """Whether the password of `url` holds a character a URL parser reads otherwise (`@`,
    `/`, `?`, `#`, a space, a `%` that starts no `%XX`): it must be percent-encoded."""
    _, userinfo, _ = _split(url)
    password = userinfo.partition(":")[2] if userinfo is not None else ""
    return re.search(r"[\s@/?#\[\]]|%(?![0-9A-Fa-f]{2})", password) is not None


def masked(url: str) -> str:
    """`url` `redacted`, and a user name written without a password masked too: alone it
    may be a token (`https://TOKEN@host`)."""
    head, userinfo, _ = _split(url)
    shown = redacted(url)
    if userinfo is None or ":" in userinfo:
        return shown
    return head + _MASK + shown[len(head) + len(userinfo):]


#: a URL inside free text: up to a space, a quote or an angle bracket (a password may hold
#: brackets or parentheses, so they do not end it)
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]*")


def scrubbed(text: str, *urls: str) -> str:
    """`text` (an error message, a log line, a tool result) with the secrets of `urls`
    masked wherever they appear, each URL in it `masked`, and connection-string
    passwords masked."""
    for secret in sorted(set().union(*map(_secrets, urls)), key=len, reverse=True):
        text = text.replace(secret, _MASK)
    text = _URL_IN_TEXT.sub(lambda found: masked(found.group(0)), text)
    return _PAIR.sub(lambda m: m.group(1) + m.group(2) + _MASK, text)


# model servers ------------------------------------------------------------------------------

#: names of cloud metadata services (instance credentials), refused as model servers
_METADATA_HOSTS = frozenset({"metadata", "metadata.google.internal", "instance-data",
                             "metadata.azure.com"})


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address `host` spells, in any form a resolver accepts (`169.254.169.254`,
    `2852039166`, `0xa9.0xfe.0xa9.0xfe`, `[fe80::1]`), or None for a name."""
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        pass
    import socket  # deferred: its import costs validate ~3 ms, and most specs name no host

    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def endpoint_problem(url: str) -> str | None:
    """Why `url` cannot be a model server's base URL, or a remote agent's card (not an http(s)
    URL with a host, or a link-local or cloud metadata address, where instance credentials
    live), or None. A URL holding `${env.X}` is checked for what the spec itself writes: its
    scheme."""
    match = _SCHEME.match(url)
    scheme = match.group(1).lower() if match else None
    if scheme not in ("http", "https"):
        if url.startswith("${env.") and (match is None or "${" in match.group(0)):
            return None  # the environment gives the whole URL
        return (f"`{scheme}://` is not an HTTP scheme" if scheme else
                "it is not a URL") + ": use `http://` or `https://`"
    if any(char.isspace() or ord(char) < 32 for char in url):
        return "it holds spaces or control characters"
    if "${" in url:
        return None
    try:
        parts = urlsplit(url)
        host, _ = parts.hostname, parts.port
    except ValueError as error:
        return f"it cannot be read as a URL ({error})"
    if not host:
        return "it names no host"
    address = _address(host)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address is not None and (address.is_link_local or address.is_unspecified or
                                address.is_multicast or
                                address == ipaddress.ip_address("fd00:ec2::254")):
        return (f"`{host}` is a link-local, unspecified or multicast address (cloud "
                "metadata services, with the machine's credentials, live at 169.254.169.254)")
    if host.rstrip(".").lower() in _METADATA_HOSTS:
        return f"`{host}` is a cloud metadata service, not a server to call"
    return None


def url_secrets(url: str) -> list[str]:
    """What `url` writes literally that is a secret: a password, a user name without one
    (`https://TOKEN@host`), query values named like secrets; `${env.X}` is fine."""
    found = []
    _, userinfo, rest = _split(url)
    if userinfo is not None:  # a password, or a user name alone (which may be a token)
        user, colon, password = userinfo.partition(":")
        if not _env_only(password if colon else user):
            found.append("a password" if colon else "a user name that may be a token")
    for pair in rest.split("#", 1)[0].partition("?")[2].split("&"):
        name, _, value = pair.partition("=")
        if value and not _env_only(value) and secret_name(unquote(name)):
            found.append(f"the query parameter `{unquote(name)}`")
    return found


def _env_only(text: str) -> bool:
    return re.fullmatch(r"(\$\{env\.[^}]*\})+", text) is not None


def url_secret_parts(url: str) -> list[tuple[int, int, str]]:
    """Where `url` writes a secret literally (as `url_secrets` finds them), in order: (start,
    end, what: `password`, `user` or the query parameter's name)."""
    head, userinfo, rest = _split(url)
    found = []
    if userinfo is not None:
        user, colon, password = userinfo.partition(":")
        start = len(head) + (len(user) + 1 if colon else 0)
        if not _env_only(password if colon else user):
            found.append((start, len(head) + len(userinfo), "password" if colon else "user"))
    offset = len(url) - len(rest)
    query_at = rest.find("?")
    if query_at >= 0:
        position = offset + query_at + 1
        for pair in rest[query_at + 1:].split("#", 1)[0].split("&"):
            name, equals, value = pair.partition("=")
            if equals and value and not _env_only(value) and secret_name(unquote(name)):
                found.append((position + len(name) + 1, position + len(pair),
                              re.sub(r"[^A-Za-z0-9_]", "_", unquote(name))))
            position += len(pair) + 1
    return found
