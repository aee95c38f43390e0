"""The `agentspec` command. `main` first tries to replay a `validate` whose inputs are as they
were (`remembered.py`), with nothing but the standard library imported; the command group
(`group.py`, click and every command) is imported only when a command runs."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentspec.cli.group import COMMANDS, cli

__all__ = ["COMMANDS", "cli", "main"]


def main() -> None:
    from agentspec.cli import remembered

    argv = sys.argv[1:]
    try:
        status = remembered.replay(argv)
    except Exception:  # noqa: BLE001 - a replay that fails is a run like any other
        status = None
    if status is not None:
        sys.exit(status)
    remembered.start(argv)
    from agentspec.cli.group import cli

    cli(prog_name="agentspec")


def __getattr__(name: str) -> Any:
    if name in ("cli", "COMMANDS"):
        from agentspec.cli import group

        return getattr(group, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
