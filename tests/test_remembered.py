"""`agentspec validate` remembered (agentspec/cli/remembered.py, reads.py): a run replays what
the same run printed only while everything it read is as it was.

Each test runs the command as users do (`python -m agentspec`), then marks the kept entry (its
printed text replaced by a marker), so that a replay shows itself by printing the marker, and
a run that must not replay shows the command's own output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="runs are recorded on Linux only")

MARK = "replayed from the cache\n"

SPEC = """\
agentspec: 1
name: shop
root: helper
imports: [./common.yaml]
models:
  fast: gemini-2.5-flash
agents:
  helper:
    model: fast
    instruction_file: prompts/helper.md
    tools: [lookup]
    skills: [./skills]
    description: Helps for ${env.SHOP_NAME:-the shop}.
"""
COMMON = """\
agentspec: 1
tools:
  lookup: {python: shop_tools:lookup}
"""
TOOLS = "def lookup(query: str) -> str:\n    return query\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "prompts").mkdir(parents=True)
    (root / "spec.yaml").write_text(SPEC)
    (root / "common.yaml").write_text(COMMON)
    (root / "prompts" / "helper.md").write_text("Answer shortly.\n")
    (root / "shop_tools.py").write_text(TOOLS)
    (root / "skills" / "one").mkdir(parents=True)
    (root / "skills" / "one" / "SKILL.md").write_text(
        "---\nname: one\ndescription: The first skill.\n---\nDo it once.\n")
    return root


def _env(cache: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHOP_")}
    return {**env, "AGENTSPEC_CACHE_DIR": str(cache), **extra}


def _validate(root: Path, cache: Path, *args: str,
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentspec", "validate", *args],
                          cwd=root, env=env or _env(cache), capture_output=True, text=True,
                          timeout=120)


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("validate-*.result"))


def _mark(cache: Path) -> None:
    """Every kept run prints the marker when replayed."""
    entries = _entries(cache)
    assert entries, "the run was not kept"
    for path in entries:
        entry = json.loads(path.read_bytes())
        entry["out"] = MARK
        path.write_text(json.dumps(entry))


def test_an_unchanged_run_is_replayed_with_its_output_and_status(project: Path,
                                                                 tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (project / "prompts" / "helper.md").unlink()  # an error: the prompt file is missing
    first = _validate(project, cache, "spec.yaml")
    assert first.returncode == 1, first.stderr
    again = _validate(project, cache, "spec.yaml")
    assert (again.stdout, again.stderr, again.returncode) == \
        (first.stdout, first.stderr, first.returncode)
    _mark(cache)
    replayed = _validate(project, cache, "spec.yaml")
    assert replayed.stdout == MARK
    assert (replayed.stderr, replayed.returncode) == (first.stderr, 1)


def test_a_replay_imports_nothing_but_the_standard_library(project: Path,
                                                           tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    probe = ("import sys\nsys.argv = ['agentspec', 'validate', 'spec.yaml']\n"
             "from agentspec.cli import main\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "heavy = ('click', 'pydantic', 'pydantic_core', 'ruamel', 'google.adk', "
             "'google.genai', 'agentspec.language', 'agentspec.validate')\n"
             "print(sorted(m for m in sys.modules if m.startswith(heavy)), file=sys.stderr)")
    runs = [subprocess.run([sys.executable, "-c", probe], cwd=project, env=_env(cache),
                           capture_output=True, text=True, timeout=120) for _ in range(2)]
    assert "click" in runs[0].stderr.splitlines()[-1]
    assert runs[1].stderr.splitlines()[-1] == "[]"
    assert runs[1].stdout == runs[0].stdout


def _rewrite_time_put_back(path: Path, text: str) -> None:
    """A change a time stamp may not show: `text`, of the same size, written with the
    modification time put back."""
    before = path.stat()
    assert len(text.encode()) == before.st_size
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _same_size_edit(path: Path) -> None:
    text = path.read_text()
    _rewrite_time_put_back(path, text.replace("a", "e", 1) if "a" in text else text.upper())


CHANGES: dict[str, Callable[[Path], object]] = {
    "the spec, same size and time": lambda root: _same_size_edit(root / "spec.yaml"),
    "an imported file": lambda root: (root / "common.yaml").write_text(
        COMMON.replace("lookup:", "lookup2:")),
    "the prompt file removed": lambda root: (root / "prompts" / "helper.md").unlink(),
    "the python module removed": lambda root: (root / "shop_tools.py").unlink(),
    "a scenario file beside the spec": lambda root: (
        (root / "scenarios").mkdir(), (root / "scenarios" / "spec.yaml").write_text(
            "scenarios:\n  - name: one\n    turns: [{user: hi, expect: {replied: true}}]\n")),
    "a project config file": lambda root: (root / "agentspec.toml").write_text(
        '[lint]\nignore = ["AS9"]\n'),
    "a new skill in the skills folder": lambda root: (
        (root / "skills" / "two").mkdir(), (root / "skills" / "two" / "SKILL.md").write_text(
            "---\nname: two\ndescription: The second skill.\n---\nDo it twice.\n")),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_change_to_what_the_run_read_runs_the_command_again(
        project: Path, tmp_path: Path, change: str) -> None:
    cache = tmp_path / "cache"
    _validate(project, cache, "spec.yaml")
    _mark(cache)
    assert _validate(project, cache, "spec.yaml").stdout == MARK
    CHANGES[change](project)
    after = _validate(project, cache, "spec.yaml")
    fresh = _validate(project, cache, "spec.yaml", env=_env(tmp_path / "fresh"))
    assert after.stdout != MARK
    assert (after.stdout, after.stderr, after.returncode) == \
        (fresh.stdout, fresh.stderr, fresh.returncode)


def test_another_command_line_directory_or_environment_is_another_run(
        project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _validate(project, cache, "spec.yaml")
    _mark(cache)
    assert _validate(project, cache, "spec.yaml", "--strict").stdout != MARK
    assert _validate(project, cache, "spec.yaml", env=_env(cache, SHOP_NAME="x")).stdout \
        != MARK
    moved = subprocess.run([sys.executable, "-m", "agentspec", "validate", "project/spec.yaml"],
                           cwd=tmp_path, env=_env(cache), capture_output=True, text=True,
                           timeout=120)
    assert moved.stdout != MARK


def test_the_environment_is_kept_as_a_digest_only(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    secret = "s3cr3t-value-that-must-not-be-written"
    _validate(project, cache, "spec.yaml", env=_env(cache, SHOP_NAME=secret))
    kept = b"".join(p.read_bytes() for p in cache.iterdir() if p.is_file())
    assert _entries(cache)
    assert secret.encode() not in kept


def test_no_cache_no_entry_and_nothing_replayed_from_a_folder_others_can_write(
        project: Path, tmp_path: Path) -> None:
    off = _validate(project, tmp_path, "spec.yaml", env=_env(tmp_path, AGENTSPEC_CACHE_DIR=""))
    assert off.returncode == 0, off.stderr
    assert not _entries(tmp_path)
    cache = tmp_path / "cache"
    _validate(project, cache, "spec.yaml")
    _mark(cache)
    cache.chmod(0o777)
    try:
        assert _validate(project, cache, "spec.yaml").stdout != MARK
    finally:
        cache.chmod(0o700)


@pytest.mark.parametrize("damage", ["not json", '{"out": 1}', '{"out": "x", "err": "",'
                                    ' "status": 0, "paths": [[1]], "folders": []}'])
def test_a_damaged_entry_runs_the_command(project: Path, tmp_path: Path, damage: str) -> None:
    cache = tmp_path / "cache"
    first = _validate(project, cache, "spec.yaml")
    for path in _entries(cache):
        path.write_text(damage)
    again = _validate(project, cache, "spec.yaml")
    assert (again.stdout, again.returncode) == (first.stdout, first.returncode)


RECORD = """\
import os, subprocess, sys
from agentspec.cli import reads
reads.record([])
{body}
found, why = reads.recorded()
print(why if found is None else "kept")
"""


@pytest.mark.parametrize(("body", "why"), [
    ("subprocess.run(['true'])", "subprocess.Popen"),
    ("os.chdir('/')", "os.chdir"),
    ("open('written.txt', 'w').close()", "a write to"),
    ("os.rename('a.txt', 'b.txt')", "os.rename"),
    ("import socket; socket.socket().close(); socket.getaddrinfo('localhost', 80)",
     "socket"),
    ("open('a.txt').read()", "kept"),
])
def test_a_run_that_reads_what_cannot_be_pinned_down_is_not_kept(
        tmp_path: Path, body: str, why: str) -> None:
    (tmp_path / "a.txt").write_text("a")
    done = subprocess.run([sys.executable, "-c", RECORD.format(body=body)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert why in done.stdout


def test_an_opened_file_is_stamped_by_its_content_and_a_dir_fd_path_by_its_folder(
        tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("a")
    body = ("fd = os.open('sub', os.O_RDONLY | os.O_DIRECTORY)\n"
            "os.close(os.open('a.txt', os.O_RDONLY, dir_fd=fd))\n"
            "os.stat('a.txt', dir_fd=fd)\nos.listdir(fd)\nos.close(fd)")
    script = RECORD.format(body=body).replace(
        'print(why if found is None else "kept")',
        "import json\nprint(json.dumps([[list(k), v] for k, v in found.paths.items() "
        "if 'sub' in k[0]]))\nprint(json.dumps(sorted(f for f, _ in found.folders)))")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    paths, folders = (json.loads(line) for line in done.stdout.splitlines()[-2:])
    place = str(tmp_path / "sub" / "a.txt")
    kinds = {(k[0], k[2]) for k, _ in paths}
    assert (place, "open") in kinds and (place, "look") in kinds
    assert str(tmp_path / "sub") in folders


def test_the_oldest_entries_and_dead_writers_leftovers_are_removed(tmp_path: Path) -> None:
    from agentspec.usercache import prune, write_entry

    now = 10**18
    fresh = ".validate-e.result.2.0123abcd.tmp"
    folder = os.open(tmp_path, os.O_RDONLY)
    try:
        for age, name in enumerate(["validate-a.result", "validate-b.result",
                                    "validate-c.result", ".validate-d.result.1.0123abcd.tmp",
                                    "other.validator", fresh]):
            assert write_entry(folder, name, b"x")  # as the cache writes its files
            age_ns = 0 if name == fresh else age * 10**13
            os.utime(tmp_path / name, ns=(now - age_ns, now - age_ns))
        prune(folder, "validate-", ".result", 2, now_ns=now)
    finally:
        os.close(folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        fresh, "other.validator", "validate-a.result", "validate-b.result"]
