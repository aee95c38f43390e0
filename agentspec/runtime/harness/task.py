"""The `task` harness field: one tool that hands a task to a named sub-agent.

The sub-agent runs inside the caller's session on a branch of its own: it shares session state
(and approvals), but sees only the task description, not the caller's conversation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from google.adk.agents import BaseAgent
from google.adk.tools.tool_context import ToolContext

from agentspec.runtime.harness.callbacks import HarnessTool
from agentspec.runtime.jobs.delegation import JobSettings, enqueue

__all__ = ["TaskTool", "task_tool"]

_PROMPT = """Hands a self-contained task to a sub-agent and returns its final answer.

Use it for work that is separate from the conversation, or that can be done with the
sub-agent's own tools and context: research, drafting, checking. The sub-agent does not see
this conversation, so `description` must say everything it needs: the goal, the inputs, the
constraints and what to return. Start several tasks at once when they do not depend on each
other.

Args:
  description: The complete task for the sub-agent.
  subagent_type: Which sub-agent does it, one of:
{agents}
"""


class TaskTool(HarnessTool):
    """The `task` function tool, keeping the agents it can start (`agents`) visible."""

    def __init__(self, func: Any, agents: Mapping[str, BaseAgent],
                 offline: Iterable[str] = ()) -> None:
        super().__init__(func)
        self.agents = dict(agents)
        self.offline = tuple(offline)  # subagent types queued as background jobs


def task_tool(agents: Mapping[str, BaseAgent], *, offline: Iterable[str] = (),
              jobs: JobSettings | None = None) -> TaskTool:
    """The `task(description, subagent_type)` tool over `agents` (subagent_type -> agent);
    a task for one of the `offline` types is queued as a background job in `jobs`."""
    queued = set(offline)
    listing = "\n".join(f"    - {name}: {agent.description or 'no description'}"
                        + (" (runs in the background: you get a job id, the answer comes "
                           "later)" if name in queued else "")
                        for name, agent in agents.items())

    async def task(description: str, subagent_type: str,
                   tool_context: ToolContext) -> dict[str, Any]:
        agent = agents.get(subagent_type)
        if agent is None:
            return {"error": f"There is no sub-agent {subagent_type!r}; choose one of "
                             f"{', '.join(agents)}."}
        if subagent_type in queued and jobs is not None:
            return await enqueue(jobs, agent, description, tool_context, "task")
        base = tool_context.get_invocation_context().branch
        branch = (f"{base}." if base else "") + f"{agent.name}@{tool_context.function_call_id}"
        result = await tool_context.run_node(agent, node_input=description,
                                             override_branch=branch, use_sub_branch=False)
        return {"result": result}

    task.__doc__ = _PROMPT.format(agents=listing)
    return TaskTool(task, agents, queued)
