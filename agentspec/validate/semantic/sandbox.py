"""Sandbox backends: mounts placed outside the sandbox's own layout, on directories that
exist; a sandbox given the network or the sockets in its mounts is pointed out."""

from __future__ import annotations

from agentspec.contract.sandbox import RESERVED_TARGETS
from agentspec.diagnostics import codes
from agentspec.language.backends import SandboxBackend
from agentspec.validate.semantic.context import Context
from agentspec.validate.semantic.files import existing_path
from agentspec.validate.semantic.roots import located, roots

__all__ = ["check_sandboxes", "reserved"]


def _within(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip("/") + "/")


def reserved(target: str) -> str | None:
    """The sandbox path a mount target would cover or replace, or None when it is free."""
    if target == "/":
        return "/"
    return next((base for base in RESERVED_TARGETS if base != "/" and _within(target, base)),
                None)


def _mounts(ctx: Context, name: str, backend: SandboxBackend) -> None:
    placed: list[str] = []
    for index, mount in enumerate(backend.mounts or ()):
        where = ("backends", name, "mounts", index)
        target = mount.target
        if any(part in (".", "..") for part in target.split("/")):
            ctx.report(codes.SANDBOX_MOUNT_TARGET(
                f"the mount target `{target}` uses `.` or `..`", ctx.at(*where, "target"),
                hint="write the absolute path itself, such as `/data`"))
            continue
        taken = reserved(target)
        clash = next((other for other in placed
                      if _within(target, other) or _within(other, target)), None)
        if taken is not None:
            ctx.report(codes.SANDBOX_MOUNT_TARGET(
                f"the mount target `{target}` is inside `{taken}`, which the sandbox itself "
                "provides", ctx.at(*where, "target"),
                hint="mount it at a path of its own, such as `/data`"))
        elif clash is not None:
            ctx.report(codes.SANDBOX_MOUNT_TARGET(
                f"the mount target `{target}` overlaps the mount at `{clash}`",
                ctx.at(*where, "target"), hint="give each mount its own directory"))
        placed.append(target)
        # compared as written and resolved: an absolute path or a link to a directory in a
        # root is as much in that root
        source = located(ctx, mount.source, (*where, "source"))
        inside = None if source is None else next(
            (other for other, _, root in roots(ctx) if source.within(root)), None)
        if inside is not None:
            ctx.report(codes.SANDBOX_MOUNT_TARGET(
                f"the mount source `{mount.source}` is inside the root of the backend "
                f"`{inside}`, where a command or a file tool could swap it for a link to "
                "any host directory",
                ctx.at(*where, "source"), hint="mount a directory outside the root"))
            continue
        existing_path(ctx, mount.source, (*where, "source"), directory=True,
                      what="sandbox mount")


def _environment(ctx: Context, name: str, backend: SandboxBackend) -> None:
    for key, value in (backend.env or {}).items():
        if not key or "=" in key or "\x00" in key:
            ctx.report(codes.SANDBOX_ENV_NAME(
                f"the environment variable name {key!r} is empty or holds `=` or a NUL byte",
                ctx.key_at("backends", name, "env", key),
                hint="use a name of letters, digits and underscores"))
        elif "\x00" in value:
            ctx.report(codes.SANDBOX_ENV_NAME(
                f"the value of the environment variable `{key}` holds a NUL byte",
                ctx.at("backends", name, "env", key), hint="remove the NUL byte"))


def check_sandboxes(ctx: Context) -> None:
    for name, backend in (ctx.spec.backends or {}).items():
        if not isinstance(backend, SandboxBackend):
            continue
        _mounts(ctx, name, backend)
        _environment(ctx, name, backend)
        if backend.network:
            ctx.report(codes.SANDBOX_NETWORK(
                f"commands of the sandbox `{name}` can reach the network, the host's loopback "
                "services included", ctx.at("backends", name, "network"),
                hint="drop `network: true` unless the commands need it"))
        if backend.allow_sockets:
            ctx.report(codes.SANDBOX_SOCKETS(
                f"commands of the sandbox `{name}` can talk to host processes through Unix "
                "sockets and FIFOs in its mounts", ctx.at("backends", name, "allow_sockets"),
                hint="drop `allow_sockets: true` unless the commands need such a service"))
