"""The deep harness's sections of the system prompt, one per feature, as deepagents'
middlewares add theirs: a base prompt for `kind: deep`, then filesystem, execute, todos,
task, skills (memory's section is the header of its block, `harness/memory.py`).

The words are agentspec's own, written from the behaviour each section must produce. A spec
turns a section off (`prompts: {todos: false}`) or replaces its text with a file's
(`prompts: {todos: prompts/todos.md}`); `harness_prompt` appends the sections the agent
has, in this order, after its own instruction, on every model call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentspec.runtime.harness.files import DEFAULT_READ_LINES, MAX_READ_LINES
from agentspec.runtime.harness.todos import TODOS_INSTRUCTION

__all__ = ["SECTIONS", "harness_prompt", "section_text"]

#: every section, in the order the prompt shows them
SECTIONS = ("base", "filesystem", "execute", "todos", "task", "skills", "memory")

BASE = """\
## How you work

You carry a task through to its end, using your tools, rather than describing what you would
do. Before acting, make sure you understand what is asked; when a request is ambiguous in a way
that changes the result, ask one short question, otherwise make a sensible assumption and say
which. Work in small verified steps: look at what exists before you change it, check the result
of each action, and change course when something fails instead of repeating it. Keep your
messages short and concrete; when you finish, say what you did and what is left, if anything."""

FILESYSTEM = """\
## Files

You have a workspace of files, reached with {tools}. Paths are absolute and start with `/`.
- Find things first: `ls` a directory, `glob` for file names, `grep` for text in files.
- `read_file` shows {lines} lines unless you pass a larger `limit` (at most {most}); for a long
  file, read the part you need and page on with `offset` instead of reading it all at once.
- Read a file before you edit it; `edit_file` replaces an exact piece of its text, so copy the
  text as the file has it (without the line numbers `read_file` adds).
- Prefer editing a file to writing it again whole: `write_file` replaces all of a file's
  content.{evicted}"""

EVICTED = """
- A tool result too large for the conversation is saved to a file; the result tells you where,
  and you read it there with `read_file`."""

EXECUTE = """\
## Running commands

`execute` runs a shell command in the workspace and returns its output and exit code. Use it
to build, test and inspect, and read the exit code: non-zero means the command failed. Commands
have a time limit, and long output is cut, so prefer commands that finish and print little
(`head`, `tail`, `grep`, quiet flags). Never start anything that waits for input or runs
forever, such as an editor, a pager or a server in the foreground."""

TASK = """\
## Handing work to sub-agents with `task`

`task` starts a sub-agent on a piece of work and returns only its final answer, so the steps it
takes never fill your conversation. Use it for work that is self-contained and takes many
steps or a lot of reading, and for independent pieces you can start together: call `task`
several times in one turn and they run side by side. Do it yourself when the work is quick or
needs what only you have seen. A sub-agent sees nothing but the description you give it: write
the goal, the context it needs, and what its answer must contain. Its answer reaches you, not
the user: pass on what matters in your own words.{general}"""

GENERAL = """
The `general-purpose` sub-agent has your instructions and your tools; use it for such work when
no specialist fits."""

SKILLS = """\
## Skills

Skills are folders of instructions, and sometimes scripts or references, for particular kinds
of work. When a request matches a skill, load it (`load_skill`) before you start, follow it,
and load its resources only when it points you to them. Do not load skills you do not need."""

_DEFAULTS = {"base": BASE, "execute": EXECUTE, "todos": TODOS_INSTRUCTION, "skills": SKILLS}


def section_text(section: str, *, file_tools: Sequence[str] = (),
                 general_purpose: bool = False, evicts: bool = False) -> str:
    """A section's own text, for an agent whose file tools are `file_tools`, whose `task`
    offers the general-purpose agent or not, and whose large tool results are saved to
    files (`tool_result_limit`) or not."""
    if section == "filesystem":
        shown = [f"`{name}`" for name in file_tools if name != "execute"]
        return FILESYSTEM.format(tools=", ".join(shown) or "file tools",
                                 lines=DEFAULT_READ_LINES, most=f"{MAX_READ_LINES:,}",
                                 evicted=EVICTED if evicts else "")
    if section == "task":
        return TASK.format(general=GENERAL if general_purpose else "")
    return _DEFAULTS[section]


def harness_prompt(sections: Sequence[str], *, replaced: Mapping[str, str] | None = None,
                   file_tools: Sequence[str] = (), general_purpose: bool = False,
                   evicts: bool = False) -> Any:
    """A `before_model_callback` appending `sections` (each its own text, or the spec's
    replacement in `replaced`) to the system instruction; it never skips the model call."""
    unknown = [s for s in sections if s not in SECTIONS or s == "memory"]
    if unknown:
        raise ValueError(f"no prompt section {unknown[0]!r}")
    replaced = dict(replaced or {})
    text = "\n\n".join(
        replaced[s] if s in replaced else section_text(
            s, file_tools=file_tools, general_purpose=general_purpose, evicts=evicts)
        for s in sorted(sections, key=SECTIONS.index))

    def before_model_callback(callback_context: Any, llm_request: Any) -> None:
        if text:
            llm_request.append_instructions([text])

    return before_model_callback
