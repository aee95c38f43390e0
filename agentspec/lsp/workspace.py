"""The spec files of a workspace folder, found by a bounded walk: a home folder opened as a
workspace is not listed whole. Breadth first (a folder's files before its sub-folders, each
folder's entries by name), so the files nearest the top, where the specs that import others
usually are, come first and the order is the same on every run; no hidden folder, virtual
environment or dependency folder is entered, no link to a folder followed."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator
from pathlib import Path

__all__ = ["MAX_ENTRIES", "yaml_files"]

#: folder entries looked at, at most, in one walk
MAX_ENTRIES = 20_000
_SKIP = {"node_modules", "venv", "__pycache__", "site-packages"}


def yaml_files(folder: Path, max_entries: int = MAX_ENTRIES) -> Iterator[Path]:
    """The `*.yaml`/`*.yml` files under `folder`; the caller stops when it has enough."""
    left = max_entries
    pending = deque([folder])
    while pending and left > 0:
        directory = pending.popleft()
        entries: list[os.DirEntry[str]] = []
        try:
            with os.scandir(directory) as scan:
                for entry in scan:
                    left -= 1
                    if left < 0:
                        break
                    entries.append(entry)
        except OSError:
            continue
        entries.sort(key=lambda e: e.name)
        folders: list[Path] = []
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = not is_dir and entry.is_file()
            except OSError:
                continue
            if is_dir and entry.name not in _SKIP:
                folders.append(Path(entry.path))
            elif is_file and entry.name.endswith((".yaml", ".yml")):
                yield Path(entry.path)
        pending.extend(folders)
