"""`agentspec validate` remembered, attacked: each test is a way a replayed run could print
something other than what a fresh run prints (a stale result), block, or fail in a way the
command does not (agentspec/cli/reads.py, remembered.py). The marker technique of
`test_remembered.py`: a replay shows itself by printing the marker."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_remembered import MARK, _entries, _env, _mark, _validate

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="runs are recorded on Linux only")

GOOD = """\
agentspec: 1
name: shop
root: helper
models:
  fast: gemini-2.5-flash
agents:
  helper:
    model: fast
    instruction_file: prompts/p.md
"""
BAD = "agentspec: 1\nname: bad\nroot: nope\n"


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    return make_shop(tmp_path)


def make_shop(tmp_path: Path) -> Path:
    """A project whose spec validates cleanly, with its prompt file."""
    root = tmp_path / "shop"
    (root / "prompts").mkdir(parents=True)
    (root / "spec.yaml").write_text(GOOD)
    (root / "prompts" / "p.md").write_text("Be brief.\n")
    return root


def _replayed_then(root: Path, cache: Path, *args: str) -> None:
    """Run, mark the kept entry and check that the same run now replays."""
    first = _validate(root, cache, *args)
    assert first.returncode == 0, first.stdout + first.stderr
    _mark(cache)
    assert _validate(root, cache, *args).stdout == MARK


def _as_fresh(root: Path, cache: Path, fresh: Path, *args: str) -> str:
    """The run with `cache` prints and exits as a run without any kept entry does."""
    after = _validate(root, cache, *args)
    new = _validate(root, fresh, *args, env=_env(fresh))
    assert after.stdout != MARK
    assert (after.stdout, after.stderr, after.returncode) == \
        (new.stdout, new.stderr, new.returncode)
    return after.stdout


def test_a_link_in_a_globbed_folder_that_comes_to_lead_to_a_folder_runs_again(
        shop: Path, tmp_path: Path) -> None:
    """`**` descends into what a link leads to (`DirEntry.is_dir()` follows it, in C): a link
    whose target is created, or retargeted, lists the same in its folder."""
    (shop / "specs").mkdir()
    (shop / "specs" / "good.yaml").write_text(
        GOOD.replace("instruction_file: prompts/p.md", "instruction: Be brief."))
    (shop / "specs" / "more").symlink_to(tmp_path / "elsewhere" / "more")  # dangling
    (tmp_path / "elsewhere").mkdir()
    cache = tmp_path / "cache"
    _replayed_then(shop, cache, "specs/**/*.yaml")
    (tmp_path / "elsewhere" / "more").mkdir()
    (tmp_path / "elsewhere" / "more" / "bad.yaml").write_text(BAD)
    assert "bad.yaml" in _as_fresh(shop, cache, tmp_path / "fresh", "specs/**/*.yaml")


def test_a_project_inside_the_cache_directory_is_still_recorded(
        shop: Path, tmp_path: Path) -> None:
    """Only agentspec's own entries in the cache directory go unrecorded: a project kept
    below it (`AGENTSPEC_CACHE_DIR` set to a workspace) is read like any other."""
    _replayed_then(shop, tmp_path, "spec.yaml")
    (shop / "prompts" / "p.md").unlink()
    assert "AS" in _as_fresh(shop, tmp_path, tmp_path / "fresh", "spec.yaml")


def test_a_link_retargeted_with_its_time_put_back_runs_again(shop: Path,
                                                             tmp_path: Path) -> None:
    """A link is stamped by where it leads, not by a size and a time that can be put back:
    here the prompt file leads outside the project, to a copy with the same text."""
    (shop / "iiii").mkdir()
    (shop / "iiii" / "p.md").write_text("Be brief.\n")
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "p.md").write_text("Be brief.\n")
    inside = os.stat(shop / "iiii" / "p.md")
    os.utime(tmp_path / "o" / "p.md", ns=(inside.st_atime_ns, inside.st_mtime_ns))
    link = shop / "prompts" / "p.md"
    link.unlink()
    link.symlink_to("../iiii/p.md")
    cache = tmp_path / "cache"
    _replayed_then(shop, cache, "spec.yaml")
    before = os.lstat(link)
    (shop / "prompts" / "new").symlink_to("../../o/p.md")  # as long as the first target
    os.replace(shop / "prompts" / "new", link)
    os.utime(link, ns=(before.st_atime_ns, before.st_mtime_ns), follow_symlinks=False)
    assert "outside the project" in _as_fresh(shop, cache, tmp_path / "fresh", "spec.yaml")


FORKED_EDIT = """\
import os
from agentspec.cli import reads
go, done = os.pipe(), os.pipe()
if os.fork() == 0:  # another process (forked before recording): edits when told
    os.read(go[0], 1)
    before = os.stat("a.txt")
    with open("a.txt", "w") as file:
        file.write("b")
    os.utime("a.txt", ns=(before.st_atime_ns, before.st_mtime_ns))
    os.write(done[1], b"x")
    os._exit(0)
