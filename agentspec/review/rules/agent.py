"""The rules about an agent's own settings: its kind, instruction, description, execution
mode, sub-agents, callbacks, generation and thinking settings, memory and skills."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Literal

from agentspec.contract.escapes import ESCAPE
from agentspec.contract.placeholders import placeholders
from agentspec.diagnostics import codes
from agentspec.diagnostics.model import Risk
from agentspec.ir.tree import AgentNode, PyObject, kind_of
from agentspec.review.rules.prompts import prompts_changed
from agentspec.review.rules.views import python_text
from agentspec.review.ruletypes import AgentPair, Found, Path, Rule, short, text_diff
from agentspec.review.sides import Side, Where

__all__ = ["RULES"]


def _kind(pair: AgentPair) -> Iterator[Found]:
    was, now = kind_of(pair.before), kind_of(pair.after)
    if was != now:
        yield Found(Risk.MEDIUM, f"`{was}` became `{now}`", ("kind",),
                    ("kind",))


def braces_note(old: str, new: str) -> str:
    """Said once when a `{{key}}` became `{key}` or back: the same text in ADK, where any
    run of braces reads state; here `{{key}}` is the literal text `{key}`."""
    def escaped(text: str) -> set[str]:
        return {m.group(1) for m in ESCAPE.finditer(text)}

    def read(text: str) -> set[str]:
        return {p.key + "?" * p.optional for p in placeholders(text)}

    changed = sorted((escaped(old) & read(new)) | (read(old) & escaped(new)))
    if not changed:
        return ""
    shown = ", ".join(f"`{{{{{key}}}}}` <-> `{{{key}}}`" for key in changed)
    return (f" ({shown}: here `{{{{key}}}}` is the literal text `{{key}}` and `{{key}}` "
            "reads state; ADK reads both as state)")


def _instruction(pair: AgentPair) -> Iterator[Found]:
    """The instruction's unified diff; never the text of a file outside the project (a diff
    is posted where anyone can read it)."""
    before, after = pair.old_llm, pair.new_llm
    if (before.instruction or "") == (after.instruction or ""):
        return
    old_path = ("instruction_file",) if before.instruction_file else ("instruction",)
    new_path = ("instruction_file",) if after.instruction_file else ("instruction",)
    if pair.old.outside(before.instruction_file) or pair.new.outside(after.instruction_file):
        yield Found(Risk.MEDIUM, "the instruction changed; it is read from a file outside the "
                    "project, so its text is not shown", old_path, new_path)
        return
    yield Found(Risk.MEDIUM, "the instruction changed"
                + braces_note(before.instruction or "", after.instruction or ""),
                old_path, new_path, text_diff(before.instruction, after.instruction,
                           f"{pair.old.label}:{pair.old_name}", f"{pair.new.label}:{pair.name}"))


def _execution_mode(pair: AgentPair) -> Iterator[Found]:
    if pair.before.offline != pair.after.offline:
        yield Found(Risk.MEDIUM, "now runs as a background job" if pair.after.offline
                    else "now runs in real time", ("execution_mode",), ("execution_mode",))


def _chat_children(node: AgentNode) -> list[str]:
    return [c.name for c in node.children if c.mode not in ("single_turn", "task")]


def _sub_agents(pair: AgentPair) -> Iterator[Found]:
    old, new = _chat_children(pair.before), _chat_children(pair.after)
    if old != new:
        yield Found(Risk.MEDIUM, f"sub-agents {old} -> {new}", ("sub_agents",), ("sub_agents",))


def _same_field(field_name: str, label: str) -> Callable[[AgentPair], Iterator[Found]]:
    """A field of an LLM agent compared as a whole."""
    def check(pair: AgentPair) -> Iterator[Found]:
        if getattr(pair.old_llm, field_name) != getattr(pair.new_llm, field_name):
            yield Found(Risk.MEDIUM, f"the {label} changed", (field_name,), (field_name,))
    return check


def _callbacks(pair: AgentPair) -> tuple[dict[str, tuple[PyObject, ...]],
                                         dict[str, tuple[PyObject, ...]]]:
    return dict(pair.before.callbacks), dict(pair.after.callbacks)


def _shown(objects: Iterable[PyObject]) -> str:
    return ", ".join(python_text(o) for o in objects)


def _callback_added(pair: AgentPair) -> Iterator[Found]:
    old, new = _callbacks(pair)
    for hook in new:
        if not old.get(hook) and new[hook]:
            yield Found(Risk.HIGH, f"`{hook}` now runs {_shown(new[hook])}", None,
                        ("callbacks", hook))


def _callback_removed(pair: AgentPair) -> Iterator[Found]:
    old, new = _callbacks(pair)
    for hook in old:
        if old[hook] and not new.get(hook):
            yield Found(Risk.HIGH, f"`{hook}` no longer runs {_shown(old[hook])}",
                        ("callbacks", hook), ("callbacks",))


def _callback_changed(pair: AgentPair) -> Iterator[Found]:
    old, new = _callbacks(pair)
    for hook in new:
        if old.get(hook) and new[hook] and old[hook] != new[hook]:
            reason = f"`{hook}` now runs {_shown(new[hook])} (was {_shown(old[hook])})"
            if _shown(new[hook]) == _shown(old[hook]):
                reason = f"`{hook}` runs {_shown(new[hook])} from another module directory"
            yield Found(Risk.HIGH, reason, ("callbacks", hook), ("callbacks", hook))


def _setting_where(side: Side, agent: str, section: str, key: str) -> Path | Where | None:
    """Where a generation or thinking setting is: the agent's own, else its named
    model's."""
    if side.has("agents", agent, section, key):
        return (section, key)
    spec = side.result.spec
    entry = getattr(spec.agents.get(agent), "model", None) if spec is not None else None
    if isinstance(entry, str) and side.has("models", entry, section, key):
        return side.where("models", entry, section, key)
    return (section,) if side.has("agents", agent, section) else ("model",)


