"""The harness's prompt sections of an LLM agent: `prompts:` lowered (section -> off, or the
replacement file's text), and the plan's callback that adds the sections the agent has."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentspec.contract.frozen import FrozenMap
from agentspec.diagnostics import codes
from agentspec.ir.tree import DeepNode, LlmFields
from agentspec.language.prompts import PROMPT_SECTIONS

if TYPE_CHECKING:
    from agentspec.ir.lower import Lowering
    from agentspec.ir.plan import Value
    from agentspec.language.agents import LlmAgent

__all__ = ["lower_prompts", "memory_header", "prompt_hook"]


def lower_prompts(lowering: Lowering, name: str, agent: LlmAgent
                  ) -> FrozenMap[str, str | bool]:
    """The sections the spec changed: False (off) or the text of its file, which validate
    read (never a second read)."""
    if agent.prompts is None:
        return FrozenMap()
    changed: list[tuple[str, str | bool]] = []
    for section in PROMPT_SECTIONS:
        value = getattr(agent.prompts, section)
        if value is True:
            continue
        if value is False:
            changed.append((section, False))
            continue
        span = lowering.span("agents", name, "prompts", section)
        target = lowering.directory(span) / value
        text = next((s.text for s in lowering.result.sources.values() if s.path == target),
                    None)
        if text is None:
            lowering.diagnostics.append(codes.PATH_NOT_FOUND(
                f"the prompt file `{value}` was not read", span))
            continue
        changed.append((section, text))
    return FrozenMap(changed)


def _sections(node: LlmFields) -> list[str]:
    tools = set(node.filesystem.tools) if node.filesystem is not None else set()
    has = {"base": isinstance(node, DeepNode), "filesystem": bool(tools - {"execute"}),
           "execute": "execute" in tools, "todos": node.todos, "task": bool(node.task),
           "skills": bool(node.skills)}
    return [section for section in PROMPT_SECTIONS if has.get(section)]


def prompt_hook(node: LlmFields) -> Value | None:
    """The `before_model` callback adding the agent's sections, or None when it has none
    (every one turned off)."""
    # deferred: lowering (which validate runs for a scenario file) plans nothing
    from agentspec.ir.plan import Call, Import
    from agentspec.ir.values import lit

    changed = dict(node.prompts)
    sections = [s for s in _sections(node) if changed.get(s, True) is not False]
    if not sections:
        return None
    replaced = {s: text for s, text in changed.items() if isinstance(text, str) and s in sections}
    kwargs: list[tuple[str, Value]] = []
    if replaced:
        kwargs.append(("replaced", lit(replaced)))
    if node.filesystem is not None:
        kwargs.append(("file_tools", lit(list(node.filesystem.tools))))
    if any(kind == "general-purpose" for kind in node.task):
        kwargs.append(("general_purpose", lit(True)))
    if node.result_limit is not None and node.filesystem is not None:
        kwargs.append(("evicts", lit(True)))
    return Call(Import("agentspec.runtime.prompts.harness", "harness_prompt"),
                args=(lit(sections),), kwargs=tuple(kwargs))


def memory_header(node: LlmFields) -> Value | None:
    """The memory block's header when the spec changed it ("" when switched off)."""
    from agentspec.ir.values import lit

    value = dict(node.prompts).get("memory")
    if value is None or value is True:
        return None
    return lit("" if value is False else value)
