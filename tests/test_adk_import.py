"""`agentspec import adk`: golden refusals and losses at their positions, the conversion of
Agent Config trees, the written spec, the CLI."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentspec.adkimport import ImportResult, import_adk
from agentspec.adkimport.text import instruction
from agentspec.cli import cli
from agentspec.diagnostics import Diagnostic, Severity
from agentspec.parse import load

CASES = Path(__file__).parent / "adk_cases"
CONFIGS = Path(__file__).parent / "data" / "adk_configs"


def _flags(folder: Path) -> set[str]:
    flags = folder / "flags"
    return set(flags.read_text().split()) if flags.exists() else set()


def _where(diagnostic: Diagnostic, folder: Path) -> str:
    span = diagnostic.span
    assert span is not None, diagnostic
    return f"{Path(span.file).relative_to(folder).as_posix()}:{span.start.line}:" \
        f"{span.start.col} {diagnostic.code}"


def run_case(folder: Path, out: Path) -> tuple[list[str], object]:
    path = folder / (folder / "path").read_text().strip() if (folder / "path").exists() \
        else folder
    flags = _flags(folder)
    result = import_adk(path, output=out, allow_loss="--allow-loss" in flags,
                        write_shims="--write-shims" in flags)
    found = [_where(d, folder) for d in result.diagnostics
             if d.span is not None and Path(d.span.file).is_relative_to(folder)]
    return found, result


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_golden_import(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = CASES / case
    monkeypatch.chdir(CASES.parent.parent)
    found, result = run_case(folder.relative_to(Path.cwd()), tmp_path / "out.yaml")
    status, *expected = (folder / "expected.txt").read_text().splitlines()
    assert found == expected
    assert isinstance(result, ImportResult)
    if status == "# refused":
        assert not result.written and not (tmp_path / "out.yaml").exists()
        assert any(d.is_error for d in result.diagnostics)
        return
    assert status == "# converts" and result.ok, result.diagnostics
    text = (tmp_path / "out.yaml").read_text()
    if "--allow-loss" in _flags(folder):  # each loss is a warning and a comment
        assert all(d.severity is not Severity.ERROR for d in result.diagnostics)
        for code in {line.split()[-1] for line in expected} - {"AS615"}:
            assert f"({code}, --allow-loss)" in text
