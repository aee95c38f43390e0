"""The cache of built validators (agentspec/language/prebuilt.py): used only when it is
safe, never changing what is reported, rebuilt whenever anything is amiss."""

from __future__ import annotations

import json
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic_core import SchemaValidator, ValidationError

from agentspec.language import Spec, prebuilt
from agentspec.parse import load

ROOT = Path(__file__).resolve().parent.parent
CASES = sorted((ROOT / "tests" / "cases").glob("*/spec.yaml"))


def _fresh(monkeypatch: pytest.MonkeyPatch, directory: Path | str) -> None:
    monkeypatch.setenv("AGENTSPEC_CACHE_DIR", str(directory))
    monkeypatch.setattr(prebuilt, "_KEPT", {})


def _entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.validator"))


def _errors(validator: prebuilt.Validator, data: object) -> object:
    try:
        result = validator.validate_python(data)
    except ValidationError as exc:
        return json.loads(exc.json(include_url=False))
    return repr(result)


def test_a_loaded_validator_judges_every_golden_case_as_a_built_one(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fresh(monkeypatch, tmp_path)
    built = prebuilt.validator("spec", Spec)
    assert [p.name.split("-")[0] for p in _entries(tmp_path)] == ["spec"]
    monkeypatch.setattr(prebuilt, "_KEPT", {})
    monkeypatch.setattr(prebuilt, "_build", lambda kind: pytest.fail("built, not loaded"))
    loaded = prebuilt.validator("spec", Spec)
    assert loaded is not built
    datas = [p.value for p in (load(case) for case in CASES) if p.ok]
    assert len(datas) > 150
    for data in datas:
        assert _errors(loaded, data) == _errors(built, data)


def _hostile_entry(directory: Path, marker: Path) -> Path:
    """An entry for these very sources whose loading would create `marker`."""
    entry = directory / f"spec-{prebuilt._fingerprint()}.validator"

    class Plant:
        def __reduce__(self) -> tuple[object, tuple[str, str]]:
            return (open, (str(marker), "w"))

    entry.write_bytes(pickle.dumps(Plant()))
    return entry


@pytest.mark.parametrize("how", ["others can write it", "a link", "others can write the folder"])
def test_an_entry_others_could_have_written_is_never_loaded(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, how: str) -> None:
    directory = tmp_path / "cache"
    directory.mkdir(mode=0o700)
    marker = tmp_path / "planted"
    entry = _hostile_entry(directory if how != "a link" else tmp_path, marker)
    if how == "others can write it":
        entry.chmod(0o666)
    elif how == "a link":
        (directory / entry.name).symlink_to(entry)
    else:
        directory.chmod(0o777)
    _fresh(monkeypatch, directory)
    assert isinstance(prebuilt.validator("spec", Spec), SchemaValidator)
    assert not marker.exists()


def test_an_entry_of_this_user_is_loaded(monkeypatch: pytest.MonkeyPatch,
                                         tmp_path: Path) -> None:
    """The other side of the test above: the same entry, private, is loaded (so that test
    shows the checks, not a loader that never loads)."""
    marker = tmp_path / "planted"
    _hostile_entry(tmp_path, marker)
    _fresh(monkeypatch, tmp_path)
    assert isinstance(prebuilt.validator("spec", Spec), SchemaValidator)
    assert marker.exists()  # loaded, found not to be a validator, and rebuilt


def test_a_damaged_entry_is_rebuilt_and_replaced(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    _fresh(monkeypatch, tmp_path)
    prebuilt.validator("spec", Spec)
    [entry] = _entries(tmp_path)
    whole = entry.read_bytes()
    entry.write_bytes(whole[: len(whole) // 2])
    _fresh(monkeypatch, tmp_path)
    assert prebuilt.validator("spec", Spec).validate_python(
        {"agentspec": 1, "name": "x", "agents": {}}) is not None
    assert entry.read_bytes() == whole


def test_changed_sources_make_a_new_entry_and_drop_the_old(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fresh(monkeypatch, tmp_path)
    prebuilt.validator("spec", Spec)
    prebuilt.validator("other", int)
    [old, other] = sorted(_entries(tmp_path), key=lambda p: p.name.startswith("other"))
    monkeypatch.setattr(prebuilt, "_KEPT", {})
    place = old.name.split("-")[1]
    prebuilt._fingerprint.cache_clear()
    monkeypatch.setattr(prebuilt, "_fingerprint", lambda: f"{place}-{'0' * 32}")
    prebuilt.validator("spec", Spec)
    names = [p.name for p in _entries(tmp_path)]
    assert old.name not in names and other.name in names
    assert f"spec-{place}-{'0' * 32}.validator" in names


def test_two_installs_sharing_the_cache_keep_their_own_entries(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Two virtual environments (two projects, a pipx install and a project's) share the
    user's cache: each storing its entry must not remove the other's, or every run of either
    after a run of the other is a first run."""
    _fresh(monkeypatch, tmp_path / "cache")
    stored = []
    for install in ("one", "two"):
        package = tmp_path / install / "agentspec"
        package.mkdir(parents=True)
        (package / "models.py").write_text("A = 1\n")
        monkeypatch.setattr(prebuilt, "PACKAGE", package)
        prebuilt._fingerprint.cache_clear()
        monkeypatch.setattr(prebuilt, "_KEPT", {})
        prebuilt.validator("other", int)
        stored.append(prebuilt._fingerprint())
    prebuilt._fingerprint.cache_clear()
    assert [p.name for p in _entries(tmp_path / "cache")] == \
        sorted(f"other-{key}.validator" for key in stored)


def test_the_fingerprint_follows_the_package_sources(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    package = tmp_path / "agentspec"
    (package / "language").mkdir(parents=True)
    module = package / "language" / "models.py"
    module.write_text("A = 1\n")
    monkeypatch.setattr(prebuilt, "PACKAGE", package)
    prebuilt._fingerprint.cache_clear()
    first = prebuilt._fingerprint()
    prebuilt._fingerprint.cache_clear()
    assert prebuilt._fingerprint() == first
    module.write_text("A = 22\n")
    prebuilt._fingerprint.cache_clear()
    second = prebuilt._fingerprint()
    os.utime(module, ns=(1, 1))
    prebuilt._fingerprint.cache_clear()
    third = prebuilt._fingerprint()
    prebuilt._fingerprint.cache_clear()
    assert len({first, second, third}) == 3


@pytest.mark.parametrize("setting", ["", "relative/cache"])
def test_no_cache_when_it_is_off_or_relative(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path, setting: str) -> None:
    monkeypatch.chdir(tmp_path)
    _fresh(monkeypatch, setting)
    assert prebuilt.cache_directory() is None
    prebuilt.validator("spec", Spec)
    assert list(tmp_path.rglob("*")) == []


def test_an_unwritable_cache_is_only_slower(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    _fresh(monkeypatch, blocker / "cache")  # its parent is a file: cannot be made
    assert prebuilt.validator("spec", Spec) is not None


def _validate(spec: Path, cache: Path | str) -> tuple[int, str, str]:
    env = {**os.environ, "AGENTSPEC_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-m", "agentspec", "validate", "--format", "json",
                           str(spec)], capture_output=True, text=True, cwd=ROOT, env=env,
                          check=False)
    return done.returncode, done.stdout, done.stderr


def test_validate_reports_the_same_with_the_cache_cold_warm_and_off(tmp_path: Path) -> None:
    """The second run loads what the first stored; the scenario file's validator too."""
    spec = ROOT / "specs" / "research_desk.yaml"
    cold = _validate(spec, tmp_path)
    assert sorted(p.name.split("-")[0] for p in _entries(tmp_path)) == \
        ["scenario_file", "spec"]
    stamps = [p.stat().st_mtime_ns for p in _entries(tmp_path)]
    assert _validate(spec, tmp_path) == cold == _validate(spec, "")
    assert [p.stat().st_mtime_ns for p in _entries(tmp_path)] == stamps
    broken = ROOT / "tests" / "cases" / "agent_cycle" / "spec.yaml"
    assert _validate(broken, tmp_path) == _validate(broken, "")


def test_validate_does_not_look_for_pydantic_plugins() -> None:
    """Looking for them imports importlib.metadata, a start-up cost validate does not need;
    with plugins named in PYDANTIC_DISABLE_PLUGINS, pydantic's own loader runs."""
    probe = ("import sys\nfrom agentspec.cli import cli\n"
             "try:\n    cli(['validate', 'specs/research_desk.yaml'], standalone_mode=False)\n"
             "except SystemExit:\n    pass\n"
             "print('importlib.metadata' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    env["AGENTSPEC_CACHE_DIR"] = ""
    for setting, expected in ((None, "False"), ("logfire", "True")):
        if setting:
            env["PYDANTIC_DISABLE_PLUGINS"] = setting
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              cwd=ROOT, env=env, check=True)
        assert done.stdout.split()[-1] == expected, done.stderr


def _plugin_dist(folder: Path, seen: Path) -> None:
    """An installed distribution registering a pydantic plugin that notes each schema it
    is given (as logfire's does), found on PYTHONPATH."""
    (folder / "seeplug-1.0.dist-info").mkdir(parents=True)
    (folder / "seeplug-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: seeplug\nVersion: 1.0\n")
    (folder / "seeplug-1.0.dist-info" / "entry_points.txt").write_text(
        "[pydantic]\nseeplug = seeplug:plugin\n")
    (folder / "seeplug.py").write_text(
        "class _Plugin:\n"
        "    def new_schema_validator(self, schema, schema_type, path, *args, **kwargs):\n"
        f"        with open({str(seen)!r}, 'a') as noted:\n"
        "            noted.write(str(path.name) + '\\n')\n"
        "        return None, None, None\n"
        "plugin = _Plugin()\n")


def test_an_installed_pydantic_plugin_sees_the_validation_and_nothing_is_cached(
        tmp_path: Path) -> None:
    """A plugin wraps every validator pydantic builds: checking a spec (the API, build, test,
    the language server) goes on with the wrapped one, which is never stored or replaced by
    one from the cache."""
    seen = tmp_path / "seen"
    _plugin_dist(tmp_path / "site", seen)
    cache = tmp_path / "cache"
    probe = ("import json, agentspec\n"
             "result = agentspec.check('specs/research_desk.yaml')\n"
             "print(json.dumps([result.ok, [d.code for d in result.diagnostics]]))")
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    runs = []
    for setting in (str(cache), str(cache), ""):
        done = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=False,
            env={**env, "PYTHONPATH": str(tmp_path / "site"), "AGENTSPEC_CACHE_DIR": setting})
        assert done.returncode == 0, done.stderr
        runs.append(done.stdout)
    assert runs[0] == runs[1] == runs[2] and json.loads(runs[0])[0] is True
    assert sum(line.endswith(".Spec'>") for line in seen.read_text().splitlines()) == 3
    assert not cache.exists() or _entries(cache) == []


#: every diagnostic of the given scenario and eval case folders, in a fresh process
_DATA_FILES_PROBE = """
import json, sys
from pathlib import Path
from agentspec.evaluation.check import check_evals
from agentspec.testing.check import check_scenarios
from agentspec.testing.names import spec_context
from agentspec.validate.check import check
found = {}
for case in map(Path, sys.argv[1:]):
    context = None
    if (case / "spec.yaml").is_file():
        result = check(case / "spec.yaml")
        context = spec_context(result) if result.spec is not None else None
    checker, name = (check_evals, "evals.yaml") if (case / "evals.yaml").is_file() \\
        else (check_scenarios, "scenario.yaml")
    checked = checker(
        case / name, context.required if context else None,
        names=context.names if context else None)
    found[str(case)] = [[d.code, d.message, d.hint, str(d.span)] for d in checked.diagnostics]
print(json.dumps(found))
"""


def _reports(specs: list[Path], data_cases: list[Path], cache: Path | str) -> tuple[str, str]:
    env = {**os.environ, "AGENTSPEC_CACHE_DIR": str(cache)}
    validated = subprocess.run(
        [sys.executable, "-m", "agentspec", "validate", "--format", "json", *map(str, specs)],
        capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    probed = subprocess.run([sys.executable, "-c", _DATA_FILES_PROBE, *map(str, data_cases)],
                            capture_output=True, text=True, cwd=ROOT, env=env, check=True)
    return re.sub(r"/proc/\d+/", "/proc/N/", validated.stdout), probed.stdout


def _same_cold_warm_and_off(tmp_path: Path, specs: list[Path], data_cases: list[Path]) -> None:
    cold = _reports(specs, data_cases, tmp_path)
    assert sorted(p.name.split("-")[0] for p in _entries(tmp_path)) == \
        ["eval_file", "scenario_file", "spec"]
    warm = _reports(specs, data_cases, tmp_path)
    assert json.loads(warm[0]) == json.loads(cold[0])
    assert json.loads(warm[1]) == json.loads(cold[1])
    assert _reports(specs, data_cases, "") == cold


def test_union_errors_are_reported_the_same_by_a_loaded_validator(tmp_path: Path) -> None:
    """A union chosen by the value's type (`ByType`) named its members only while its schema
    was built, which a loaded validator skips: `vars: {x: [a list]}` was AS104 instead of
    AS103, an inline agent's bad name was reported on the whole entry as `None`, and a
    scenario's unknown key lost its did-you-mean."""
    specs = [ROOT / "tests" / "cases" / case / "spec.yaml" for case in
             ("inline_agent_invalid_name", "tag_like_keys", "invalid_inline_tool_no_cascade")]
    data_cases = [ROOT / "tests" / "scenario_cases" / "wrong_types",
                  ROOT / "tests" / "scenario_cases" / "unknown_keys",
                  ROOT / "tests" / "eval_cases" / "wrong_types"]
    _same_cold_warm_and_off(tmp_path, specs, data_cases)


@pytest.mark.slow
def test_every_case_is_reported_the_same_with_the_cache_cold_warm_and_off(
        tmp_path: Path) -> None:
    specs = [*CASES, *sorted((ROOT / "specs").glob("*.yaml")),
             *sorted((ROOT / "examples").glob("*/*.yaml"))]
    data_cases = sorted(p for folder in ("scenario_cases", "eval_cases")
                        for p in (ROOT / "tests" / folder).iterdir() if p.is_dir())
    _same_cold_warm_and_off(tmp_path, specs, data_cases)


def test_a_folder_swapped_after_its_check_is_not_read(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    """Whoever can write the cache folder's parent (a shared `AGENTSPEC_CACHE_DIR`, a
    `~/.cache` linked to a team disk) can put their own folder in its place between the check
    and the read; in theirs, a hard link to any file of ours they chose the content of (a
    download; hard links to others' files are allowed on macOS and without Linux's
    protected_hardlinks) passes the file's own checks. The folder is judged and read through
    one descriptor."""
    shared = tmp_path / "shared"
    (shared / "cache").mkdir(parents=True, mode=0o700)
    marker = tmp_path / "planted"
    download = _hostile_entry(tmp_path, marker)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.link(download, theirs / download.name)
    if os.getuid() == 0:
        os.chown(shared, 65534, 65534)  # nobody's
        os.chown(theirs, 65534, 65534)
    fingerprint = prebuilt._fingerprint()

    def swap_then_fingerprint() -> str | None:
        (shared / "cache").rename(shared / "ours")
        (shared / "cache").symlink_to(theirs)
        return fingerprint

    _fresh(monkeypatch, shared / "cache")
    monkeypatch.setattr(prebuilt, "_fingerprint", swap_then_fingerprint)
    assert isinstance(prebuilt.validator("spec", Spec), SchemaValidator)
    assert not marker.exists()
    assert [p.name for p in _entries(shared / "ours")] == [download.name]


@pytest.mark.parametrize("package", ["a zip", "sourceless"])
def test_sources_that_cannot_be_seen_are_never_a_key(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path, package: str) -> None:
    """In a zip or frozen application the package's folder holds no modules to judge: every
    version would share one entry (the first stored, used by all). An install of compiled
    modules only (`module.pyc` beside `__init__.pyc`) is judged by those."""
    folder = tmp_path / "agentspec"
    monkeypatch.setattr(prebuilt, "PACKAGE", folder if package == "sourceless"
                        else tmp_path / "app.pyz" / "agentspec")
    prebuilt._fingerprint.cache_clear()
    cache = tmp_path / "cache"
    _fresh(monkeypatch, cache)
    if package == "a zip":
        assert prebuilt._fingerprint() is None
        prebuilt.validator("other", int)
        assert _entries(cache) == []
    else:
        folder.mkdir()
        (folder / "models.pyc").write_bytes(b"one")
        first = prebuilt._fingerprint()
        (folder / "models.pyc").write_bytes(b"other")
        prebuilt._fingerprint.cache_clear()
        assert None is not first != prebuilt._fingerprint()
    prebuilt._fingerprint.cache_clear()


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                    reason="making a folder another user's needs root")
@pytest.mark.parametrize("what", ["folder", "entry"])
def test_a_folder_or_entry_of_another_user_is_never_loaded(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, what: str) -> None:
    """Root's cache in a folder (or an entry) that `nobody` owns, private as it may look
    (0700, 0600): its owner could have written anything there."""
    directory = tmp_path / "cache"
    directory.mkdir(mode=0o700)
    marker = tmp_path / "planted"
    entry = _hostile_entry(directory, marker)
    entry.chmod(0o600)
    os.chown(directory if what == "folder" else entry, 65534, 65534)
    _fresh(monkeypatch, directory)
    assert isinstance(prebuilt.validator("spec", Spec), SchemaValidator)
    assert not marker.exists()


def test_the_union_tags_known_do_not_depend_on_the_cache(tmp_path: Path) -> None:
    """Building a `ByType` union's schema added its tags to `TAGS`, loading a validator did
    not: the test modules that read `TAGS` at collection (test_hypothesis) collected other
    tests in each pytest-xdist worker ("Different tests were collected")."""
    probe = ("import json\nfrom agentspec.language.common import TAGS\n"
             "from agentspec.validate.check import check\n"
             "from agentspec.testing.check import check_scenarios\n"
             "check(__import__('pathlib').Path('specs/research_desk.yaml'))\n"
             "check_scenarios(__import__('pathlib').Path('specs/scenarios/research_desk.yaml'))\n"
             "print(json.dumps(sorted(TAGS)))")
    env = {**os.environ, "AGENTSPEC_CACHE_DIR": str(tmp_path)}
    cold, warm = (subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                 cwd=ROOT, env=env, check=True).stdout for _ in range(2))
    assert len(_entries(tmp_path)) == 2
    assert json.loads(warm) == json.loads(cold)


def test_diagnostics_from_a_cached_scenario_validator_keep_their_hints(tmp_path: Path) -> None:
    """A misspelled key under a union chosen by type (`expect.final`) is named with its
    did-you-mean whether the scenario file's validator was built or loaded."""
    spec = tmp_path / "spec.yaml"
    spec.write_text("agentspec: 1\nname: s\nagents:\n  root: {kind: llm, model: m, "
                    "instruction: hi}\nmodels:\n  m: gemini-2.5-flash\n")
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "spec.yaml").write_text(
        "messages: [Hi]\nexpect: {final: {contans: Goodbye}}\n")
    cache = tmp_path / "cache"
    outputs = [_validate(spec, cache) for _ in range(2)] + [_validate(spec, "")]
    assert "Did you mean `contains`?" in outputs[0][1]
    assert outputs[0] == outputs[1] == outputs[2]
    assert any(p.name.startswith("scenario_file-") for p in _entries(cache))
