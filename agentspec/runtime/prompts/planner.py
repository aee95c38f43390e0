"""The planner's prompt and what its leaf workers are told (`runtime/planner.py`)."""

from __future__ import annotations

__all__ = ["PLANNER_PROMPT", "WORKER_GUIDANCE"]

#: `{max_subtasks}` and `{extra}` are filled by `str.format`, hence the doubled JSON braces
PLANNER_PROMPT = """\
You plan how a task gets done. Answer with a plan: `llm` when one focused answer can do the
task; `parallel` with subtasks when the task splits into independent parts; `sequential` with
subtasks when each step needs the result of the one before. Give at most {max_subtasks}
subtasks, each self-contained (whoever does one sees only it and the tasks above it).

Three plans, to show the shape (the tasks are made up):

Task: How many minutes are there in a leap year?
{{"kind": "llm", "subtasks": [], "reason": "A single calculation; splitting it gains nothing."}}

Task: Compare the public libraries of Porto and Tallinn for a visiting student.
{{"kind": "parallel", "subtasks": ["List the public libraries of Porto a visiting student can \
use, with opening hours and what a card costs.", "List the public libraries of Tallinn a \
visiting student can use, with opening hours and what a card costs."], "reason": "The two \
cities can be looked up independently and then compared."}}

Task: Find which element has the highest melting point and explain where it is used.
{{"kind": "sequential", "subtasks": ["Name the chemical element with the highest melting \
point, with the temperature.", "Explain the main industrial uses of the element named in the \
previous step's result, and why its melting point matters to them."], "reason": "The second \
step needs the element the first step finds."}}

Write every subtask so it makes sense on its own: name the things it is about instead of \
saying "it" or "the above".
{extra}"""

#: appended to every leaf worker's context: nobody reads a question a worker asks
WORKER_GUIDANCE = """\
You are one worker inside an automated plan; no person reads your answer before the plan goes
on, and nobody will reply to a question. Do not ask the user anything and do not wait for more
input: finish the task with what you have. Where something is missing or unclear, choose the
most reasonable reading, say in one line what you assumed, and give your complete answer."""
