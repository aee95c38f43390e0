"""Files the spec names: instruction files, memory files, skill directories and SKILL.md."""

from __future__ import annotations

import re
import stat
from pathlib import Path as FsPath

from agentspec.contract.backend_sources import backend_path
from agentspec.diagnostics import codes
from agentspec.language.agents import LlmAgent, SkillsConfig
from agentspec.parse import Parsed, PosNode, load_text, read_text
from agentspec.project_files import display_name, is_dir, is_file, list_dir
from agentspec.source import SourceFile, Span
from agentspec.validate.semantic.context import Context
from agentspec.validate.semantic.project import spec_paths

__all__ = ["check_files", "existing_path", "read_text_file", "skill_dirs"]

_KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_FENCE = re.compile(r"^---[ \t]*$", re.MULTILINE)


def existing_path(ctx: Context, value: str, path: tuple[str | int, ...], *, directory: bool,
                  what: str) -> FsPath | None:
    span = ctx.at(*path)
    if "${" in value:
        ctx.report(codes.BAD_INTERPOLATION(
            f"the {what} path `{value}` uses `${{...}}`; paths are read when the spec is built",
            span, hint="write the path literally, relative to the spec"))
        return None
    target = ctx.directory_of(span) / value
    if ctx.project.judge(target) == "outside":
        return None  # reported by check_project; never looked at
    exists = is_dir(target) if directory else is_file(target)
    if not exists:
        kind = "directory" if directory else "file"
        found = _found_instead(target)
        ctx.report(codes.PATH_NOT_FOUND(
            f"the {what} {kind} `{value}` does not exist" if found is None else
            f"the {what} {kind} `{value}` is {found}, not a "
            f"{'directory' if directory else 'regular file'}", span,
            hint=f"paths are relative to `{span.file}`"))
        return None
    return target


def _found_instead(target: FsPath) -> str | None:
    """What is at `target` when it is not what the spec wants (None: nothing)."""
    try:
        mode = target.stat().st_mode
    except (OSError, ValueError):
        return None
    return "a directory" if stat.S_ISDIR(mode) else "a regular file" if stat.S_ISREG(mode) \
        else "a FIFO, socket or device"


def read_text_file(ctx: Context, target: FsPath, *, report: bool = False
                   ) -> SourceFile | None:
    """Read a file the spec points at (bounded like spec files) and register it with the
    spec's sources, so diagnostics can quote it and later stages use this text instead of
    reading the file again; never one outside the project (reported by check_project).
    `report`: a file that cannot be read (too large, not UTF-8) is a problem of the spec."""
    if ctx.project.judge(target) == "outside":
        return None
    for source in ctx.sources.values():  # read already
        if source.path == target:
            return source
    text, problem = read_text(target, display_name(target))
    if text is None:
        if report and problem is not None:
            ctx.report(problem)
        return None
    source = SourceFile(target, text, display_name(target))
    ctx.sources[source.name] = source
    return source


def skill_dirs(setting: object) -> list[str]:
    if isinstance(setting, SkillsConfig):
        return setting.paths
    return list(setting) if isinstance(setting, list) else []


def _skill_path(setting: object, index: int) -> tuple[str | int, ...]:
    return ("paths", index) if isinstance(setting, SkillsConfig) else (index,)


def _check_skill(ctx: Context, folder: FsPath, span: Span) -> None:
    skill_md = next((folder / n for n in ("SKILL.md", "skill.md") if is_file(folder / n)), None)
    if skill_md is None or ctx.outside(skill_md, span, "skill file"):  # a link leading out
        return
    source = read_text_file(ctx, skill_md)
    if source is None:
        ctx.report(codes.SKILL_INVALID(f"`{display_name(skill_md)}` is not UTF-8 text", None))
        return
    top = Span.at(source.name, 1, 1)
    text = source.text
    closing = list(_FENCE.finditer(text))
    if not text.startswith("---") or len(closing) < 2:
        ctx.report(codes.SKILL_INVALID(
            "SKILL.md must start with YAML frontmatter between `---` lines", top,
            hint="begin with `---`, `name: my-skill`, `description: ...`, `---`"))
        return
    end = closing[1].start()
    header = text[:end]
    parsed = _frontmatter(header, skill_md, source.name)
    problems = [d for d in parsed.diagnostics if d.is_error and d.code != "AS007"]
    for problem in problems:
        ctx.report(codes.SKILL_INVALID(f"the frontmatter is not valid YAML: {problem.message}",
                                       problem.span, hint="ADK will refuse to load this skill"))
    if not problems:
        front = parsed.value if isinstance(parsed.value, dict) else {}
        _check_frontmatter(ctx, folder, front, parsed.positions, top)


