"""`summarization.history` against the backends' `read` and `write` lists: the history file of
a conversation, `<history>/<user id>/<session id>.md`, is written as the file tools write, so
each backend it passes through on the way (a composite's lists, then the holder's) must let
it be written (AS324 when no conversation's can be, AS325 when some cannot), and the agents,
told to `read_file` it, must be let read it (AS326). Each id is one path segment of
lower-case letters, digits, `_`, `-` and `~` (`runtime.user_folders.path_segment`); every
such name is tried at once (`globs.coverage`), not a sample."""

from __future__ import annotations

from collections.abc import Mapping
from string import ascii_lowercase, digits

from agentspec.contract.backends import hops
from agentspec.contract.globs import Piece, coverage
from agentspec.contract.virtual_paths import normalize
from agentspec.diagnostics import codes
from agentspec.validate.semantic.context import Context

__all__ = ["check_history_access"]

#: the characters of an id's path segment
_SEGMENT: Piece = (frozenset(ascii_lowercase + digits + "_-~"), True)


def _files(folder: str) -> tuple[Piece, ...]:
    """The history files below `folder` (a backend's path), as `coverage` takes a set."""
    def literal(text: str) -> tuple[Piece, ...]:
        return tuple((frozenset(char), False) for char in text)
    top = folder.strip("/")
    return (*literal(top + "/" if top else ""), _SEGMENT, *literal("/"), _SEGMENT,
            *literal(".md"))


def check_history_access(ctx: Context, backend: str, history: str,
                         backends: Mapping[str, object]) -> None:
    where = ctx.at("summarization", "history")
    for name, folder in hops(backend, history, backends):
        definition = backends.get(name)
        for rule in ("write", "read"):
            globs: list[str] | None = getattr(definition, rule, None)
            if globs is None:
                continue
            covered = coverage(tuple(globs), _files(folder))
            if covered is None or covered[1]:
                continue  # every history file passes (or too intricate to tell: run time)
            listed = ", ".join(f"`{glob}`" for glob in globs) or "empty"
            files = f"`{folder.rstrip('/')}/<user>/<session>.md`"
            some = covered[0]
            if rule == "write" and not some:
                ctx.report(codes.HISTORY_WRITE_DENIED(
                    f"no conversation's history can be written: backend `{name}`'s `write` "
                    f"list ({listed}) matches no {files}", where,
                    hint=f"add `{folder.rstrip('/')}/**` to the `write` list of backend "
                    f"`{name}`, or move `history` to a directory it lets be written"))
            elif rule == "write":
                ctx.report(codes.HISTORY_WRITE_PARTLY_DENIED(
                    f"some conversations' history cannot be written: backend `{name}`'s "
                    f"`write` list ({listed}) matches only some {files}, so the others are "
                    "never summarized", where,
                    hint=f"let the `write` list of backend `{name}` match "
                    f"`{folder.rstrip('/')}/**`"))
            else:
                ctx.report(codes.HISTORY_READ_DENIED(
                    f"the agents are told to read the history with `read_file`, but backend "
                    f"`{name}`'s `read` list ({listed}) matches {'only some' if some else 'no'} "
                    f"{files}", where,
                    hint=f"add `{folder.rstrip('/')}/**` to the `read` list of backend "
                    f"`{name}`"))
        if _splits(definition, folder):
            return  # some users' files go elsewhere: the backends after this one are not
            # every file's (run time checks each file's own way)


def _splits(definition: object, folder: str) -> bool:
    """Whether a composite routes a folder below `folder` elsewhere."""
    routes: Mapping[str, str] = getattr(definition, "routes", None) or {}
    below = folder.rstrip("/") + "/"
    return getattr(definition, "type", None) == "composite" and any(
        normalize(prefix).startswith(below) for prefix in routes)
