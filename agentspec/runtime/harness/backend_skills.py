"""`skills: [backend:/dir]`: Agent Skills folders held by the agent's file-tools backend, read
through it as each call's session and user see it (a `state` backend's live in the session),
offered through ADK's SkillToolset like skills beside the spec."""

from __future__ import annotations

import hashlib
import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.skills.models import Frontmatter, Resources, Script, Skill
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.skill_toolset import SkillDiscoveryMode, SkillToolset
from google.adk.tools.tool_context import ToolContext
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError
from ruamel.yaml.events import AliasEvent

from agentspec.runtime.backends import Backend, BackendError, relative_to

__all__ = ["BackendSkillToolset", "read_skills"]

logger = logging.getLogger(__name__)

#: files read from one skills directory of a backend, each turn
MAX_SKILL_FILES = 2000
#: per-content toolsets kept (sessions whose skills read the same share one)
_CACHED = 32
_SKILL_FILES = ("SKILL.md", "skill.md")
_RESOURCES = ("references", "assets", "scripts")


def _frontmatter(text: str) -> tuple[dict[str, Any], str]:
    parts = text.split("---", 2)
    if not text.startswith("---") or len(parts) < 3:
        raise ValueError("SKILL.md must start with YAML frontmatter between `---` lines")
    if len(parts[1]) > 64 * 1024:
        raise ValueError("the frontmatter of SKILL.md is over 64 KiB")
    # whoever writes the backend's files (a model, a user) wrote this: no alias expansion
    if any(isinstance(event, AliasEvent) for event in YAML(typ="safe").parse(parts[1])):
        raise ValueError("the frontmatter of SKILL.md uses YAML aliases")
    parsed = YAML(typ="safe", pure=True).load(parts[1])
    if not isinstance(parsed, dict):
        raise ValueError("the frontmatter of SKILL.md must be a YAML mapping")
    return parsed, parts[2].strip()


def _skill(folder: str, files: dict[str, str]) -> Skill:
    text = next((files[name] for name in _SKILL_FILES if name in files), None)
    if text is None:
        raise ValueError("no SKILL.md")
    parsed, body = _frontmatter(text)
    frontmatter = Frontmatter.model_validate(parsed)
    if frontmatter.name != folder:
        raise ValueError(f"its name `{frontmatter.name}` differs from its folder `{folder}`")
    found: dict[str, dict[str, str]] = {kind: {} for kind in _RESOURCES}
    for path, content in files.items():
        kind, _, rest = path.partition("/")
        if kind in found and rest:
            found[kind][rest] = content
    return Skill(frontmatter=frontmatter, instructions=body, resources=Resources(
        references=found["references"], assets=found["assets"],
        scripts={name: Script(src=src) for name, src in found["scripts"].items()}))


def read_skills(backend: Backend, directories: Sequence[str]) -> list[Skill]:
    """The skills in `directories` of `backend` (each holds `<skill>/SKILL.md` folders); a
    folder that is not a valid skill is left out, with a warning in the log."""
    skills: list[Skill] = []
    for directory in directories:
        try:
            paths = backend.glob("*", directory)
        except BackendError:
            continue  # no such directory (yet): no skills there
        folders: dict[str, dict[str, str]] = {}
        for path in paths[:MAX_SKILL_FILES]:
            inside = relative_to(path, directory.rstrip("/") or "/")
            folder, _, rest = (inside or "").partition("/")
            if not rest:
                continue
            try:
                folders.setdefault(folder, {})[rest] = backend.read(path)
            except BackendError as error:  # a binary or vanished file: the rest still load
                logger.warning("skill file %s is left out: %s", path, error)
        if len(paths) > MAX_SKILL_FILES:
            logger.warning("%s holds %d files; only the first %d are read as skills",
                           directory, len(paths), MAX_SKILL_FILES)
        for folder, files in sorted(folders.items()):
            try:
                skills.append(_skill(folder, files))
            except (ValueError, YAMLError) as error:
                logger.warning("skill folder %s/%s is left out: %s", directory, folder, error)
    return skills


class BackendSkillToolset(BaseToolset):
    """ADK's SkillToolset over the skills beside the spec and those the backend holds for
    the call's session; the latter are read when a turn starts (ADK resolves an agent's
    tools once per invocation), so a skill written during a turn is there the next one."""

    def __init__(self, host: Sequence[Skill], directories: Sequence[str],
                 backend: Callable[[Any], Backend], discovery: str) -> None:
        super().__init__()
        self._host = list(host)
        self._directories = list(directories)
        self._backend = backend
        self._discovery = SkillDiscoveryMode(discovery)
        self._made: OrderedDict[str, SkillToolset] = OrderedDict()
        #: invocation -> the toolset its tools came from (its catalogue must match them)
        self._turns: OrderedDict[str, SkillToolset] = OrderedDict()

    def _inner(self, context: ReadonlyContext) -> SkillToolset:
        turn = self._turns.get(context.invocation_id)
        if turn is None:
            turn = self._turns[context.invocation_id] = self._read(context)
            while len(self._turns) > _CACHED:
                self._turns.popitem(last=False)
        return turn

    def _read(self, context: ReadonlyContext) -> SkillToolset:
        held = read_skills(self._backend(context), self._directories)
        names = {skill.name for skill in self._host}
        for skill in held:
            if skill.name in names:
                logger.warning("skill %s of the backend is left out: a skill beside the spec "
                               "has its name", skill.name)
        skills = self._host + [s for s in held if s.name not in names]
        key = hashlib.sha256(repr([s.model_dump() for s in skills]).encode()).hexdigest()
        if key not in self._made:
            self._made[key] = SkillToolset(skills=skills, discovery_mode=self._discovery)
            while len(self._made) > _CACHED:
                self._made.popitem(last=False)
        self._made.move_to_end(key)
        return self._made[key]

    async def get_tools(self, readonly_context: ReadonlyContext | None = None
                        ) -> list[BaseTool]:
        if readonly_context is None:
            return []
        return await self._inner(readonly_context).get_tools(readonly_context)

    async def process_llm_request(self, *, tool_context: ToolContext,
                                  llm_request: Any) -> None:
        await self._inner(tool_context).process_llm_request(
            tool_context=tool_context, llm_request=llm_request)
