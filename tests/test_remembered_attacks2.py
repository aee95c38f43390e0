"""`agentspec validate` remembered, attacked a second time (after the merges: the shape check
of entries, `usercache.prune`, the module-level audit hook, the validator cache's fingerprint
from `os.scandir` entries): each test is a way a replay, or the validator cache, could give a
stale result, or the cache could remove what is not its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentspec.cli import stamps
from agentspec.language import prebuilt
from tests.test_remembered import MARK, _entries, _env, _mark, _rewrite_time_put_back, _validate
from tests.test_remembered_attacks import BAD, GOOD, REPLAY_ONLY, _by_c, make_shop

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="runs are recorded on Linux only")


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    return make_shop(tmp_path)


def _fingerprint(monkeypatch: pytest.MonkeyPatch, package: Path) -> str | None:
    monkeypatch.setattr(prebuilt, "PACKAGE", package)
    prebuilt._fingerprint.cache_clear()
    try:
        return prebuilt._fingerprint()
    finally:
        prebuilt._fingerprint.cache_clear()


def test_a_module_edited_with_its_size_and_time_put_back_is_another_module(
        tmp_path: Path) -> None:
    """Python judges a `.pyc` by its source's size and time, but runs the new source when
    there is no `.pyc` (`-B`, an unwritable `__pycache__`, one removed): a module's stamp
    must show an edit whose size and time were put back."""
    module = tmp_path / "mod.py"
    module.write_text("A = 1\n")
    before = stamps.stamp(str(module), True, stamps.MODULE)
    _rewrite_time_put_back(module, "A = 2\n")
    assert stamps.stamp(str(module), True, stamps.MODULE) != before


def test_the_fingerprint_shows_a_module_edited_with_its_size_and_time_put_back(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    package = tmp_path / "agentspec"
    package.mkdir()
    module = package / "models.py"
    module.write_text("A = 1\n")
    first = _fingerprint(monkeypatch, package)
    _rewrite_time_put_back(module, "A = 2\n")
    assert None is not first != _fingerprint(monkeypatch, package)


def test_the_fingerprint_shows_a_module_link_retargeted_with_its_time_put_back(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    package = tmp_path / "agentspec"
    package.mkdir()
    for name, text in (("one.py", "A = 1\n"), ("two.py", "A = 2\n")):
        (tmp_path / name).write_text(text)
        os.utime(tmp_path / name, ns=(10**18, 10**18))
    (package / "models.py").symlink_to(tmp_path / "one.py")
    first = _fingerprint(monkeypatch, package)
    (package / "models.py").unlink()
    (package / "models.py").symlink_to(tmp_path / "two.py")
    assert None is not first != _fingerprint(monkeypatch, package)


def test_the_fingerprint_follows_a_linked_package_folder(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A subpackage whose folder is a link (a development layout) holds modules as any other;
    a link that leads back up is not followed forever."""
    package = tmp_path / "agentspec"
    package.mkdir()
    (package / "__init__.py").write_text("")
    kinds = tmp_path / "elsewhere" / "kinds"
    kinds.mkdir(parents=True)
    (kinds / "llm.py").write_text("A = 1\n")
    (package / "kinds").symlink_to(kinds)
    (kinds / "loop").symlink_to(package)
    first = _fingerprint(monkeypatch, package)
    (kinds / "llm.py").write_text("A = 22\n")
    second = _fingerprint(monkeypatch, package)
    (kinds / "new.py").write_text("")
    assert len({first, second, _fingerprint(monkeypatch, package)}) == 3


def test_prune_removes_only_what_the_cache_wrote(tmp_path: Path) -> None:
    """A cache directory may be a workspace (`AGENTSPEC_CACHE_DIR`): files whose names merely
    look like the cache's, or that others may write, are not its to remove."""
    from agentspec.usercache import prune, write_entry

    now = 10**18
    digest = "0123456789abcdef0123456789abcdef01234567"
    names = [f"validate-{digest}.result", f"validate-{digest[::-1]}.result",
             "validate-notes.result", ".notes.tmp", f".validate-{digest}.result.7.0a1b2c3d.tmp",
             ".validate-notes.result.7.x.tmp"]
    folder = os.open(tmp_path, os.O_RDONLY)
    try:
        for name in names:
            assert write_entry(folder, name, b"x")
            os.utime(tmp_path / name, ns=(now - 10**14, now - 10**14))
        os.chmod(tmp_path / f"validate-{digest[::-1]}.result", 0o644)  # not written by keep
        prune(folder, "validate-", ".result", 0, now_ns=now)
    finally:
        os.close(folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [".notes.tmp", ".validate-notes.result.7.x.tmp", f"validate-{digest[::-1]}.result",
         "validate-notes.result"])


