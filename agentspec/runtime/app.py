"""App-level settings: events compaction (summarization) and resumability (approvals), quietly
about ADK's experimental flag."""

from __future__ import annotations

import warnings
from typing import Any

from google.adk.apps.app import EventsCompactionConfig, ResumabilityConfig

__all__ = ["compaction", "resumable"]


def compaction(*, summarizer_model: Any = None, **settings: Any) -> EventsCompactionConfig:
    """ADK events compaction; `summarizer_model` (a model object) summarizes, default: the
    root agent's model."""
    from google.adk.apps.llm_event_summarizer import LlmEventSummarizer

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*EXPERIMENTAL.*")
        summarizer = LlmEventSummarizer(llm=summarizer_model) if summarizer_model else None
        return EventsCompactionConfig(summarizer=summarizer, **settings)


def resumable() -> ResumabilityConfig:
    """Runs that pause for a person's approval resume inside the same invocation, so a
    workflow goes on with its next step once the approved tool has run."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*EXPERIMENTAL.*")
        return ResumabilityConfig(is_resumable=True)
