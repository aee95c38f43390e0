"""Copying the project's files into a bundle: regular files and directories only, never
through a link, never a secret.

Sources are read below their directory with `O_NOFOLLOW` (agentspec.safefs), so a link
planted inside a copied directory, even in a race, is refused rather than followed. The
destination is a fresh private directory that `build` made, renamed into place at the end.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentspec import safefs

__all__ = ["Copied", "Refused", "copy_entry", "secret_name"]

#: names that hold secrets: never copied, not even when the spec names them
_SECRETS = (".env", ".env.*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks",
            "*.keystore", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", ".netrc",
            ".pypirc", ".npmrc", ".git-credentials", "credentials.json",
            "service-account*.json", "*-credentials.json", "credentials",
            # directories of tools' credentials (a git remote URL may carry a token)
            ".git", ".ssh", ".aws", ".gnupg", ".docker", ".kube", ".azure", ".gcloud")
_CACHES = ("__pycache__", "*.pyc", "*.pyo")


class Refused(Exception):
    """A file the bundle will not copy; the message names it."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


@dataclass
class Copied:
    files: int = 0
    size: int = 0
    #: (path, why) of what was left out inside copied directories
    left_out: list[tuple[str, str]] = field(default_factory=list)


def secret_name(name: str) -> bool:
    return any(fnmatch.fnmatch(name.lower(), pattern) for pattern in _SECRETS)


def _skipped(name: str) -> str | None:
    """Why an entry of a copied directory is left out (None: copied)."""
    if secret_name(name):
        return "it may hold secrets"
    if name.startswith("."):
        return "hidden"
    return None


def _copy_file(parent: int, name: str, shown: str, target: Path, copied: Copied) -> None:
    with safefs.open_file(parent, name, shown=shown) as source:
        info = os.fstat(source.fileno())
        if info.st_nlink > 1:
            raise Refused(f"`{shown}` has {info.st_nlink} names (hard links), and another one "
                          "may lie outside the project", "replace it by a copy")
        mode = info.st_mode & 0o755  # no set-id bits, no write for others
        with open(target, "xb") as out:
            shutil.copyfileobj(source, out)
            copied.size += out.tell()
    os.chmod(target, mode | 0o600)
    copied.files += 1


def _copy_dir(fd: int, shown: str, target: Path, copied: Copied,
              excluded: Callable[[int], str | None]) -> None:
    target.mkdir(mode=0o755)
    for name in safefs.names(fd):
        here = f"{shown}/{name}"
        if any(fnmatch.fnmatch(name, pattern) for pattern in _CACHES):
            continue
        reason = _skipped(name)
        if reason is not None:
            copied.left_out.append((here, reason))
            continue
        kind = safefs.kind(fd, name)
        if kind == "link":
            raise Refused(f"`{here}` is a symbolic link",
                          "replace the link by what it points to, or remove it")
        if kind == "other":
            raise Refused(f"`{here}` is a FIFO, socket or device", "remove it")
        if kind == "file":
            _copy_file(fd, name, here, target / name, copied)
            continue
        with safefs.subdirectory(fd, name, create=False, shown=here) as sub:
            reason = excluded(sub)
            if reason is not None:
                copied.left_out.append((here, reason))
                continue
            _copy_dir(sub, here, target / name, copied, excluded)


def copy_entry(source: Path, shown: str, target: Path, copied: Copied,
               excluded: Callable[[int], str | None]) -> None:
    """Copy the file or directory `source` (resolved) to `target` (whose parent exists);
    `excluded(fd)` says why a directory is left out (this bundle, a virtual environment)."""
    if secret_name(source.name) or any(secret_name(part) for part in Path(shown).parts):
        raise Refused(f"`{shown}` may hold secrets: a bundle never ships it",
                      "keep secrets out of the files agents read; pass them as ${env.X}")
    with safefs.directory(source.parent, create=False) as parent:
        kind = safefs.kind(parent, source.name)
        if kind == "file":
            _copy_file(parent, source.name, shown, target, copied)
        elif kind == "directory":
            with safefs.subdirectory(parent, source.name, create=False, shown=shown) as fd:
                reason = excluded(fd)
                if reason is not None:
                    raise Refused(f"`{shown}` is {reason}", "name another directory")
                _copy_dir(fd, shown, target, copied, excluded)
        else:
            raise Refused(f"`{shown}` is not a regular file or directory", "remove it")
