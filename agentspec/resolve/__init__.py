"""Resolve: imports, environment overlays, interpolation, inline agents, extends, defaults."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentspec.diagnostics import Diagnostic
from agentspec.resolve.agents import apply_defaults, apply_extends, flatten_inline_agents
from agentspec.resolve.document import Document
from agentspec.resolve.imports import Loaded, load_tree
from agentspec.resolve.interpolate import UNINTERPOLATED, interpolate
from agentspec.resolve.overlay import apply_environment, check_overlays
from agentspec.source import SourceFile

__all__ = ["Document", "Loaded", "check_overlays", "load_tree", "resolve"]


def resolve(loaded: Document, *, environment: str | None, environ: Mapping[str, str],
            sources: Mapping[str, SourceFile]) -> tuple[Document, list[Diagnostic]]:
    """Turn the merged document into the one the checks read, for one environment."""
    # interpolation builds every mapping and list again (the environment's merge copies
    # what it changes): only the keys it leaves alone are copied here, not the whole spec
    doc = Document({key: _copied(value) if key in UNINTERPOLATED else value
                    for key, value in loaded.data.items()}, loaded.pos)
    found: list[Diagnostic] = []
    if environment is not None:
        found += apply_environment(doc, environment)
    found += interpolate(doc, environ, sources)
    found += flatten_inline_agents(doc)
    found += apply_extends(doc)
    apply_defaults(doc)
    return doc, found


def _copied(value: Any) -> Any:
    """A copy of parsed data (mappings, lists and scalars only): `copy.deepcopy` without
    its memo, a third of the time on a large spec."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    return value
