"""App-level settings: events compaction (summarization) and resumability (approvals), quietly
about ADK's experimental flag."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from google.adk.apps.app import EventsCompactionConfig, ResumabilityConfig

from agentspec.contract.backends import from_data

__all__ = ["compaction", "history_scope", "resumable"]


def compaction(*, summarizer_model: Any = None, history: str | None = None,
               backend: str | None = None,
               definitions: Mapping[str, Mapping[str, Any]] | None = None,
               **settings: Any) -> EventsCompactionConfig:
    """ADK events compaction; `summarizer_model` (a model object) summarizes, default: the
    calling agent's model. With `history`, the events a summary replaces are appended to a
    file under that path of `backend`'s file tools (see `agentspec.runtime.summarization`)."""
    from google.adk.apps.llm_event_summarizer import LlmEventSummarizer

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*EXPERIMENTAL.*")
        summarizer: Any = LlmEventSummarizer(llm=summarizer_model) if summarizer_model \
            else None
        if history is not None:
            from agentspec.runtime.harness.scope import register_history
            from agentspec.runtime.summarization import HistorySummarizer, directory_backend

            if summarizer is None or backend is None or definitions is None:
                raise ValueError("summarization.history needs a summarizer model and the "
                                 "backend of the root agent's file tools")
            register_history(history, backend, {name: from_data(data) for name, data
                                                in definitions.items()})
            summarizer = HistorySummarizer(summarizer, history,
                                           directory_backend(backend, definitions))
        from agentspec.runtime.summarization import SummaryConfig, install_check

        install_check()
        return SummaryConfig(summarizer=summarizer, **settings)


def history_scope() -> Any:
    """The plugin that tells the summarizer which run it is in: the conversation a history
    belongs to, the session a failure after the turn is recorded in."""
    from agentspec.runtime.summarization import HistoryScope

    return HistoryScope()


def resumable() -> ResumabilityConfig:
    """Runs that pause for a person's approval resume inside the same invocation, so a
    workflow goes on with its next step once the approved tool has run."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*EXPERIMENTAL.*")
        return ResumabilityConfig(is_resumable=True)
