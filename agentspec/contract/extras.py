"""The distribution's name on the package index and how to install one of its extras.

The import package and the command are `agentspec`; the distribution is `agentspec-adk`,
because `agentspec` on the package index is an unrelated project. Every message that tells a
person what to install says it with `install()`, so none can name the other project.
"""

from __future__ import annotations

__all__ = ["DISTRIBUTION", "install"]

DISTRIBUTION = "agentspec-adk"


def install(extra: str) -> str:
    """The command that installs `extra`, e.g. `pip install 'agentspec-adk[mcp]'`."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"
