"""What the project's `.gitignore` excludes, so a bundle leaves it out as git does.

In a git work tree git itself answers (`git ls-files --others --ignored --exclude-standard
--directory`): every `.gitignore` below the root, `.git/info/exclude` and negations count
exactly as for `git status`. Outside one (or without git) the root `.gitignore` is read
simply: blank lines and comments skipped, `!` negations not honoured (so a little more may be
left out, and every path left out is listed), a leading or inner `/` anchors a pattern to the
root, a trailing `/` matches directories only, any other pattern matches a name at any depth.
"""

from __future__ import annotations

import fnmatch
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

__all__ = ["Ignored", "ignored_by_git"]

#: (project-relative posix path, is a directory) -> ignored
Ignored = Callable[[str, bool], bool]


def _under(path: str, places: set[str]) -> bool:
    parts = path.split("/")
    return any("/".join(parts[:n]) in places for n in range(1, len(parts) + 1))


def _from_git(root: Path) -> Ignored | None:
    git = shutil.which("git")
    if git is None or not (root / ".git").exists():
        return None
    try:
        done = subprocess.run(
            [git, "-C", str(root), "ls-files", "-z", "--others", "--ignored",
             "--exclude-standard", "--directory"],
            capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    places = {p.decode("utf-8", "surrogateescape").rstrip("/")
              for p in done.stdout.split(b"\0") if p}
    return lambda path, _directory: _under(path, places)


def _from_file(root: Path) -> Ignored:
    try:
        text = (root / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return lambda _path, _directory: False
    patterns = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        directory_only = line.endswith("/")
        line = line.strip("/")
        if line:
            patterns.append((line, "/" in raw.strip().rstrip("/"), directory_only))

    def ignored(path: str, directory: bool) -> bool:
        name = path.rsplit("/", 1)[-1]
        for pattern, anchored, directory_only in patterns:
            if directory_only and not directory:
                continue
            if fnmatch.fnmatchcase(path if anchored else name, pattern):
                return True
        return False
    return ignored


def ignored_by_git(root: Path) -> tuple[Ignored, str]:
    """Whether a path below `root` is ignored, and how that is known (for the listing)."""
    found = _from_git(root)
    if found is not None:
        return found, "ignored by git (.gitignore)"
    return _from_file(root), "matched by .gitignore"
