"""Opening the job store a URL names (its own module: the stores import the job types of
`agentspec.runtime.jobs`, which therefore imports no store)."""

from __future__ import annotations

from agentspec.contract.urls import redacted
from agentspec.runtime.jobs import Clock, JobStore, StoreError, now

__all__ = ["open_store"]


def open_store(url: str, clock: Clock = now) -> JobStore:
    """The store a `jobs.store` URL names, telling time by `clock`."""
    if url.startswith("memory://"):
        from agentspec.runtime.jobs.memory import MemoryStore

        return MemoryStore(url, clock)
    if url.startswith("sqlite:///") or url.startswith("postgresql://") or \
            url.startswith("postgres://"):
        from agentspec.runtime.jobs.sql import SqlStore

        return SqlStore(url, clock)
    if url.startswith("temporal://"):
        from agentspec.runtime.jobs.temporal_store import TemporalStore

        return TemporalStore(url, clock)
    raise StoreError(f"unknown job store {redacted(url)!r}: use memory://, sqlite:///PATH, "
                     "postgresql://... or temporal://HOST:PORT/NAMESPACE?task_queue=Q")
