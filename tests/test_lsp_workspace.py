"""`find_importers` walks the workspace within its limit: it lists folders only until it has
read its `_SCAN` files, the nearest the top first (so a spec at the top is found beside a
folder of many others), and never enters a hidden or dependency folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentspec.lsp.analysis import Analysis
from agentspec.lsp.workspace import yaml_files
from agentspec.project_files import resolved

SHARED = "agentspec: 1\ntools:\n  fetch: {builtin: google_search}\n"
IMPORTER = ("agentspec: 1\nname: a\nimports: [./common/shared.yaml]\nagents:\n"
            "  boss: {instruction: Hi., tools: [fetch]}\n")


@pytest.fixture
def listed(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every folder listed from now on."""
    found: list[Path] = []
    scandir = os.scandir

    def counting(path: Any = ".") -> Any:
        found.append(Path(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", counting)
    return found


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "common").mkdir()
    shared = tmp_path / "common" / "shared.yaml"
    shared.write_text(SHARED)
    for group in range(30):  # 600 spec files below, none importing `shared.yaml`
        folder = tmp_path / "a_many" / f"g{group:02d}"
        folder.mkdir(parents=True)
        for number in range(20):
            (folder / f"s{number:02d}.yaml").write_text("agentspec: 1\nname: x\n")
    for hidden in (".git", "node_modules", "venv"):
        for number in range(5):
            (tmp_path / hidden / f"d{number}").mkdir(parents=True)
    (tmp_path / "z_top.yaml").write_text(IMPORTER)
    return resolved(tmp_path), resolved(shared)


def test_the_walk_stops_at_its_limit_and_finds_the_top_first(
        tmp_path: Path, listed: list[Path]) -> None:
    folder, shared = _workspace(tmp_path)
    analysis = Analysis()
    analysis.buffers[shared] = SHARED
    analysis.find_importers(shared, [folder])
    assert analysis.roots_of(shared) == [folder / "z_top.yaml"]
    entered = {p.relative_to(folder).parts[:1] for p in listed
               if p.is_relative_to(folder) and p != folder}
    assert not entered & {(".git",), ("node_modules",), ("venv",)}
    # 400 files read (the top one, then 399 of the folders of 20): 20 folders of 30 listed
    groups = [p for p in listed if p.parent.name == "a_many"]
    assert len(groups) == 20, len(groups)


def test_the_order_is_by_depth_then_name(tmp_path: Path) -> None:
    for name in ("b/x.yaml", "a/y.yml", "c.yaml", "a/b/z.yaml", "a.yaml", ".h/q.yaml",
                 "site-packages/p.yaml", "n.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("agentspec: 1\n")
    (tmp_path / "link").symlink_to(tmp_path / "a")  # a link to a folder is not followed
    found = [p.relative_to(tmp_path).as_posix() for p in yaml_files(tmp_path)]
    assert found == ["a.yaml", "c.yaml", "a/y.yml", "b/x.yaml", "a/b/z.yaml"]


def test_a_huge_folder_is_not_listed_whole(tmp_path: Path, listed: list[Path]) -> None:
    """The entries the walk looks at are bounded too: a home folder of many folders and no
    specs is not listed to its end."""
    for number in range(60):
        (tmp_path / f"d{number:02d}").mkdir()
    walk: Iterator[Path] = yaml_files(tmp_path, max_entries=30)
    assert list(walk) == []
    assert len(listed) <= 31
