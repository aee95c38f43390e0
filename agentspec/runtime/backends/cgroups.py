"""Control groups bounding one sandbox run when agentspec runs as root (only root may make
them): a memory group (`max_memory_mb` for the whole sandbox, its `/tmp` included) and a pids
group (`max_processes`, beside RLIMIT_NPROC), cgroup v1 or v2, made beside this process's
own and removed afterwards with anything left in it killed. Where none can be made, the
per-process limits stand alone."""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Groups", "hierarchy", "sandbox_groups"]

_names = itertools.count()


@dataclass
class Groups:
    """The groups made for one run: `procs` are the files a process writes its pid to, to
    join them; `bounded` the controllers whose limit is set."""

    procs: list[Path] = field(default_factory=list)
    bounded: set[str] = field(default_factory=set)
    memory: Path | None = None  # the group whose memory is bounded

    def oom_kills(self) -> int:
        """How many processes the kernel killed for the memory limit so far (`oom_kill` of
        memory.events in v2, of memory.oom_control in v1; 0 where neither says)."""
        if self.memory is None:
            return 0
        for name in ("memory.events", "memory.oom_control"):
            with contextlib.suppress(OSError, ValueError):
                for line in (self.memory / name).read_text().splitlines():
                    key, _, count = line.partition(" ")
                    if key == "oom_kill":
                        return int(count)
        return 0


def hierarchy(controller: str) -> Path | None:
    """The cgroup directory of this process that has `controller` (v1, or the v2 tree)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            candidate = Path("/sys/fs/cgroup") / controller / path.lstrip("/")
            if candidate.is_dir():
                return candidate
    for line in lines:
        if line.startswith("0::"):
            for base in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")):
                candidate = base / line[3:].lstrip("/")
                with contextlib.suppress(OSError):
                    if controller in (candidate / "cgroup.controllers").read_text().split():
                        return candidate
    return None


@contextlib.contextmanager
def sandbox_groups(max_processes: int, max_memory_bytes: int) -> Iterator[Groups]:
    """Groups bounding processes and memory, as far as they can be made (none unless this
    process is root); removed afterwards."""
    groups = Groups()
    made: dict[Path, Path] = {}
    try:
        if os.geteuid() == 0:  # only root may make groups (a delegated subtree aside)
            for controller, limit in (("pids", max_processes), ("memory", max_memory_bytes)):
                parent = hierarchy(controller)
                if parent is not None and _bound(parent, controller, limit, made):
                    groups.bounded.add(controller)
                    if controller == "memory":
                        groups.memory = made[parent]
        groups.procs = [group / "cgroup.procs" for group in made.values()]
        yield groups
    finally:
        for group in made.values():
            _remove(group)


def _bound(parent: Path, controller: str, limit: int, made: dict[Path, Path]) -> bool:
    group = made.get(parent)
    if group is None:
        group = parent / f"agentspec-sandbox-{os.getpid()}-{next(_names)}"
        try:
            group.mkdir()
        except OSError:
            return False
        made[parent] = group
    names = ("pids.max",) if controller == "pids" else ("memory.max", "memory.limit_in_bytes")
    for name in names:
        with contextlib.suppress(OSError):
            if (group / name).exists():
                (group / name).write_text(str(limit))
                return True
    return False


def _remove(group: Path) -> None:
    """Kill what is left in `group` and remove it (trying for up to two seconds)."""
    for _ in range(200):
        with contextlib.suppress(OSError):
            kill = group / "cgroup.kill"
            if kill.exists():
                kill.write_text("1")
            else:
                for pid in (group / "cgroup.procs").read_text().split():
                    with contextlib.suppress(OSError):
                        os.kill(int(pid), 9)
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.01)
