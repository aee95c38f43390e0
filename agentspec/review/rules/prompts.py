"""The diff rule of `prompts:`: which harness sections of the system prompt an agent now
switches off, replaces or gives back to agentspec's text."""

from __future__ import annotations

from collections.abc import Iterator

from agentspec.diagnostics.model import Risk
from agentspec.review.ruletypes import AgentPair, Found

__all__ = ["prompts_changed"]


def _shown(value: str | bool | None) -> str:
    return "agentspec's text" if value is None else "off" if value is False else "a file's text"


def prompts_changed(pair: AgentPair) -> Iterator[Found]:
    was, now = dict(pair.old_llm.prompts), dict(pair.new_llm.prompts)
    for section in sorted(set(was) | set(now)):
        before, after = was.get(section), now.get(section)
        if before == after:
            continue
        if isinstance(before, str) and isinstance(after, str):
            what = "its replacement text changed"
        else:
            what = f"{_shown(before)} -> {_shown(after)}"
        yield Found(Risk.MEDIUM, f"the `{section}` prompt section: {what}", ("prompts",),
                    ("prompts",))
