"""What compiler and runtime agree on about an OpenAPI document: the tool name ADK gives each
operation (`OpenAPIToolset`: the `operationId`, or path and method, in snake_case, cut at 60
characters, a repeat suffixed `_2`, `_3`...), read without importing ADK so `validate` can
name them; `tests/test_openapi_tool.py` holds it to ADK's own names."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

__all__ = ["MAX_EXPANDED", "METHODS", "Operation", "expanded_size", "operations",
           "private_host", "resolve", "snake_case", "tool_names"]

METHODS = ("get", "post", "put", "delete", "patch", "head", "options", "trace")
_MAX_NAME = 60
#: the values a document may hold once ADK has put every `$ref`'s target in its place
MAX_EXPANDED = 100_000


def snake_case(text: str) -> str:
    """ADK's snake_case of an operation id (camelCase, acronyms, spaces and punctuation)."""
    text = re.sub(r"[^a-zA-Z0-9]+", "_", text)
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", text)
    return re.sub(r"_+", "_", text.lower()).strip("_")


@dataclass(frozen=True)
class Operation:
    """One operation of the document: where it is (`("paths", path, method)`) and the tool
    name ADK gives it."""

    at: tuple[str, str, str]
    name: str


def resolve(document: Mapping[str, Any], value: Any) -> Any:
    """`value`, or what its local `$ref` (`#/a/b`, taken literally as ADK does) points at
    (None: nothing there)."""
    seen: set[str] = set()
    while isinstance(value, Mapping) and isinstance(value.get("$ref"), str):
        ref = value["$ref"]
        if not ref.startswith("#/") or ref in seen:
            return None
        seen.add(ref)
        value = document
        for part in ref[2:].split("/"):
            value = value.get(part) if isinstance(value, Mapping) else None
    return value


def expanded_size(document: Mapping[str, Any]) -> int:
    """How many values `document` holds with each local `$ref` replaced by its target, as
    ADK's parser expands it (a reference back into itself counted once): a few kilobytes of
    references to references can expand to billions of values, which ADK would walk for
    ever when it loads the document."""
    sizes: dict[str, int] = {}
    open_refs: set[str] = set()
    shared: dict[int, int] = {}  # by id: a YAML alias makes one node appear many times

    def size(value: Any) -> int:
        if isinstance(value, Mapping):
            ref = value.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/"):
                if ref in open_refs:
                    return 1
                if ref not in sizes:
                    open_refs.add(ref)
                    sizes[ref] = size(resolve(document, {"$ref": ref}))
                    open_refs.discard(ref)
                return 1 + sizes[ref]
            items: Any = value.values()
        elif isinstance(value, list):
            items = value
        else:
            return 1
        if id(value) not in shared:
            shared[id(value)] = 1 + sum(size(item) for item in items)
        return shared[id(value)]

    return size(document)


def operations(document: Mapping[str, Any]) -> Iterator[Operation]:
    """The operations in ADK's order (paths as written, methods in `METHODS` order)."""
    paths = document.get("paths")
    if not isinstance(paths, Mapping):
        return
    taken: set[str] = set()
    found: list[tuple[tuple[str, str, str], str]] = []
    for path, item in paths.items():
        item = resolve(document, item)
        if not isinstance(item, Mapping):
            continue
        for method in METHODS:
            operation = resolve(document, item.get(method))
            if not isinstance(operation, Mapping):
                continue
            ident = operation.get("operationId")
            if not isinstance(ident, str) or not ident:
                ident = snake_case(f"{path}_{method}")
            found.append(((("paths", str(path), method)),
                          snake_case(snake_case(ident)[:_MAX_NAME])[:_MAX_NAME]))
    reserved = {name for _, name in found}
    for at, name in found:
        unique, number = name, 2
        while unique in taken or (unique != name and unique in reserved):
            suffix = f"_{number}"
            unique, number = name[:_MAX_NAME - len(suffix)] + suffix, number + 1
        taken.add(unique)
        yield Operation(at, unique)


def tool_names(document: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(operation.name for operation in operations(document))


_PRIVATE_NAMES = ("localhost", "metadata", "metadata.goog")
_PRIVATE_SUFFIXES = (".localhost", ".local", ".internal", ".metadata.goog")


def private_host(url: str) -> bool:
    """Whether ADK's REST tools refuse `url`'s host unless private network access is
    allowed: loopback, private and link-local addresses, `localhost`, `*.internal`,
    `*.local` (read from the URL alone; a public name that resolves to a private address is
    refused by ADK when it calls)."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if host in _PRIVATE_NAMES or host.endswith(_PRIVATE_SUFFIXES):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        pass
    else:  # an IPv6 address that carries an IPv4 one (6to4, Teredo) is judged by it too
        carried = [address.sixtofour, *(address.teredo or ())] \
            if isinstance(address, ipaddress.IPv6Address) else []
        return not address.is_global or any(
            inner is not None and not inner.is_global for inner in carried)
    import socket  # deferred: its import costs validate ~3 ms, and most specs name no host

    try:  # the resolver's legacy forms of IPv4: `127.1`, `0x7f000001`, `2130706433`, `0177.1`
        packed = socket.inet_aton(host) if re.fullmatch(r"[0-9a-fx.]+", host) else None
    except OSError:
        packed = None
    return packed is not None and not ipaddress.IPv4Address(packed).is_global
