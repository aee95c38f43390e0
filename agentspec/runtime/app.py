"""App-level settings: events compaction (summarization), quietly about ADK's experimental flag."""

from __future__ import annotations

import warnings
from typing import Any

from google.adk.apps.app import EventsCompactionConfig

__all__ = ["compaction"]


def compaction(*, summarizer_model: Any = None, **settings: Any) -> EventsCompactionConfig:
    """ADK events compaction; `summarizer_model` (a model object) summarizes, default: the
    root agent's model."""
    from google.adk.apps.llm_event_summarizer import LlmEventSummarizer

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*EXPERIMENTAL.*")
        summarizer = LlmEventSummarizer(llm=summarizer_model) if summarizer_model else None
        return EventsCompactionConfig(summarizer=summarizer, **settings)
