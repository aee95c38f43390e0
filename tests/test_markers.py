"""The `slow` marker stays true: tests/conftest.py measures each test's CPU time (its own
process and the processes it waited for), lists the unmarked ones over SLOW_CPU, and with
AGENTSPEC_CHECK_MARKERS=1 fails the run for one over SLOW_CPU_FAIL."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from tests import conftest


@pytest.fixture
def reported() -> Iterator[list[tuple[str, float, float]]]:
    saved = list(conftest._REPORTED)
    conftest._REPORTED.clear()
    yield conftest._REPORTED
    conftest._REPORTED[:] = saved


def _report(nodeid: str, cpu: float, *markers: str, wall: float = 1.0) -> pytest.TestReport:
    return pytest.TestReport(nodeid, ("x.py", 1, nodeid), dict.fromkeys(markers, 1), "passed",
                             None, "teardown", user_properties=[("cpu_seconds", cpu),
                                                                ("wall_seconds", wall)])


def test_unmarked_tests_over_the_limit_are_listed_and_fail_a_checked_run(
        reported: list[tuple[str, float, float]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTSPEC_CHECK_MARKERS", raising=False)  # .ci/run sets it
    over = conftest.SLOW_CPU_FAIL + 1
    for report in (_report("a", conftest.SLOW_CPU - 1), _report("b", conftest.SLOW_CPU + 0.5),
                   _report("c", over), _report("d", over, "slow")):
        conftest.pytest_runtest_logreport(report)
    assert reported == [("b", conftest.SLOW_CPU + 0.5, 1.0), ("c", over, 1.0)]
    session = SimpleNamespace(config=SimpleNamespace(), exitstatus=pytest.ExitCode.OK)
    conftest.pytest_sessionfinish(session)  # type: ignore[arg-type]
    assert session.exitstatus == pytest.ExitCode.OK  # listed only, unless checked
    monkeypatch.setenv("AGENTSPEC_CHECK_MARKERS", "1")
    conftest.pytest_sessionfinish(session)  # type: ignore[arg-type]
    assert session.exitstatus == pytest.ExitCode.TESTS_FAILED
    reported[:] = [("b", conftest.SLOW_CPU + 0.5, 1.0)]  # within the margin: listed, not failed
    session.exitstatus = pytest.ExitCode.OK
    conftest.pytest_sessionfinish(session)  # type: ignore[arg-type]
    assert session.exitstatus == pytest.ExitCode.OK


def test_a_test_that_waits_is_listed_by_its_wall_time_and_fails_a_checked_run(
        reported: list[tuple[str, float, float]], monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that sleeps through a retry's backoff costs no CPU: its wall time gives it away."""
    monkeypatch.setenv("AGENTSPEC_CHECK_MARKERS", "1")
    waiting = conftest.SLOW_WALL_FAIL + 1
    for report in (_report("quick", 0.5, wall=conftest.SLOW_WALL_FAIL - 1),
                   _report("waits", 0.5, wall=waiting),
                   _report("marked", 0.5, "slow", wall=waiting)):
        conftest.pytest_runtest_logreport(report)
    assert reported == [("waits", 0.5, waiting)]
    session = SimpleNamespace(config=SimpleNamespace(), exitstatus=pytest.ExitCode.OK)
    conftest.pytest_sessionfinish(session)  # type: ignore[arg-type]
    assert session.exitstatus == pytest.ExitCode.TESTS_FAILED


def test_the_cpu_of_a_child_process_counts() -> None:
    before = conftest._cpu_seconds()
    burn = "import time\nwhile time.process_time() < 0.3: pass\n"
    subprocess.run([sys.executable, "-c", burn], check=True)
    assert conftest._cpu_seconds() - before >= 0.3
