"""What to write instead of an offline agent nobody delegates to (the hint of AS230).

`execution_mode: offline` queues a job only when a parent delegates a task. Each place the
agent sits gets the spec that does that, written with the spec's own names: a transfer target
of an LLM agent becomes a `mode: task` sub-agent (or an `{agent: ...}` tool), a workflow step
or the root an `{agent: ...}` tool of an LLM agent.
"""

from __future__ import annotations

from agentspec.resolve.agents import LLM_KINDS, kind_of
from agentspec.validate.semantic.context import Context

__all__ = ["offline_hint"]


def offline_hint(ctx: Context, name: str, parent: str | None) -> str:
    """`parent`: the agent that lists `name` in its `sub_agents`, if any."""
    if parent is not None and kind_of(ctx.raw_agent(parent)) in LLM_KINDS:
        return (f"a transfer hands `{parent}`'s conversation over and runs in real time; to "
                f"queue a job, let `{parent}` call it: add `mode: task` to `{name}` (it stays "
                f"in `{parent}`'s `sub_agents` and `{parent}` gets a tool `{name}`), or move "
                f"it from `{parent}`'s `sub_agents` to `tools: [{{agent: {name}}}]`")
    if parent is not None:
        return (f"a step of `{parent}` runs in real time; to queue a job, give an LLM agent "
                f"`tools: [{{agent: {name}}}]` and put that agent in the step's place, or "
                "remove `execution_mode`")
    return (f"the root runs in real time; to queue a job, make an LLM agent the root that "
            f"calls it: `root: lead` with `lead: {{model: ..., tools: [{{agent: {name}}}]}}`, "
            "or remove `execution_mode`")
