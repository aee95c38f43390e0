"""Events compaction (`summarization`) as the compiler hands it to the runtime: ADK's two
ways to compact, each with the settings ADK's `EventsCompactionConfig` takes by these names."""

from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["ByInvocations", "ByTokens", "CompactionSettings", "compaction_kwargs"]


@dataclass(frozen=True, kw_only=True)
class ByTokens:
    """Summarize once a request reaches `token_threshold` tokens, keeping the last
    `event_retention_size` events verbatim."""

    token_threshold: int
    event_retention_size: int


@dataclass(frozen=True, kw_only=True)
class ByInvocations:
    """Summarize every `compaction_interval` invocations, overlapping `overlap_size`."""

    compaction_interval: int
    overlap_size: int


CompactionSettings = ByTokens | ByInvocations


def compaction_kwargs(settings: CompactionSettings) -> dict[str, int]:
    """The settings as ADK's keyword arguments, in field order."""
    return asdict(settings)
