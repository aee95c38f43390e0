"""Environment overlays, chosen with `--env NAME` and deep-merged over the spec."""

from __future__ import annotations

from typing import Any

from agentspec.diagnostics import Diagnostic, codes, did_you_mean
from agentspec.language import OVERLAY_FORBIDDEN, TOP_LEVEL_KEYS
from agentspec.parse import PosNode
from agentspec.resolve.document import Document

__all__ = ["apply_environment", "check_overlays"]


def check_overlays(doc: Document) -> list[Diagnostic]:
    """Top-level keys of every overlay must be spec keys that overlays may change."""
    found = []
    for env, overlay in doc.section("environments").items():
        if not isinstance(overlay, dict):
            continue
        for key in overlay:
            span = doc.key_span("environments", env, key)
            if key in OVERLAY_FORBIDDEN:
                found.append(codes.OVERLAY_KEY(f"an environment cannot change `{key}`", span))
            elif key not in TOP_LEVEL_KEYS:
                found.append(codes.UNKNOWN_KEY(
                    f"unknown top-level key `{key}` in environment `{env}`", span,
                    hint=did_you_mean(key, TOP_LEVEL_KEYS)))
    return found


def apply_environment(doc: Document, name: str) -> list[Diagnostic]:
    """Merge `environments[name]` into `doc` in place."""
    environments = doc.section("environments")
    overlay = environments.get(name)
    if not isinstance(overlay, dict):
        where = doc.key_span("environments") if "environments" in doc.data else None
        defined = ", ".join(f"`{e}`" for e in environments) or "none"
        return [codes.UNKNOWN_ENVIRONMENT(
            f"no environment `{name}` (defined: {defined})", where,
            hint=did_you_mean(name, environments))]
    overlay_pos = doc.pos.find(("environments", name)) or PosNode(doc.pos.value)
    for key, value in overlay.items():
        if key in OVERLAY_FORBIDDEN or key not in TOP_LEVEL_KEYS:
            continue  # reported by check_overlays
        doc.data, doc.pos = _merge(doc.data, doc.pos, key, value, overlay_pos.children[key])
    return []


def _merge(data: dict[str, Any], pos: PosNode, key: str, value: Any,
           value_pos: PosNode) -> tuple[dict[str, Any], PosNode]:
    """Deep-merge one key: mappings merge, `null` removes, anything else replaces."""
    merged = dict(data)
    if value is None:
        merged.pop(key, None)
        return merged, pos
    current = data.get(key)
    if isinstance(current, dict) and isinstance(value, dict):
        inner, inner_pos = current, pos.children.get(key) or PosNode(value_pos.value)
        for sub_key, sub_value in value.items():
            inner, inner_pos = _merge(inner, inner_pos, sub_key, sub_value,
                                      value_pos.children[sub_key])
        merged[key] = inner
        return merged, pos.with_child(key, inner_pos)
    merged[key] = value
    return merged, pos.with_child(key, value_pos)
