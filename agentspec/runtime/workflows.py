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
from collections.abc import AsyncGenerator
from typing import Any, ClassVar

from google.adk import agents
from google.adk.events.event import Event
from google.adk.utils.context_utils import Aclosing

__all__ = ["AnswersAsTool", "LoopAgent", "ParallelAgent", "SequentialAgent", "answer_aside",
           "final_text", "loop", "parallel", "sequential"]


def final_text(event: Event) -> str | None:
    if event.partial or not event.content:
        return None
    return "".join(p.text or "" for p in event.content.parts or [] if not p.thought) or None


async def answer_aside(agent: Any, ctx: Any) -> str:
    """Runs `agent` (a classifier, a planner) in `ctx` without passing its events on, so
    they stay out of the conversation; its last answer."""
    text = ""
    async with Aclosing(agent.run_async(ctx)) as events:
        async for event in events:
            text = final_text(event) or text
    return text


class AnswersAsTool:
    """A non-LLM agent that can be called as a tool (`{agent: name}`, `mode: single_turn`):
    ADK wraps any sub-agent whose `mode` says so, and the tool's result is the node's output,
    which for these agents is the last answer their children gave (per child, when they run
    in parallel)."""

    per_child_output: ClassVar[bool] = False

    async def _run_impl(self, *, ctx: Any, node_input: Any) -> AsyncGenerator[Any, None]:
        answers: dict[str, str] = {}
        async for event in super()._run_impl(ctx=ctx, node_input=node_input):  # type: ignore[misc]
            text = final_text(event)
            if text is not None:
                answers.pop(event.author, None)
                answers[event.author] = text
            yield event
        if answers:
            yield answers if self.per_child_output else list(answers.values())[-1]


with warnings.catch_warnings():  # defining a subclass warns once; that is ours to silence
    warnings.simplefilter("ignore", DeprecationWarning)

    class SequentialAgent(AnswersAsTool, agents.SequentialAgent):
        """Runs `sub_agents` in order (ADK SequentialAgent)."""

        mode: str | None = None

    class ParallelAgent(AnswersAsTool, agents.ParallelAgent):
        """Runs `sub_agents` concurrently on isolated branches, sharing state."""

        mode: str | None = None
        per_child_output: ClassVar[bool] = True

    class LoopAgent(AnswersAsTool, agents.LoopAgent):
        """Repeats `sub_agents` up to `max_iterations` or until one escalates."""

        mode: str | None = None


def sequential(**kwargs: Any) -> SequentialAgent:
    return SequentialAgent(**kwargs)


def parallel(**kwargs: Any) -> ParallelAgent:
    return ParallelAgent(**kwargs)


def loop(**kwargs: Any) -> LoopAgent:
    return LoopAgent(**kwargs)
