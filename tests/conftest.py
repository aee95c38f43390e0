"""Shared test helpers: inline specs from YAML strings, diagnostics as position tuples."""

from __future__ import annotations

import atexit
import os
import resource
import shutil
import sys
import tempfile
import textwrap
import time
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
# Built validators are cached between processes (agentspec/language/prebuilt.py): the tests
# keep theirs in a directory of this run's own, never the user's cache, and the commands they
# start inherit it (so they load what an earlier one stored, as a user's second run does).
if "AGENTSPEC_CACHE_DIR" not in os.environ:
    _CACHE = tempfile.mkdtemp(prefix="agentspec-test-cache-")
    atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)
    os.environ["AGENTSPEC_CACHE_DIR"] = _CACHE

settings.register_profile("deterministic", derandomize=True, database=None, deadline=None,
                          print_blob=True)
settings.register_profile("explore", derandomize=False, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))
Located = tuple[str, int, int, str]


#: a test that costs more CPU seconds than this is marked `slow` (CONTRIBUTING.md)
SLOW_CPU = 5.0
#: ... and fails the run past this, when AGENTSPEC_CHECK_MARKERS=1 (.ci/run): CPU time, not
#: wall time, so a loaded machine hardly moves it, and half again as much to spare
SLOW_CPU_FAIL = SLOW_CPU * 1.5
#: a test that waits (a server, a retry's backoff, a subprocess) is not caught by its CPU: one
#: past this many wall seconds is reported too, and fails the run under .ci/run, a margin no
#: load makes a quick test reach (a judge's 503 retried by ADK for 280 s once went unseen)
SLOW_WALL_FAIL = 120.0
#: the inner loop for compiler work (`-m compiler`): parse, resolve, validate, golden cases,
#: diff, graph, schema; no ADK objects are built, no process started
COMPILER_FILES = frozenset({
    "test_parse.py", "test_resolve.py", "test_validate.py", "test_golden.py", "test_diff.py",
    "test_diff_rules.py", "test_graph.py", "test_schema.py", "test_globs.py", "test_render.py",
    "test_stdlib_refs.py", "test_dangling.py", "test_kinds.py", "test_import_graph.py",
    "test_choosing.py", "test_eval_files.py"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Slow tests first (the order within each group kept): spread over the workers from the
    start, the longest do not begin last and leave the other workers idle at the end. The
    compiler's own test files are marked `compiler`."""
    for item in items:
        if item.path.name in COMPILER_FILES:
            item.add_marker(pytest.mark.compiler)
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


_CPU_START = pytest.StashKey[float]()
_WALL_START = pytest.StashKey[float]()
#: (test, CPU seconds, wall seconds) of the tests over SLOW_CPU or SLOW_WALL_FAIL that are
#: not marked slow
_REPORTED: list[tuple[str, float, float]] = []


def _cpu_seconds() -> float:
    """CPU time of this process and of the child processes it has waited for."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    item.stash[_CPU_START] = _cpu_seconds()
    item.stash[_WALL_START] = time.monotonic()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    """The test's CPU time, setup to teardown, goes with its teardown report (which xdist
    sends from the worker to the process that reports)."""
    yield
    start = item.stash.get(_CPU_START, None)
    if start is not None:
        item.user_properties.append(("cpu_seconds", _cpu_seconds() - start))
        item.user_properties.append(
            ("wall_seconds", time.monotonic() - item.stash[_WALL_START]))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "teardown" or "slow" in report.keywords:
        return
    measured = dict(report.user_properties)
    cpu, wall = measured.get("cpu_seconds"), measured.get("wall_seconds")
    if isinstance(cpu, float) and isinstance(wall, float) and \
            (cpu > SLOW_CPU or wall > SLOW_WALL_FAIL):
        _REPORTED.append((report.nodeid, cpu, wall))


def _fails(cpu: float, wall: float) -> bool:
    return _strict() and (cpu > SLOW_CPU_FAIL or wall > SLOW_WALL_FAIL)


def _strict() -> bool:
    return os.environ.get("AGENTSPEC_CHECK_MARKERS") == "1"


def pytest_sessionfinish(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):  # an xdist worker: the controller reports
        return
    if any(_fails(cpu, wall) for _, cpu, wall in _REPORTED) and \
            session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _REPORTED:
        return
    terminalreporter.section(f"tests over {SLOW_CPU:g} s of CPU or {SLOW_WALL_FAIL:g} s of "
                             "wall time without @pytest.mark.slow")
    for nodeid, cpu, wall in sorted(_REPORTED, key=lambda r: -max(r[1], r[2])):
        terminalreporter.write_line(f"{cpu:7.1f} s CPU {wall:7.1f} s wall  {nodeid}"
                                    f"{'  (fails the run)' if _fails(cpu, wall) else ''}")
    terminalreporter.write_line(
        f"mark each @pytest.mark.slow, or make it stop waiting (CONTRIBUTING.md); with "
        f"AGENTSPEC_CHECK_MARKERS=1, as in .ci/run, one over {SLOW_CPU_FAIL:g} s of CPU or "
        f"{SLOW_WALL_FAIL:g} s of wall time fails the run")


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
    (relative: the tests run from tmp_path). For `agentspec.compiler.compile_spec`."""
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

