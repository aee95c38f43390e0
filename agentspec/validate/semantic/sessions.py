"""The conversation store (`sessions`) and jobs that resume their parent in it."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from agentspec.diagnostics import codes
from agentspec.language.agents import LlmAgent
from agentspec.resolve.interpolate import has_env_ref
from agentspec.validate.semantic.context import Context

__all__ = ["check_resume_root", "check_sessions"]

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
#: conversations kept inside one process (ADK takes `sqlite://` without a path as memory)
_IN_MEMORY = re.compile(r"^(memory://.*|sqlite://)$")


def _resumes(ctx: Context) -> bool:
    return ctx.spec.jobs is not None and ctx.spec.jobs.on_done == "resume"


def _password(ctx: Context, url: str, *path: str) -> None:
    try:
        password = urlsplit(url).password
    except ValueError:
        return
    if password and not has_env_ref(password):
        ctx.report(codes.PASSWORD_IN_URL(
            f"the {'`' + '.'.join(path) + '`'} URL holds its password", ctx.at(*path),
            hint="write the password as `${env.NAME}`: "
                 "`postgresql://user:${env.PGPASSWORD}@host/db`"))


def check_sessions(ctx: Context) -> None:
    url = ctx.spec.sessions
    if ctx.spec.jobs is not None:
        _password(ctx, ctx.spec.jobs.store, "jobs", "store")
    if url is None:
        return
    if not has_env_ref(url) and not _URL.match(url):
        ctx.report(codes.INVALID_SESSIONS_URL(
            "`sessions` is not a session store URL (it has no `scheme://`)",
            ctx.at("sessions"),
            hint="use `sqlite:///path/sessions.db`, `postgresql://user@host/db` or another "
                 "URL ADK's session services take"))
        return
    _password(ctx, url, "sessions")
    if _resumes(ctx) and _IN_MEMORY.match(url):
        ctx.report(codes.SESSIONS_NOT_SHARED(
            f"`jobs.on_done: resume` needs conversations a worker can reach; `{url}` keeps "
            "them inside one process", ctx.at("sessions"),
            hint="use `sqlite:///.agentspec/sessions.db` (one machine) or "
                 "`postgresql://...` (many), or leave `sessions` out"))


def check_resume_root(ctx: Context, root: str | None) -> None:
    """After the tree: the root is known."""
    if root is None or not _resumes(ctx):
        return
    agent = ctx.spec.agents.get(root)
    if agent is None or isinstance(agent, LlmAgent):
        return
    ctx.report(codes.RESUME_ROOT_NOT_LLM(
        f"`jobs.on_done: resume` runs the root `{root}` for a turn without a user message, "
        f"and `{root}` is a {agent.kind} agent, which starts only from a message",
        ctx.at("jobs", "on_done"),
        hint="make the root an LLM agent that delegates to it, or use `on_done: wait`"))
