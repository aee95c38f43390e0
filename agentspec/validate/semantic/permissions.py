"""Path permissions (`read` / `write` on a backend): each glob can match a path (AS316), and
an agent whose commands would walk past them is told so (AS317)."""

from __future__ import annotations

from agentspec.contract.backends import PERMISSIONS, executor
from agentspec.contract.globs import matches_nothing
from agentspec.diagnostics import codes
from agentspec.language.effective import harness
from agentspec.validate.semantic.context import Context

__all__ = ["check_permissions"]


def _problem(glob: str) -> str | None:
    """Why a permission glob can match no path, or None."""
    if not glob.startswith("/"):
        return "does not start with `/`"
    if "\x00" in glob:
        return "holds a NUL byte"
    if any(step in (".", "..") for step in glob.split("/")):
        return "has a `.` or `..` step, which no normalized path has"
    if glob != "/" and "" in glob.split("/")[1:]:
        return ("has an empty step (a `/` at the end, or `//`), which no normalized path has "
                "(`/docs/**` is everything under `/docs`)")
    if matches_nothing(glob):
        return "is malformed (a character range such as `[z-a]`, or an empty `[]`)"
    return None


def _globs(ctx: Context) -> None:
    for name, backend in (ctx.spec.backends or {}).items():
        for rule in PERMISSIONS:
            for index, glob in enumerate(getattr(backend, rule) or ()):
                problem = _problem(glob)
                if problem is not None:
                    ctx.report(codes.PERMISSION_GLOB(
                        f"the `{rule}` glob `{glob}` of backend `{name}` {problem}",
                        ctx.at("backends", name, rule, index),
                        hint="write a glob over the backend's paths from its top, such as "
                        "`/docs/**` or `/**/*.md`"))


def _bypassed(ctx: Context) -> None:
    """Commands run on the executor's root whatever its permissions or those of the
    composite in front of it."""
    backends = ctx.spec.backends or {}
    warned: set[str] = set()
    for agent_name, agent in ctx.llm_agents():
        kit = harness(agent, backends)
        if kit.backend is None or "execute" not in kit.file_tools:
            continue
        runner = executor(kit.backend, backends)
        for name in dict.fromkeys((kit.backend, runner)):
            backend = backends.get(name)
            rule = next((r for r in PERMISSIONS if getattr(backend, r, None) is not None), None)
            if rule is None or name in warned:
                continue
            warned.add(name)
            where = f"backend `{runner}`" if runner == name else \
                f"backend `{runner}` behind `{name}`"
            ctx.report(codes.PERMISSIONS_BYPASSED(
                f"the agent `{agent_name}` runs commands on {where}, which `{name}`'s `{rule}` "
                "permissions do not bind", ctx.key_at("backends", name, rule),
                hint="leave `execute` out of the agent's `filesystem.tools`, or drop the "
                "permissions"))


def check_permissions(ctx: Context) -> None:
    _globs(ctx)
    _bypassed(ctx)
