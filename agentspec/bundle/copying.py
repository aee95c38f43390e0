"""Copying the project's files into a bundle: regular files and directories only, never
through a link, never a secret.

Sources are read below their directory with `O_NOFOLLOW` (agentspec.safefs), so a link
planted inside a copied directory, even in a race, is refused rather than followed. The
destination is a fresh private directory that `build` made, renamed into place at the end.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentspec import safefs

__all__ = ["Copied", "Policy", "Refused", "copy_entry", "secret_content", "secret_name"]

#: names that hold secrets: never copied, not even when the spec names them
_SECRETS = (".env", ".env.*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks",
            "*.keystore", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", ".netrc",
            ".pypirc", ".npmrc", ".git-credentials", "credentials.json",
            "service-account*.json", "*-credentials.json", "credentials",
            "client_secret*.json", "token.json", "service_account*.json",
            "*service-account*.json", "*-key.json", "gcp-key*.json", "deploy_key",
            "*.pem.txt", "*.pem.bak", "*.key.txt", "*.key.bak", "*.ppk", "*.kdbx",
            # data files only: a module `secrets.py` is code, and agentspec's own wheel
            # leaves out what matches here
            *(f"{stem}.{suffix}" for stem in ("secrets", "secret", "credentials")
              for suffix in ("json", "yaml", "yml", "toml", "ini", "cfg", "conf", "txt",
                             "env", "xml", "properties")),
            # directories of tools' credentials (a git remote URL may carry a token)
            ".git", ".ssh", ".aws", ".gnupg", ".docker", ".kube", ".azure", ".gcloud")
_CACHES = ("__pycache__", "*.pyc", "*.pyo")
#: what a secret looks like inside a file, whatever its name: a private key block, a
#: service-account key, common token shapes (fixed prefixes, so matching is linear)
_SECRET_SHAPES = (
    (re.compile(rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"), "a private key block"),
    (re.compile(rb'"type"\s*:\s*"service_account"'), "a service-account key"),
    (re.compile(rb'"private_key"\s*:\s*"'), "a private key"),
    (re.compile(rb'"refresh_token"\s*:\s*"[^"]'), "an OAuth refresh token"),
    (re.compile(rb"AIza[0-9A-Za-z_-]{35}"), "a Google API key"),
    (re.compile(rb"ya29\.[0-9A-Za-z_-]{20}"), "a Google OAuth token"),
    (re.compile(rb"(?:AKIA|ASIA)[0-9A-Z]{16}"), "an AWS access key"),
    (re.compile(rb"gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22}"), "a GitHub token"),
    (re.compile(rb"xox[abposr]-[A-Za-z0-9-]{10}"), "a Slack token"),
    (re.compile(rb"sk-(?:proj-|ant-)?[A-Za-z0-9_-]{32}"), "an API secret key"),
)


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


@dataclass(frozen=True)
class Policy:
    """What a copy leaves out beyond secrets, hidden entries and caches (paths relative to
    the project, as `shown`)."""

    #: why a directory is left out (this bundle, a virtual environment), by descriptor
    excluded: Callable[[int], str | None]
    #: backend roots: only what `wanted` names inside them is copied
    roots: frozenset[str] = frozenset()
    #: the entries and `--include` paths
    wanted: frozenset[str] = frozenset()
    #: what `--include` names: copied even with a name or content that may be a secret
    included: frozenset[str] = frozenset()
    #: directories never shipped, with why (conversation history, evicted tool results)
    never: tuple[tuple[str, str], ...] = ()
    #: whether the project's .gitignore excludes a path (and a directory), and why
    ignored: Callable[[str, bool], bool] = lambda _path, _directory: False
    ignored_why: str = "ignored by .gitignore"


def secret_name(name: str) -> bool:
    return any(fnmatch.fnmatch(name.lower(), pattern) for pattern in _SECRETS)


def secret_content(data: bytes) -> str | None:
    """What secret `data` seems to hold (None: none of the shapes)."""
    return next((what for shape, what in _SECRET_SHAPES if shape.search(data)), None)


def _skipped(name: str, shown: str, policy: Policy) -> str | None:
    """Why an entry of a copied directory is left out (None: copied)."""
    never = dict(policy.never).get(shown)
    if never is not None:
        return never
    if shown in policy.included:
        return None
    if secret_name(name):
        return "it may hold secrets"
    if name.startswith("."):
        return "hidden"
    return None


#: bytes kept from the end of one chunk for the next, so no shape is split between two
_OVERLAP = 4096
_CHUNK = 1 << 20


def _copy_file(parent: int, name: str, shown: str, target: Path, copied: Copied,
               policy: Policy, named: bool = False) -> None:
    """Copy one file; one whose content looks like a secret is left out (or, when the spec
    or a path names it, `named`, refused) unless `--include` names it."""
    secret = None
    size = 0
    with safefs.open_file(parent, name, shown=shown) as source:
        info = os.fstat(source.fileno())
        if info.st_nlink > 1:
            raise Refused(f"`{shown}` has {info.st_nlink} names (hard links), and another one "
                          "may lie outside the project", "replace it by a copy")
        mode = info.st_mode & 0o755  # no set-id bits, no write for others
        check = shown not in policy.included
        with open(target, "xb") as out:
            tail = b""
            while chunk := source.read(_CHUNK):
                out.write(chunk)
                size += len(chunk)
                if check and secret is None:
                    window = tail + chunk
                    secret = secret_content(window)
                    tail = window[-_OVERLAP:]
    if secret is not None:
        os.unlink(target)
        if named:
            raise Refused(f"`{shown}` looks like it holds {secret}: a bundle never ships it",
                          f"keep secrets out of the files agents read (pass them as "
                          f"${{env.X}}), or ship it anyway with `--include {shown}`")
        copied.left_out.append((shown, f"it looks like it holds {secret} (ship it anyway "
                                       f"with `--include {shown}`)"))
        return
    copied.size += size
    os.chmod(target, mode | 0o600)
    copied.files += 1


def _wanted(path: str, policy: Policy) -> bool:
    """Whether `path` is, or leads to, what an entry or `--include` names."""
    return path in policy.wanted or any(w.startswith(f"{path}/") for w in policy.wanted)


def _copy_dir(fd: int, shown: str, target: Path, copied: Copied, policy: Policy,
              seeding: bool = False) -> None:
    """Copy the directory `fd`; `seeding`: it is (inside) a backend root, so only what
    `policy.wanted` names is copied and the rest listed as left out."""
    target.mkdir(mode=0o755)
    seeding = (seeding or shown in policy.roots) and shown not in policy.wanted
    for name in safefs.names(fd):
        here = f"{shown}/{name}"
        if any(fnmatch.fnmatch(name, pattern) for pattern in _CACHES):
            continue
        reason = _skipped(name, here, policy)
        if reason is None and seeding and not _wanted(here, policy):
            copied.left_out.append((here, "the agents' data in a backend root (ship a "
                                          f"starting file with `--include {here}`)"))
            continue
        if reason is not None:
            copied.left_out.append((here, reason))
            continue
        kind = safefs.kind(fd, name)
        if not _wanted(here, policy) and policy.ignored(here, kind == "directory"):
            copied.left_out.append((here, policy.ignored_why))
            continue
        if kind == "link":
            raise Refused(f"`{here}` is a symbolic link",
                          "replace the link by what it points to, or remove it")
        if kind == "other":
            raise Refused(f"`{here}` is a FIFO, socket or device", "remove it")
        if kind == "file":
            _copy_file(fd, name, here, target / name, copied, policy)
            continue
        with safefs.subdirectory(fd, name, create=False, shown=here) as sub:
            reason = policy.excluded(sub)
            if reason is not None:
                copied.left_out.append((here, reason))
                continue
            _copy_dir(sub, here, target / name, copied, policy, seeding)


def copy_entry(source: Path, shown: str, target: Path, copied: Copied,
               policy: Policy) -> None:
    """Copy the file or directory `source` (resolved) to `target` (whose parent exists);
    `shown` is its path in the project."""
    never = next((why for path, why in policy.never
                  if shown == path or shown.startswith(f"{path}/")), None)
    if never is not None:
        raise Refused(f"`{shown}` is {never}: a bundle never ships it",
                      "leave it out of `--include`")
    if shown not in policy.included and (
            secret_name(source.name) or any(secret_name(part) for part in Path(shown).parts)):
        raise Refused(f"`{shown}` may hold secrets: a bundle never ships it",
                      "keep secrets out of the files agents read (pass them as ${env.X}), "
                      f"or ship it anyway with `--include {shown}`")
    with safefs.directory(source.parent, create=False) as parent:
        kind = safefs.kind(parent, source.name)
        if kind == "file":
            _copy_file(parent, source.name, shown, target, copied, policy, named=True)
        elif kind == "directory":
            with safefs.subdirectory(parent, source.name, create=False, shown=shown) as fd:
                reason = policy.excluded(fd)
                if reason is not None:
                    raise Refused(f"`{shown}` is {reason}", "name another directory")
                _copy_dir(fd, shown, target, copied, policy)
        else:
            raise Refused(f"`{shown}` is not a regular file or directory", "remove it")