def _settings(section: Literal["generate", "thinking"]
              ) -> Callable[[AgentPair], Iterator[Found]]:
    def check(pair: AgentPair) -> Iterator[Found]:
        old = dict(getattr(pair.old_llm, section))
        new = dict(getattr(pair.new_llm, section))
        for key in [*new, *(k for k in old if k not in new)]:
            if old.get(key) != new.get(key):
                yield Found(Risk.MEDIUM, f"{section}.{key} {short(old.get(key))} -> "
                            f"{short(new.get(key))}",
                            _setting_where(pair.old, pair.old_name, section, key),
                            _setting_where(pair.new, pair.name, section, key))
    return check


def _description(pair: AgentPair) -> Iterator[Found]:
    if pair.before.description != pair.after.description:
        yield Found(Risk.MEDIUM, "the description changed (parents route on it)",
                    ("description",), ("description",),
                    text_diff(pair.before.description, pair.after.description,
                               f"{pair.old.label}:{pair.old_name}",
                               f"{pair.new.label}:{pair.name}"))


def _include_contents(pair: AgentPair) -> Iterator[Found]:
    was = pair.old_llm.include_contents or "default"
    now = pair.new_llm.include_contents or "default"
    if was != now:
        yield Found(Risk.MEDIUM, f"include_contents {was} -> {now}", ("include_contents",),
                    ("include_contents",))


def _transfer(pair: AgentPair) -> Iterator[Found]:
    """The flags an agent is written with; an agent called as a tool (or queued) never
    transfers, and becoming one is reported by AS506, AS519 and AS520."""
    if (pair.before.mode, pair.before.offline) != (pair.after.mode, pair.after.offline):
        return
    for target in ("parent", "peers"):
        flag = f"disallow_transfer_to_{target}"
        was, now = bool(getattr(pair.old_llm, flag)), bool(getattr(pair.new_llm, flag))
        if was != now:
            yield Found(Risk.MEDIUM, f"may no longer transfer to its {target}" if now
                        else f"may now transfer to its {target}", (flag,), (flag,))


def _planner(pair: AgentPair) -> Iterator[Found]:
    if pair.old_llm.adk_planner != pair.new_llm.adk_planner:
        yield Found(Risk.MEDIUM,
                    f"planner {pair.old_llm.adk_planner} -> {pair.new_llm.adk_planner}",
                    ("planner",), ("planner",))


def _memory_edit(pair: AgentPair, gained: bool) -> Iterator[Found]:
    was, now = pair.old_llm, pair.new_llm
    old = {f for f, at in zip(was.memory, was.memory_edit_at, strict=True) if at}
    new = {f for f, at in zip(now.memory, now.memory_edit_at, strict=True) if at}
    for name in sorted(new - old if gained else old - new):
        yield (Found(Risk.HIGH, f"can now rewrite memory file `{name}`, which later runs obey",
                     ("memory",) if was.memory else None, ("memory",)) if gained else
               Found(Risk.LOW, f"can no longer rewrite memory file `{name}`", ("memory",),
                     ("memory",)))


