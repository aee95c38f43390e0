"""Run a Python script as an ordinary user the test creates, for attacks that must fail for a
user as well as for root (a sandbox of a user maps to that user, not to root).

Needs root (to create the user and switch to it) and an interpreter the user can run that
imports agentspec from this checkout: this one, or the system's `python3` with the checkout
on PYTHONPATH (a virtual environment under `/root` is out of the user's reach)."""

from __future__ import annotations

import functools
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

__all__ = ["USER", "run_as", "user_dir"]

USER = "agentspec-attacker"
_CHECKOUT = str(Path(__file__).resolve().parent.parent)


def _uid() -> int:
    if os.geteuid() != 0:
        pytest.skip("creating an ordinary user needs root")
    for _ in range(50):  # another worker may be creating it at the same moment
        try:
            return pwd.getpwnam(USER).pw_uid
        except KeyError:
            subprocess.run(["useradd", "--system", "--no-create-home", "--shell",
                            "/usr/sbin/nologin", USER], capture_output=True, check=False)
            time.sleep(0.1)
    pytest.skip(f"the user {USER} could not be created")


@functools.cache
def _interpreter(uid: int) -> str | None:
    for candidate in (sys.executable, shutil.which("python3") or "", "/usr/bin/python3"):
        if not candidate:
            continue
        try:
            done = subprocess.run(
                [candidate, "-c", "import agentspec.runtime.backends.sandbox"],
                capture_output=True, user=uid, group=pwd.getpwuid(uid).pw_gid, cwd="/",
                env={"PYTHONPATH": _CHECKOUT, "PATH": os.environ["PATH"]}, check=False)
        except OSError:  # not executable by the user
            continue
        if done.returncode == 0:
            return candidate
    return None


def user_dir() -> Path:
    """A new directory in /tmp owned by the user (pytest's tmp_path is root's only)."""
    uid = _uid()
    made = Path(tempfile.mkdtemp(prefix="agentspec-user-", dir="/tmp"))
    os.chown(made, uid, pwd.getpwnam(USER).pw_gid)
    return made


def run_as(script: str, *args: str, user: bool) -> subprocess.CompletedProcess[str]:
    """`python -c script args...`, as root (this interpreter) or as the user."""
    if not user:
        return subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                              text=True, timeout=300, check=False)
    uid = _uid()
    python = _interpreter(uid)
    if python is None:
        pytest.skip(f"no Python interpreter that the user {USER} can run imports agentspec")
    gid = pwd.getpwnam(USER).pw_gid
    return subprocess.run([python, "-c", script, *args], capture_output=True, text=True,
                          timeout=300, check=False, user=uid, group=gid, extra_groups=[],
                          cwd="/", env={"PYTHONPATH": _CHECKOUT, "PATH": os.environ["PATH"]})
