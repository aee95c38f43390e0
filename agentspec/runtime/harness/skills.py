"""The `skills` harness field: Agent Skills folders through ADK's SkillToolset."""

from __future__ import annotations

from collections.abc import Iterable

from google.adk.skills import load_skills_from_dir
from google.adk.tools.skill_toolset import SkillDiscoveryMode, SkillToolset

__all__ = ["skill_toolset"]


def skill_toolset(directories: Iterable[str], discovery: str = "lazy") -> SkillToolset:
    """The skills found in `directories` (each holds `<skill-name>/SKILL.md` folders).

    `lazy`: the model lists skills with `list_skills`; `eager`: the catalogue is in the
    system prompt. Either way `load_skill` reads a skill's instructions and
    `load_skill_resource` its files, when the model decides it needs them.
    """
    skills = [skill for directory in directories for skill in load_skills_from_dir(directory)]
    return SkillToolset(skills=skills, discovery_mode=SkillDiscoveryMode(discovery))
