"""Filesystem questions about paths that come from specs: answered, never raised."""

from __future__ import annotations

from pathlib import Path

__all__ = ["is_dir", "is_file", "list_dir", "resolved"]


def is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):  # over-long names, NUL bytes, permissions
        return False


def is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def list_dir(path: Path) -> list[Path]:
    try:
        return sorted(path.iterdir())
    except (OSError, ValueError):
        return []


def resolved(path: Path) -> Path:
    """`path` made absolute and normalised, without failing on strange input."""
    try:
        return path.resolve()
    except (OSError, ValueError, RuntimeError):
        return path.absolute()
