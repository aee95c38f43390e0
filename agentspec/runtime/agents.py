"""Walking a built agent tree: every agent an app can run, however it is reached."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["walk"]


def walk(root: Any) -> Iterator[Any]:
    """`root` and every agent under it, once each: sub-agents, the inner agents of routers
    and planners (classifier, role templates), and the agents tools start (`task`, offline
    agents, ADK's `AgentTool`)."""
    todo, seen = [root], set()
    while todo:
        agent = todo.pop()
        if id(agent) in seen:
            continue
        seen.add(id(agent))
        yield agent
        todo.extend(getattr(agent, "sub_agents", None) or ())
        todo.extend(getattr(agent, "inner_agents", None) or ())
        for tool in getattr(agent, "tools", None) or ():
            todo.extend((getattr(tool, "agents", None) or {}).values())
            if getattr(tool, "agent", None) is not None:
                todo.append(tool.agent)
