"""Sequential, parallel and loop agents.

ADK 2.13 deprecates SequentialAgent, ParallelAgent and LoopAgent in favour of `Workflow`, but a
Workflow cannot be an LlmAgent's sub-agent and runs LlmAgent nodes as single-turn steps that
see their predecessor's output instead of the conversation. Those semantics are what a spec's
`sequential` / `parallel` / `loop` promise (shared history and state, `output_key` hand-off,
transfer from an LLM parent), so the classic agents are built here, without letting their
deprecation warning reach the user.
"""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

from google.adk.agents import LoopAgent, ParallelAgent, SequentialAgent

__all__ = ["loop", "parallel", "sequential"]


_Agent = TypeVar("_Agent")


def _quietly(cls: type[_Agent], **kwargs: Any) -> _Agent:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return cls(**kwargs)


def sequential(**kwargs: Any) -> SequentialAgent:
    """Runs `sub_agents` in order (ADK SequentialAgent)."""
    return _quietly(SequentialAgent, **kwargs)


def parallel(**kwargs: Any) -> ParallelAgent:
    """Runs `sub_agents` concurrently on isolated branches, sharing state (ADK ParallelAgent)."""
    return _quietly(ParallelAgent, **kwargs)


def loop(**kwargs: Any) -> LoopAgent:
    """Repeats `sub_agents` up to `max_iterations` or until one escalates (ADK LoopAgent)."""
    return _quietly(LoopAgent, **kwargs)
