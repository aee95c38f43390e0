"""Virtual paths of the file tools (`/notes/a.md`): what validate accepts for a path in the
spec and the backends accept at run time, in one place."""

from __future__ import annotations

__all__ = ["MAX_NAME_CHARS", "MAX_PATH_CHARS", "BackendError", "normalize"]

MAX_PATH_CHARS = 4096
MAX_NAME_CHARS = 255


class BackendError(Exception):
    """A file or shell operation failed; the message is written for a model to read."""


def normalize(path: str) -> str:
    """A clean virtual absolute path: `notes//./a.md` -> `/notes/a.md`.

    Relative paths are taken from `/`; `..` may not climb above `/`. Names are taken
    literally (no URL-decoding, backslashes are ordinary characters).
    """
    if not isinstance(path, str):
        raise BackendError(f"A path must be a string, not {type(path).__name__}.")
    if "\x00" in path:
        raise BackendError("A path cannot contain NUL bytes.")
    if len(path) > MAX_PATH_CHARS:
        raise BackendError(f"The path is too long ({len(path)} characters; the limit is "
                           f"{MAX_PATH_CHARS}).")
    parts: list[str] = []
    for name in path.split("/"):
        if name in ("", "."):
            continue
        if name == "..":
            if not parts:
                raise BackendError(f"The path {path!r} climbs above `/`; use a path inside "
                                   "the workspace, such as `/notes/a.md`.")
            parts.pop()
            continue
        if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_CHARS:
            raise BackendError(f"A file or directory name in {path!r} is too long (the limit "
                               f"is {MAX_NAME_CHARS} bytes).")
        parts.append(name)
    return "/" + "/".join(parts)
