"""Shared test helpers: inline specs from YAML strings, diagnostics as position tuples."""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from agentspec.validate.check import CheckResult, check

ROOT = Path(__file__).resolve().parent.parent

# Property tests run the same examples on every run and every machine (derandomized), so the
# README's test command passes or fails deterministically; a bug they find is pinned in the
# test with `@example(...)`, which every profile runs (a database would be ignored:
# derandomize implies none). HYPOTHESIS_PROFILE=explore searches at random, with a local
# database under .hypothesis/, to find new ones.
settings.register_profile("deterministic", derandomize=True, database=None, deadline=None,
                          print_blob=True)
settings.register_profile("explore", derandomize=False, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))
Located = tuple[str, int, int, str]


def located(result: CheckResult) -> list[Located]:
    """Diagnostics as (file, line, column, code): what tests assert, never the wording."""
    return [(d.span.file if d.span else "", d.span.start.line if d.span else 0,
             d.span.start.col if d.span else 0, d.code) for d in result.diagnostics]


@pytest.fixture(autouse=True)
def _restore_sys_path() -> Iterator[None]:
    """Building objects puts spec directories on sys.path; no test may see another's."""
    saved = list(sys.path)
    yield
    sys.path[:] = saved


@pytest.fixture
def check_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., CheckResult]:
    """Write `text` (dedented) to spec.yaml plus any `files`, then check it from tmp_path."""
    monkeypatch.chdir(tmp_path)

    def run(text: str, files: dict[str, str] | None = None, **kwargs: object) -> CheckResult:
        for name, content in (files or {}).items():
            target = tmp_path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(textwrap.dedent(content))
        (tmp_path / "spec.yaml").write_text(textwrap.dedent(text))
        kwargs.setdefault("environ", {})
        return check(Path("spec.yaml"), **kwargs)  # type: ignore[arg-type]

    return run


@pytest.fixture
def spec_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Path]:
    """Write `text` (dedented) to tmp_path/spec.yaml plus any `files`; returns the spec path
    (relative: the tests run from tmp_path). For `agentspec.build.compile_spec`."""
    monkeypatch.chdir(tmp_path)

    def write(text: str, files: dict[str, str] | None = None) -> Path:
        for name, content in (files or {}).items():
            target = tmp_path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(textwrap.dedent(content))
        (tmp_path / "spec.yaml").write_text(textwrap.dedent(text))
        return Path("spec.yaml")

    return write


@pytest.fixture(autouse=True)
def _jobs_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline agents queue jobs in memory in tests, never in a shipped spec's store beside it
    (tests that run workers in processes of their own give them a store explicitly)."""
    monkeypatch.setenv("AGENTSPEC_JOBS_STORE", "memory://")
