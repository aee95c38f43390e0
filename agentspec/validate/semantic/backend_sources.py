"""`backend:/path` entries of `memory:` and `skills:`: the agent has file tools over a
backend to read them through, and the path is one its file tools accept."""

from __future__ import annotations

from agentspec.contract.backend_sources import backend_path
from agentspec.contract.virtual_paths import BackendError, normalize
from agentspec.diagnostics import codes
from agentspec.language.agents import LlmAgent, SkillsConfig
from agentspec.language.effective import harness
from agentspec.validate.semantic.context import Context

__all__ = ["check_backend_sources"]


def _entries(agent: LlmAgent) -> list[tuple[tuple[str | int, ...], str]]:
    found: list[tuple[tuple[str | int, ...], str]] = [
        (("memory", index), entry) for index, entry in enumerate(agent.memory or ())]
    skills = agent.skills
    if isinstance(skills, SkillsConfig):
        found += [(("skills", "paths", index), entry) for index, entry in enumerate(skills.paths)]
    elif skills is not None:
        found += [(("skills", index), entry) for index, entry in enumerate(skills)]
    return found


def check_backend_sources(ctx: Context) -> None:
    backends = ctx.spec.backends or {}
    for name, agent in ctx.llm_agents():
        backend = harness(agent, backends).backend
        for where, entry in _entries(agent):
            path = backend_path(entry)
            if path is None:
                continue
            span = ctx.at("agents", name, *where)
            if backend is None:
                ctx.report(codes.BACKEND_SOURCE_WITHOUT_BACKEND(
                    f"`{entry}` is read through the agent's file-tools backend, and `{name}` "
                    "has none", span, hint="give the agent `filesystem: BACKEND`, or name a "
                    "file beside the spec instead"))
                continue
            try:
                normalize(path)
            except BackendError as error:
                ctx.report(codes.BACKEND_SOURCE_PATH(
                    f"`{entry}` is not a path of the backend: {error}", span,
                    hint="write an absolute path of the agent's file tools, such as "
                    "`backend:/memories/AGENTS.md`"))
                continue
            if not path.startswith("/"):
                ctx.report(codes.BACKEND_SOURCE_PATH(
                    f"`{entry}` is not an absolute path of the backend", span,
                    hint=f"write `backend:/{path}`, the path the file tools see"))