#: each frontmatter parsed, by its text and file: an editor checks the same skills again
#: at every keystroke (only read, never changed, by the checks)
_PARSED: dict[tuple[str, FsPath, str], Parsed] = {}


def _frontmatter(header: str, skill_md: FsPath, name: str) -> Parsed:
    """What follows the opening fence, parsed behind an empty line so that line numbers
    match the file."""
    key = (header, skill_md, name)
    parsed = _PARSED.get(key)
    if parsed is None:
        parsed = load_text("\n" + header.split("\n", 1)[1], path=skill_md, display=name)
        if len(_PARSED) >= 256:
            _PARSED.clear()
        _PARSED[key] = parsed
    return parsed


def _check_frontmatter(ctx: Context, folder: FsPath, front: dict[str, object],
                       positions: PosNode | None, top: Span) -> None:
    def at(key: str) -> Span:
        return positions.value_span((key,)) if positions and key in front else top

    missing = [k for k in ("name", "description")
               if not isinstance(front.get(k), str) or not str(front[k]).strip()]
    if missing:
        listed = " and ".join(f"`{k}`" for k in missing)
        ctx.report(codes.SKILL_INVALID(
            f"the frontmatter has no {listed}", at(missing[0]),
            hint=f"add `name: {folder.name}` and a `description` saying what the skill does "
            "and when to use it"))
    name, description = front.get("name"), front.get("description")
    if isinstance(name, str) and "name" not in missing:
        _check_skill_name(ctx, folder, name, at("name"))
    if isinstance(description, str) and len(description) > 1024:
        ctx.report(codes.SKILL_INVALID("`description` is longer than 1024 characters",
                                       at("description")))


def _check_skill_name(ctx: Context, folder: FsPath, name: str, span: Span) -> None:
    if not _KEBAB.match(name) or len(name) > 64:
        ctx.report(codes.SKILL_INVALID(
            f"skill name `{name}` must be kebab-case and at most 64 characters", span,
            hint="use lowercase letters, digits and single dashes"))
    elif name != folder.name:
        ctx.report(codes.SKILL_INVALID(
            f"skill name `{name}` differs from its folder `{folder.name}`", span,
            hint=f"rename the folder or write `name: {folder.name}`"))


def _skills(ctx: Context, name: str, agent: LlmAgent) -> None:
    for index, entry in enumerate(skill_dirs(agent.skills)):
        if backend_path(entry) is not None:  # the backend's, checked with it
            continue
        path = ("agents", name, "skills", *_skill_path(agent.skills, index))
        directory = existing_path(ctx, entry, path, directory=True, what="skills")
        if directory is None:
            continue
        folders = [d for d in list_dir(directory) if is_dir(d) and (
            is_file(d / "SKILL.md") or is_file(d / "skill.md"))]
        if not folders:
            direct = is_file(directory / "SKILL.md")
            ctx.report(codes.SKILLS_EMPTY(
                f"`{entry}` holds no skill folders", ctx.at(*path),
                hint="this is a skill folder itself: list its parent directory" if direct
                else "add `<skill-name>/SKILL.md` folders"))
        for folder in folders:
            _check_skill(ctx, folder, ctx.at(*path))


def _fixed_directories(ctx: Context) -> None:
    """Backend roots and MCP working directories are fixed when the spec is built, so that
    validate can see where they lead."""
    for where, text, kind in spec_paths(ctx):
        if kind == "directory" and where[-1] in ("root", "cwd") and "${" in text:
            ctx.report(codes.BAD_INTERPOLATION(
                f"`{text}` uses `${{...}}`; directories are fixed when the spec is built",
                ctx.at(*where), hint="write the directory literally, relative to the spec"))


def check_files(ctx: Context) -> None:
    _fixed_directories(ctx)
    for name, agent in ctx.llm_agents():
        if agent.instruction_file is not None:
            target = existing_path(ctx, agent.instruction_file,
                                   ("agents", name, "instruction_file"), directory=False,
                                   what="instruction")
            if target is not None:  # read here, once: lowering uses this text
                read_text_file(ctx, target, report=True)
        for index, memory in enumerate(agent.memory or ()):
            if backend_path(memory) is not None:  # the backend's, checked with it
                continue
            existing_path(ctx, memory, ("agents", name, "memory", index), directory=False,
                          what="memory")
        _skills(ctx, name, agent)