def _skill_discovery(pair: AgentPair) -> Iterator[Found]:
    if pair.old_llm.skill_discovery != pair.new_llm.skill_discovery:
        yield Found(Risk.MEDIUM, f"skills are offered {pair.old_llm.skill_discovery} -> "
                    f"{pair.new_llm.skill_discovery}", ("skills",), ("skills",))


def _task_agents(pair: AgentPair) -> Iterator[Found]:
    """The subagent types `task` offers (gaining `task` itself is AS506)."""
    old = {kind: agent.name for kind, agent in pair.old_llm.task.items()}
    new = {kind: agent.name for kind, agent in pair.new_llm.task.items()}
    if old and new and old != new:
        yield Found(Risk.MEDIUM, f"task agents {old} -> {new}", ("task",), ("task",))


RULES: tuple[Rule[AgentPair], ...] = (
    Rule(codes.KIND_CHANGED, ("WorkflowNode.kind",), _kind),  # and the node's class
    Rule(codes.INSTRUCTION_CHANGED, ("LlmFields.instruction", "LlmFields.instruction_file"),
         _instruction),
    Rule(codes.EXECUTION_MODE_CHANGED, ("AgentFields.offline",), _execution_mode),
    Rule(codes.SUB_AGENTS_CHANGED, ("AgentFields.children", "AgentFields.mode"), _sub_agents),
    Rule(codes.MEMORY_CHANGED, ("LlmFields.memory",), _same_field("memory", "memory files")),
    Rule(codes.SKILLS_CHANGED, ("LlmFields.skills",), _same_field("skills", "skills")),
    Rule(codes.PROMPTS_CHANGED, ("LlmFields.prompts",), prompts_changed),
    Rule(codes.OUTPUT_SCHEMA_CHANGED, ("LlmFields.output_schema", "Schema.*"),
         _same_field("output_schema", "output schema")),
    Rule(codes.INPUT_SCHEMA_CHANGED, ("LlmFields.input_schema", "Schema.*"),
         _same_field("input_schema", "input schema")),
    Rule(codes.OUTPUT_KEY_CHANGED, ("LlmFields.output_key", "PlannerNode.output_key"),
         _same_field("output_key", "output key")),
    Rule(codes.STATIC_INSTRUCTION_CHANGED, ("LlmFields.static_instruction",),
         _same_field("static_instruction", "static instruction")),
    Rule(codes.TOOL_ERRORS_CHANGED, ("LlmFields.tool_errors", "PlannerNode.tool_errors",),
         _same_field("tool_errors", "handling of tool errors")),
    Rule(codes.CALLBACK_ADDED, ("AgentFields.callbacks", "PyObject.*"), _callback_added,
         on_new_agent=True),
    Rule(codes.CALLBACK_REMOVED, ("AgentFields.callbacks", "PyObject.*"), _callback_removed),
    Rule(codes.CALLBACK_CHANGED, ("AgentFields.callbacks", "PyObject.*"), _callback_changed),
    Rule(codes.GENERATE_CHANGED, ("LlmFields.generate",), _settings("generate")),
    Rule(codes.THINKING_CHANGED, ("LlmFields.thinking",), _settings("thinking")),
    Rule(codes.DESCRIPTION_CHANGED, ("AgentFields.description",), _description),
    Rule(codes.INCLUDE_CONTENTS_CHANGED, ("LlmFields.include_contents",), _include_contents),
    Rule(codes.TRANSFER_CHANGED, ("LlmFields.disallow_transfer_to_parent",
                                  "LlmFields.disallow_transfer_to_peers"), _transfer),
    Rule(codes.PLANNER_CHANGED, ("LlmFields.adk_planner",), _planner),
    Rule(codes.MEMORY_EDIT_CHANGED, ("LlmFields.memory", "LlmFields.memory_edit_at"),
         lambda pair: _memory_edit(pair, True), on_new_agent=True),
    Rule(codes.MEMORY_EDIT_CHANGED, ("LlmFields.memory", "LlmFields.memory_edit_at"),
         lambda pair: _memory_edit(pair, False)),
    Rule(codes.SKILL_DISCOVERY_CHANGED, ("LlmFields.skill_discovery",), _skill_discovery),
    Rule(codes.TASK_AGENTS_CHANGED, ("LlmFields.task",), _task_agents),
)
