"""Names the compiler and the runtime must spell alike: the answers a person may give to an
interrupted call, and the harness's tool names (file tools, todo tools), which validate
checks `interrupt_on` and `filesystem.tools` against and the runtime makes."""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["DECISIONS", "FILE_TOOLS", "TODO_TOOLS", "DecisionKind", "FileTool"]

DecisionKind = Literal["approve", "edit", "reject"]
#: every answer, in the order they are offered (and the default of `interrupt_on: true`)
DECISIONS: tuple[DecisionKind, ...] = get_args(DecisionKind)

FileTool = Literal["ls", "read_file", "write_file", "edit_file", "glob", "grep", "execute"]
#: the file tools, `execute` last (offered only on a backend that runs commands)
FILE_TOOLS: tuple[FileTool, ...] = get_args(FileTool)

TODO_TOOLS = ("write_todos", "read_todos")
