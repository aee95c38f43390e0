"""The JSON Schema of a file's language (a spec, a scenario file, an eval file) at a key
path: the keys it allows there and what a key means (its description), for completion and
hover."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

__all__ = ["describe", "keys_at"]

Schema = dict[str, Any]


@functools.cache
def _schema(language: str) -> Schema:
    """`language`: `spec`, `scenario` or `eval` (`analysis.file_kind`)."""
    if language == "scenario":
        from agentspec.testing.schema import scenario_json_schema

        return scenario_json_schema()
    if language == "eval":
        from agentspec.evaluation.schema import eval_json_schema

        return eval_json_schema()
    from agentspec.language.schema import json_schema

    return json_schema()


def _deref(root: Schema, node: Schema) -> Schema:
    seen = 0
    while "$ref" in node and seen < 20:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        node = root.get("$defs", {}).get(name, {})
        seen += 1
    return node


def _alternatives(root: Schema, node: Schema) -> Iterator[Schema]:
    """`node` and, through `oneOf`/`anyOf`/`allOf` and list `items`, what it may be."""
    node = _deref(root, node)
    yield node
    for word in ("oneOf", "anyOf", "allOf"):
        for option in node.get(word, ()):
            if isinstance(option, dict):
                yield from _alternatives(root, option)
    items = node.get("items")
    if isinstance(items, dict):
        yield from _alternatives(root, items)


def _child(root: Schema, node: Schema, key: str) -> list[Schema]:
    found: list[Schema] = []
    for option in _alternatives(root, node):
        props = option.get("properties", {})
        if key in props:
            found.append(props[key])
        elif isinstance(option.get("patternProperties"), dict):
            found += option["patternProperties"].values()
        elif isinstance(option.get("additionalProperties"), dict):
            found.append(option["additionalProperties"])
    return found


def _at(path: list[str], language: str) -> list[Schema]:
    root = _schema(language)
    nodes: list[Schema] = [root]
    for key in path:
        nodes = [child for node in nodes for child in _child(root, node, key)]
        if not nodes:
            break
    return nodes


def keys_at(path: list[str], *, language: str = "spec") -> dict[str, str]:
    """The keys a mapping at `path` may hold, each with its description."""
    root = _schema(language)
    keys: dict[str, str] = {}
    for node in _at(path, language):
        for option in _alternatives(root, node):
            for key, sub in option.get("properties", {}).items():
                keys.setdefault(key, _description(root, sub))
    return keys


def describe(path: list[str], key: str, *, language: str = "spec") -> str | None:
    """What `key` under `path` means, from the schema."""
    root = _schema(language)
    for node in _at(path, language):
        for sub in _child(root, node, key):
            text = _description(root, sub)
            if text:
                return text
    return None


def _description(root: Schema, node: Schema) -> str:
    if not isinstance(node, dict):
        return ""
    text = node.get("description") or _deref(root, node).get("description") or ""
    return str(text)
