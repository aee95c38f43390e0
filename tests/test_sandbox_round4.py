"""The sandbox after the round-4 review: what the workspace quota does with what the walk
cannot measure, FIFOs in mounts, a host root's sandbox without capabilities (its workspace
given to its uid, hard-linked files left alone), and what a kill for memory says."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from agentspec.runtime.backends import BackendError
from agentspec.runtime.backends import cgroups as cgroups_module
from agentspec.runtime.backends.userns import HOST_ID
from tests.spec_defaults import spec_limits, spec_sandbox

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the host root's sandbox")


def test_a_tree_deeper_than_the_walk_fills_the_workspace_until_removed(tmp_path: Path) -> None:
    backend = spec_sandbox(tmp_path, timeout=60, limits=spec_limits(workspace_bytes=4 << 20))
    made = backend.execute("mkdir -p " + "/".join(["d"] * 401))
    notes = made.output.split("\n... [")[1:]
    assert len(notes) == 1 and "max_workspace_mb" in notes[0], made.output
    assert "more than 400 levels deep" in notes[0] and len(notes[0]) < 300, notes[0]
    refused = backend.execute("echo x > small.txt")  # RLIMIT_FSIZE 0: SIGXFSZ
    assert "could not write files" in refused.output
    assert (tmp_path / "small.txt").stat().st_size == 0
    backend.execute("rm -rf d")  # deleting is allowed: then the quota is measured again
    assert "rc=0" in backend.execute("echo x > small.txt; echo rc=$?").output
    assert (tmp_path / "small.txt").read_text() == "x\n"


def test_allow_sockets_lets_a_fifo_through(tmp_path: Path) -> None:
    mount = tmp_path / "mnt"
    mount.mkdir()
    os.mkfifo(mount / "ctl", 0o666)
    (tmp_path / "ws").mkdir()
    refused = spec_sandbox(tmp_path / "ws", timeout=30, mounts=[(str(mount), "/data")])
    with pytest.raises(BackendError, match=r"the Unix socket or FIFO `ctl`.*allow_sockets"):
        refused.execute("true")
    allowed = spec_sandbox(tmp_path / "ws", timeout=30, mounts=[(str(mount), "/data")],
                             allow_sockets=True)
    assert allowed.execute("test -p /data/ctl && echo fifo").output == "fifo\n"


@as_root
def test_a_root_sandbox_holds_no_capability_and_owns_its_workspace(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "notes.txt").write_text("by the file tools\n")
    (root / "sub" / "notes.txt").chmod(0o600)
    outside = tmp_path / "outside.txt"
    outside.write_text("host file\n")
    os.link(outside, root / "linked.txt")  # a second name: its owner stays root
    result = spec_sandbox(root, timeout=30).execute(
        "echo more >> sub/notes.txt && echo wrote; echo no >> linked.txt; "
        "grep CapEff /proc/self/status")
    assert "wrote" in result.output and "CapEff:\t0000000000000000" in result.output
    assert (root / "sub" / "notes.txt").read_text() == "by the file tools\nmore\n"
    assert (root / "sub").stat().st_uid == HOST_ID == (root / "sub" / "notes.txt").stat().st_uid
    assert outside.stat().st_uid == 0 and outside.read_text() == "host file\n"


@as_root
def test_set_id_bits_go_before_a_root_sandbox_runs(tmp_path: Path) -> None:
    (tmp_path / "tool").write_bytes(b"#!/bin/sh\n")
    (tmp_path / "tool").chmod(0o6755)
    result = spec_sandbox(tmp_path, timeout=30).execute("true")
    assert "set-uid/set-gid bits removed from tool" in result.output
    assert not stat.S_IMODE((tmp_path / "tool").stat().st_mode) & 0o6000


def test_a_kill_without_a_memory_cgroup_says_what_is_known(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cgroups_module, "hierarchy", lambda controller: None)
    result = spec_sandbox(tmp_path, timeout=30).execute("kill -9 $$")
    assert "killed (SIGKILL), not by `max_memory_mb`" in result.output, result
    assert "max_memory_mb" not in spec_sandbox(tmp_path, timeout=30).execute("exit 3").output


@as_root
def test_a_file_that_cannot_change_owner_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentspec.runtime.backends import trees

    (tmp_path / "kept.txt").write_text("root's\n")

    def refuse(target: str, now: os.stat_result, uid: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(trees, "_chown", refuse)
    result = spec_sandbox(tmp_path, timeout=30).execute("true")
    assert "`.` could not be given to the sandbox's user (2 in all)" in result.output, result
