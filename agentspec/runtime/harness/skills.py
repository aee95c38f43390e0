"""The `skills` harness field: Agent Skills folders through ADK's SkillToolset."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from google.adk.skills import load_skills_from_dir
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.skill_toolset import SkillDiscoveryMode, SkillToolset

from agentspec.contract.backend_sources import backend_path

__all__ = ["skill_toolset"]


def skill_toolset(directories: Iterable[str], discovery: str = "lazy", *,
                  backend: str | None = None,
                  definitions: Mapping[str, Mapping[str, Any]] | None = None) -> BaseToolset:
    """The skills found in `directories` (each holds `<skill-name>/SKILL.md` folders).

    `lazy`: the model lists skills with `list_skills`; `eager`: the catalogue is in the
    system prompt. Either way `load_skill` reads a skill's instructions and
    `load_skill_resource` its files, when the model decides it needs them. A `backend:/dir`
    directory is read through the backend `backend` of `definitions` (the agent's file
    tools') on every model call.
    """
    entries = list(directories)
    held = [at for entry in entries if (at := backend_path(entry)) is not None]
    skills = [skill for directory in entries if backend_path(directory) is None
              for skill in load_skills_from_dir(directory)]
    if not held:
        return SkillToolset(skills=skills, discovery_mode=SkillDiscoveryMode(discovery))
    if backend is None or definitions is None:
        raise ValueError("`backend:` skill directories need the agent's backend")
    from agentspec.runtime.harness.backend_skills import BackendSkillToolset
    from agentspec.runtime.harness.filesystem import backend_factory

    return BackendSkillToolset(skills, held, backend_factory(backend, definitions), discovery)
