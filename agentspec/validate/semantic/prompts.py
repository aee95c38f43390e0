"""`prompts:`: a replacement file must exist inside the project (read once, here; lowering
uses this text), and a setting for a section the agent never shows does nothing (AS235)."""

from __future__ import annotations

from collections.abc import Mapping

from agentspec.diagnostics import codes
from agentspec.language.agents import DeepAgent, LlmAgent
from agentspec.language.common import Model
from agentspec.language.effective import harness
from agentspec.validate.semantic.context import Context
from agentspec.validate.semantic.files import existing_path, read_text_file

__all__ = ["check_prompts", "sections_of"]


def sections_of(agent: LlmAgent, backends: Mapping[str, Model]) -> set[str]:
    """The harness sections an agent's prompt has (before `prompts:` turns any off)."""
    kit = harness(agent, backends)
    found = {"base"} if isinstance(agent, DeepAgent) else set()
    if kit.backend is not None and set(kit.file_tools) - {"execute"}:
        found.add("filesystem")
    if "execute" in kit.file_tools:
        found.add("execute")
    found |= {name for name, on in (("todos", kit.todos), ("task", kit.task is not None),
                                    ("skills", bool(agent.skills)),
                                    ("memory", bool(agent.memory))) if on}
    return found


def check_prompts(ctx: Context) -> None:
    for name, agent in ctx.llm_agents():
        if agent.prompts is None:
            continue
        has = sections_of(agent, ctx.spec.backends or {})
        for section in sorted(agent.prompts.model_fields_set, key=list(
                type(agent.prompts).model_fields).index):
            value = getattr(agent.prompts, section)
            where = ("agents", name, "prompts", section)
            if section not in has:
                ctx.report(codes.PROMPT_SECTION_UNUSED(
                    f"`{name}` has no `{section}` section to "
                    + ("replace" if isinstance(value, str) else "switch"),
                    ctx.key_at(*where),
                    hint=f"the section comes with {_WHEN[section]}; remove `{section}` here"))
            if isinstance(value, str):
                target = existing_path(ctx, value, where, directory=False, what="prompt")
                if target is not None:
                    read_text_file(ctx, target, report=True)


_WHEN = {"base": "`kind: deep`", "filesystem": "file tools (`filesystem`)",
         "execute": "`execute` (a shell or sandbox backend)", "todos": "`todos`",
         "task": "`task`", "skills": "`skills`", "memory": "`memory`"}