reads.record([])
with open("a.txt") as file:
    print("read", file.read())
os.write(go[1], b"x")
os.read(done[0], 1)
found, why = reads.recorded()
print(why if found is None else "kept")
"""


def test_a_file_edited_during_the_run_with_its_size_and_time_kept_is_not_kept(
        tmp_path: Path) -> None:
    """The digest kept must be of what the run read: taken when the file is opened, and
    compared when the run ends."""
    (tmp_path / "a.txt").write_text("a")
    done = subprocess.run([sys.executable, "-c", FORKED_EDIT], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "read a"
    assert "changed while it was read" in done.stdout


def test_a_spec_whose_name_holds_pyc_in_a_pycache_folder_is_recorded(tmp_path: Path) -> None:
    """Only Python's own `.pyc` files (their names end so) in `__pycache__` go unrecorded."""
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "a.pyc.yaml").write_text("a")
    body = ("from agentspec.cli import reads\nreads.record([])\n"
            "open('__pycache__/a.pyc.yaml').read()\nopen('__pycache__/m.cpython.pyc', 'w')\n"
            "found, why = reads.recorded()\nprint(why or sorted(p for p, _, h in found.paths "
            "if h == 'open'))")
    done = subprocess.run([sys.executable, "-c", body], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == repr([str(tmp_path / "__pycache__" / "a.pyc.yaml")])


def test_warning_options_are_part_of_the_run(shop: Path, tmp_path: Path) -> None:
    """`-W error` can turn a warning into a failure: a run with other warning options is
    another run."""
    cache = tmp_path / "cache"
    _replayed_then(shop, cache, "spec.yaml")
    other = subprocess.run([sys.executable, "-W", "ignore", "-m", "agentspec", "validate",
                            "spec.yaml"], cwd=shop, env=_env(cache), capture_output=True,
                           text=True, timeout=120)
    assert other.stdout != MARK


def test_a_replay_to_a_full_device_fails_as_the_command_does_without_a_traceback(
        shop: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (shop / "prompts" / "p.md").unlink()  # something to print
    _validate(shop, cache, "spec.yaml")
    assert _entries(cache)
    with open("/dev/full", "w") as full:
        replayed = subprocess.run([sys.executable, "-m", "agentspec", "validate", "spec.yaml"],
                                  cwd=shop, env=_env(cache), stdout=full,
                                  stderr=subprocess.PIPE, text=True, timeout=120)
    assert "Traceback" not in replayed.stderr
    assert "No space left on device" in replayed.stderr
    assert replayed.returncode == 2



def test_a_run_whose_output_its_stream_cannot_write_is_not_kept(tmp_path: Path) -> None:
    """A file name that is not UTF-8 with a strict standard output: the command fails as it
    prints (a surrogate), and a replay must fail the same way, not with a traceback."""
    root = tmp_path / "p"
    root.mkdir()
    (root / os.fsdecode(b"bad\xff.yaml")).write_text(BAD)
    cache = tmp_path / "cache"
    env = _env(cache, PYTHONIOENCODING="utf-8")
    first, again = (_validate(root, cache, "*.yaml", env=env) for _ in range(2))
    assert not _entries(cache)
    assert "Traceback" not in again.stderr
    assert (again.stdout, again.returncode) == (first.stdout, first.returncode)


@pytest.mark.parametrize("python", [["-X", "importtime"], ["-v"]])
def test_a_python_printing_its_own_traces_is_not_replayed(
        shop: Path, tmp_path: Path, python: list[str]) -> None:
    cache = tmp_path / "cache"
    runs = [subprocess.run([sys.executable, *python, "-m", "agentspec", "validate",
                            "spec.yaml"], cwd=shop, env=_env(cache), capture_output=True,
                           text=True, timeout=120) for _ in range(2)]
    assert not _entries(cache)
    assert "import" in runs[1].stderr.splitlines()[0]


def test_a_run_that_shows_a_warning_is_not_kept(tmp_path: Path) -> None:
    body = ("import warnings\nfrom agentspec.cli import reads\nreads.record([])\n"
            "warnings.warn('careful')\nfound, why = reads.recorded()\nprint(why)")
    done = subprocess.run([sys.executable, "-c", body], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "careful" in done.stderr
    assert done.stdout.strip() == "it printed a warning"


@pytest.mark.parametrize("how", ["others can write it", "a link to a file", "a linked folder"])
def test_an_entry_or_folder_someone_else_could_have_written_is_never_replayed(
        shop: Path, tmp_path: Path, how: str) -> None:
    cache = tmp_path / "cache"
    _replayed_then(shop, cache, "spec.yaml")
    (entry,) = _entries(cache)
    if how == "others can write it":
        entry.chmod(0o666)
    elif how == "a link to a file":
        planted = tmp_path / "planted.result"
        entry.rename(planted)
        entry.symlink_to(planted)
    else:
        cache.rename(tmp_path / "real")
        cache.symlink_to(tmp_path / "real")
    assert _validate(shop, cache, "spec.yaml").stdout != MARK


def _by_c(root: Path, cache: Path, code: str) -> subprocess.CompletedProcess[str]:
    """`validate spec.yaml` driven by `python -c` (one key for the run and the replay)."""
    return subprocess.run([sys.executable, "-c", "import sys\n"
                           "sys.argv = ['agentspec', 'validate', 'spec.yaml']\n" + code],
                          cwd=root, env=_env(cache), capture_output=True, text=True,
                          timeout=60)


REPLAY_ONLY = ("from agentspec.cli import remembered\n"
               "print('status', remembered.replay(sys.argv[1:]))")


def test_a_recorded_path_that_became_a_fifo_is_not_read(shop: Path, tmp_path: Path) -> None:
    """A replay stamps the paths the run read: one that is now a FIFO (nobody writing) must
    not block it; the hang guard (timeout) fails the test if it does."""
    cache = tmp_path / "cache"
    assert _by_c(shop, cache, "from agentspec.cli import main\nmain()").returncode == 0
    _mark(cache)
    assert _by_c(shop, cache, REPLAY_ONLY).stdout == MARK + "status 0\n"
    prompt = shop / "prompts" / "p.md"
    prompt.unlink()
    os.mkfifo(prompt)
    assert _by_c(shop, cache, REPLAY_ONLY).stdout == "status None\n"


def test_output_with_an_escape_character_is_not_kept(shop: Path, tmp_path: Path) -> None:
    """click strips styles from what it prints where the output is no terminal; a replay
    writes what was kept, so text that could be styled is not kept."""
    cache = tmp_path / "cache"
    keep = ("from agentspec.cli import remembered\nremembered.start(sys.argv[1:])\n"
            "remembered.keep({out!r}, '', 0)\n")
    _by_c(shop, cache, keep.format(out="plain\n"))
    assert len(_entries(cache)) == 1
    for entry in _entries(cache):
        entry.unlink()
    _by_c(shop, cache, keep.format(out="\x1b[31mred\x1b[0m\n"))
    assert not _entries(cache)


def test_a_run_whose_module_changed_as_it_ran_is_not_kept(tmp_path: Path) -> None:
    """Modules are stamped when the run ends: one changed after it was imported (an upgrade,
    an edit of an editable install) would be stamped as new with what the old code printed."""
    (tmp_path / "fresh_module.py").write_text("VALUE = 1\n")
    body = ("import sys\nsys.path.insert(0, '.')\nfrom agentspec.cli import reads\n"
            "reads.record([])\nimport fresh_module\nfound, why = reads.recorded()\nprint(why)")
    done = subprocess.run([sys.executable, "-c", body], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == \
        f"the module {tmp_path / 'fresh_module.py'} changed just before or during the run"


def test_listing_the_working_directory_without_naming_it_is_recorded(tmp_path: Path) -> None:
    body = ("import os\nfrom agentspec.cli import reads\nreads.record([])\nos.listdir()\n"
            "found, why = reads.recorded()\n"
            "print(why or [f for f, _ in found.folders if f == os.path.join(os.getcwd(), '.')])")
    done = subprocess.run([sys.executable, "-c", body], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == repr([os.path.join(tmp_path, ".")])


def test_the_cache_folder_globbed_as_specs_is_recorded_as_any_folder(
        shop: Path, tmp_path: Path) -> None:
    """Kept runs read as specs by a glob (a cache folder inside the project): the entry the
    first run keeps is a new file the second run must find, as a fresh run does."""
    cache = shop / "cache"
    first = _validate(shop, cache, "cache/*.result")
    assert "No file matches" in first.stdout
    assert _entries(cache)
    fresh = _validate(shop, tmp_path / "fresh", "cache/*.result", env=_env(tmp_path / "fresh"))
    again = _validate(shop, cache, "cache/*.result")
    assert "No file matches" not in again.stdout
    assert (again.stdout, again.stderr, again.returncode) == \
        (fresh.stdout, fresh.stderr, fresh.returncode)


def test_an_agentspec_module_read_as_source_is_recorded(tmp_path: Path) -> None:
    """Only agentspec's modules looked at (by the validator cache's fingerprint) go
    unstamped: one read as source (a `python:` reference to it, which validate parses without
    importing) is stamped by its content."""
    body = ("import agentspec.diagnostics.codes as m\nfrom agentspec.cli import reads\n"
            "reads.record([])\nos.stat(m.__file__)\nopen(m.__file__, 'rb').read()\n"
            "found, why = reads.recorded()\n"
            "print(why or sorted(h for p, _, h in found.paths if p == m.__file__))")
    done = subprocess.run([sys.executable, "-c", "import os\n" + body], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == repr(["module", "open"])
