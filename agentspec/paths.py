"""Filesystem questions about paths that come from specs: answered, never raised."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["display_name", "is_dir", "is_file", "list_dir", "resolved"]


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


def display_name(path: Path) -> str:
    """How diagnostics name a file: relative to the working directory when it is below it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if relative.startswith("..") else relative