def test_a_stat_with_a_follow_flag_that_is_no_bool_is_still_replayed(
        shop: Path, tmp_path: Path) -> None:
    """`follow_symlinks=0` is as good as False to `os.stat`: a run that looked at a path so
    must keep an entry its shape check accepts, else no such run is ever replayed."""
    cache = tmp_path / "cache"
    keep = ("import os\nfrom agentspec.cli import remembered\nremembered.start(sys.argv[1:])\n"
            "os.stat('spec.yaml', follow_symlinks=0)\nremembered.keep('x\\n', '', 0)\n")
    assert _by_c(shop, cache, keep).returncode == 0
    _mark(cache)
    assert _by_c(shop, cache, REPLAY_ONLY).stdout == MARK + "status 0\n"


def test_a_globbed_folder_with_names_not_in_utf8_links_and_long_paths_is_replayed(
        shop: Path, tmp_path: Path) -> None:
    """Paths with surrogates go through JSON and back; a link and a name too long for the
    system are stamped as they are: the kept entry passes the shape check and replays."""
    specs = shop / "specs"
    specs.mkdir()
    (specs / "good.yaml").write_text(GOOD.replace("instruction_file: prompts/p.md",
                                                  "instruction: Be brief."))
    with open(os.path.join(os.fsencode(specs), b"\xff-notes.txt"), "wb") as odd:
        odd.write(b"x")
    (specs / "link.txt").symlink_to(shop / "prompts" / "p.md")
    long = "/".join(["d" * 200] * 30)
    cache = tmp_path / "cache"
    args = ("specs/*.yaml", f"specs/{long}/*.yaml")
    first = _validate(shop, cache, *args)
    assert _entries(cache), first.stdout + first.stderr
    entry = json.loads(_entries(cache)[0].read_bytes())
    assert any("\udcff" in place for place, _, _ in entry["folders"]) or \
        any(place.endswith("/specs") for place, _, _ in entry["folders"])
    _mark(cache)
    assert _validate(shop, cache, *args).stdout == MARK
    (specs / "more.yaml").write_text(BAD)
    again = _validate(shop, cache, *args)
    assert again.stdout != MARK
    fresh = _validate(shop, tmp_path / "fresh", *args, env=_env(tmp_path / "fresh"))
    assert (again.stdout, again.returncode) == (fresh.stdout, fresh.returncode)


def test_a_module_imported_late_in_the_run_is_stamped_as_a_module(tmp_path: Path) -> None:
    """Modules imported only by some runs (the import diet defers them) are stamped when the
    run ends, whenever they were imported."""
    body = ("import sys\nfrom agentspec.cli import reads\nreads.record([])\n"
            "import colorsys\nfound, why = reads.recorded()\n"
            "print(why or [h for p, _, h in found.paths if p == colorsys.__file__])")
    done = subprocess.run([sys.executable, "-c", body], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == repr([stamps.MODULE])


def test_a_folder_listed_through_its_descriptor_after_it_was_removed_is_not_kept(
        tmp_path: Path) -> None:
    """Linux names a removed folder's descriptor `<path> (deleted)`: a run that listed one
    read what no path now holds (a folder made again there is another folder)."""
    (tmp_path / "gone").mkdir()
    body = ("import os\nfrom agentspec.cli import reads\nfd = os.open('gone', os.O_RDONLY)\n"
            "os.rmdir('gone')\nreads.record([])\nos.listdir(fd)\n"
            "found, why = reads.recorded()\n"
            "print(why or sorted(f for f, _ in found.folders if 'gone' in f))")
    done = subprocess.run([sys.executable, "-c", body], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "a listed directory whose path is unknown"


def test_a_file_changed_and_changed_back_during_the_run_is_not_kept(tmp_path: Path) -> None:
    """Its content at the end is as at first, but a run that read it in between printed what
    the other content made it print: its change time, which cannot be put back, tells."""
    (tmp_path / "spec.yaml").write_text("one\n")
    script = ("import os, sys\nfrom agentspec.cli import reads\n"
              "reads.record([])\nopen('spec.yaml').read()\n"
              "reads._RECORDER.active = False\n"  # the edits are another process's
              "open('spec.yaml', 'w').write('two\\n')\nopen('spec.yaml', 'w').write('one\\n')\n"
              "reads._RECORDER.active = True\nopen('spec.yaml').read()\n"
              "found, why = reads.recorded()\nprint(why)")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{tmp_path / 'spec.yaml'} changed while it was read"
