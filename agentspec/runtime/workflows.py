"""Sequential, parallel and loop agents.

ADK 2.13 deprecates SequentialAgent, ParallelAgent and LoopAgent in favour of `Workflow`, but a
Workflow cannot be an LlmAgent's sub-agent and runs LlmAgent nodes as single-turn steps that
see their predecessor's output instead of the conversation. Those semantics are what a spec's
`sequential` / `parallel` / `loop` promise (shared history and state, `output_key` hand-off,
transfer from an LLM parent), so the classic agents are used. They are subclassed here:
`typing_extensions.deprecated` warns only when the decorated class itself is instantiated, so
neither building nor ADK's own copies of these agents at run time (`clone`) warn the user.
"""

from __future__ import annotations

import warnings
from typing import Any

from google.adk import agents

__all__ = ["LoopAgent", "ParallelAgent", "SequentialAgent", "loop", "parallel", "sequential"]

with warnings.catch_warnings():  # defining a subclass warns once; that is ours to silence
    warnings.simplefilter("ignore", DeprecationWarning)

    class SequentialAgent(agents.SequentialAgent):
        """Runs `sub_agents` in order (ADK SequentialAgent)."""

    class ParallelAgent(agents.ParallelAgent):
        """Runs `sub_agents` concurrently on isolated branches, sharing state."""

    class LoopAgent(agents.LoopAgent):
        """Repeats `sub_agents` up to `max_iterations` or until one escalates."""


def sequential(**kwargs: Any) -> SequentialAgent:
    return SequentialAgent(**kwargs)


def parallel(**kwargs: Any) -> ParallelAgent:
    return ParallelAgent(**kwargs)


def loop(**kwargs: Any) -> LoopAgent:
    return LoopAgent(**kwargs)
