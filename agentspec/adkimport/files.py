"""An Agent Config file with the positions of its values, and a tree of them: what the loader
reads and the schema check, the converter and the tool mapping read."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentspec.diagnostics import Diagnostic
from agentspec.parse import Key, PosNode
from agentspec.source import SourceFile, Span

__all__ = ["AdkFile", "AdkTree"]


@dataclass
class AdkFile:
    """One Agent Config file: its data, where each value was written, and its source."""

    path: Path  # resolved
    shown: str
    data: dict[str, Any]
    pos: PosNode

    def at(self, *path: Key, key: bool = False) -> Span:
        return self.pos.key_span(path) if key else self.pos.value_span(path)


@dataclass
class AdkTree:
    folder: Path  # resolved
    root: Path | None = None
    files: dict[Path, AdkFile] = field(default_factory=dict)
    #: (file, YAML path of a `config_path` value) -> the file it names
    refs: dict[tuple[Path, tuple[Key, ...]], Path] = field(default_factory=dict)
    sources: dict[str, SourceFile] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
