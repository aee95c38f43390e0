"""`write_todos` / `read_todos`: deepagents' planning list, kept in ADK session state.

The list lives in session state under `TODOS_KEY` (a sub-agent's under a key of its own, see
`todos_key`) as plain JSON (a list of
`{"content": str, "status": str}`); every write assigns a new list, so ADK records it in the
event's state delta and it survives in any session service. `write_todos` replaces the whole
list, as in deepagents: the model sends the complete, current plan every time.

The docstrings of the two tools are what the model reads as their descriptions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal, get_args

from google.adk.sessions.state import State
from google.adk.tools.tool_context import ToolContext
from pydantic import Field
from typing_extensions import TypedDict

__all__ = [
    "STATUSES",
    "TODOS_INSTRUCTION",
    "TODOS_KEY",
    "Todo",
    "TodoStatus",
    "current_todos",
    "todos_key",
    "read_todos",
    "validate_todos",
    "write_todos",
]

#: the session-state key holding the list
TODOS_KEY = "agentspec:todos"

TodoStatus = Literal["pending", "in_progress", "completed"]
STATUSES: tuple[str, ...] = get_args(TodoStatus)


class Todo(TypedDict):
    """One step of the plan."""

    content: Annotated[str, Field(description="What this step does, as a short imperative.")]
    status: Annotated[TodoStatus, Field(
        description="pending (not started), in_progress (being worked on now; at most one) "
                    "or completed (fully done).")]


#: optional system-prompt text for agents given the todo tools (the tool descriptions suffice)
TODOS_INSTRUCTION = """\
## Planning with `write_todos`

For work that takes several steps, keep a plan with `write_todos` and keep it current: one step
`in_progress` while you work on it, marked `completed` as soon as it is done, new steps added
when you discover them, stale ones removed. Skip the plan for quick, simple requests. The plan
is for you; your final answer still goes in a normal message after the last `write_todos`."""


def _summary(todos: list[dict[str, str]]) -> str:
    counts = {s: sum(1 for t in todos if t["status"] == s) for s in STATUSES}
    return (f"{len(todos)} item(s): {counts['completed']} completed, "
            f"{counts['in_progress']} in progress, {counts['pending']} pending")


def validate_todos(todos: Any) -> tuple[list[dict[str, str]], list[str]]:
    """Check a todo list sent by the model: the clean list, and problems written for the model."""
    if isinstance(todos, str):          # some models send the array as a JSON string
        try:
            todos = json.loads(todos)
        except ValueError:
            return [], ["`todos` must be an array of {content, status} objects, not a string."]
    if not isinstance(todos, list):
        return [], [f"`todos` must be an array of {{content, status}} objects, "
                    f"not {type(todos).__name__}."]
    clean: list[dict[str, str]] = []
    errors: list[str] = []
    for i, item in enumerate(todos, start=1):
        if not isinstance(item, Mapping):
            errors.append(f"item {i} must be an object with `content` and `status`, "
                          f"not {item!r}.")
            continue
        content, status = item.get("content"), item.get("status")
        if not isinstance(content, str) or not content.strip():
            errors.append(f"item {i}: `content` must be a non-empty description of the step.")
        if status not in STATUSES:
            errors.append(f"item {i}: `status` must be one of {', '.join(STATUSES)}, "
                          f"not {status!r}.")
        if isinstance(content, str) and content.strip() and status in STATUSES:
            clean.append({"content": content.strip(), "status": str(status)})
    active = [t["content"] for t in clean if t["status"] == "in_progress"]
    if len(active) > 1:
        errors.append(f"{len(active)} items are in_progress ({'; '.join(active)}); only one step "
                      "may be in_progress at a time. Mark the others pending or completed.")
    return clean, errors


def current_todos(state: State | Mapping[str, Any], key: str = TODOS_KEY
                  ) -> list[dict[str, str]]:
    """The todo list stored in a session state (empty when there is none)."""
    value = state.get(key)
    return [dict(t) for t in value] if isinstance(value, list) else []


def todos_key(tool_context: ToolContext) -> str:
    """`TODOS_KEY`, or for an agent started by `task` (or called as a tool) a key of that
    call's own: as in deepagents, a sub-agent neither sees nor replaces its caller's plan."""
    branch = tool_context.get_invocation_context().branch or ""
    return f"{TODOS_KEY}:{branch}" if "@" in branch else TODOS_KEY


def write_todos(todos: list[Todo], tool_context: ToolContext) -> dict[str, Any]:
    """Create or update your plan: a todo list for the current multi-step task.

    Use it when a task needs three or more distinct steps, when the user gives you several
    things to do, or asks you to keep a todo list. Do not use it for a single simple step, for
    trivial requests or for pure conversation: just answer those directly.

    Each call REPLACES the whole list, so always send every item you want to keep, in order.
    Each item is {"content": what the step does, "status": one of pending, in_progress,
    completed}.

    Keep the statuses current:
    - mark the step you are about to work on in_progress before you start it; only one step
      may be in_progress at a time;
    - mark a step completed as soon as it is fully done (not before, and not in batches); a
      step that failed or is blocked stays in_progress, and you add a step for the blocker;
    - add steps you discover, remove steps that are no longer needed, and leave completed
      steps as they are.

    The list is for tracking only: when everything is done, give the user the actual result
    in a normal message after your last write_todos call.

    Args:
      todos: The complete, updated todo list.
    """
    clean, errors = validate_todos(todos)
    if errors:
        return {"error": "The todo list was not saved. " + " ".join(errors)
                         + " Send the corrected complete list again."}
    tool_context.state[todos_key(tool_context)] = clean  # a new list: ADK records the delta
    return {"status": "saved", "summary": _summary(clean), "todos": clean}


def read_todos(tool_context: ToolContext) -> dict[str, Any]:
    """Read your current todo list (the plan saved with write_todos) and each step's status.

    Use it to check where you are in a multi-step task before deciding the next step.
    """
    todos = current_todos(tool_context.state, todos_key(tool_context))
    if not todos:
        return {"todos": [], "summary": "The todo list is empty; write_todos creates one."}
    return {"todos": todos, "summary": _summary(todos)}
