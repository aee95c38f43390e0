"""The cache of built validators (agentspec/language/prebuilt.py): used only when it is
safe, never changing what is reported, rebuilt whenever anything is amiss."""

from __future__ import annotations

import json
import os
import pickle
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


def _errors(validator: SchemaValidator, data: object) -> object:
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


def test_entries_of_other_sources_are_kept_up_to_a_few(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Two installs sharing the cache each find theirs; the oldest go past KEEP."""
    _fresh(monkeypatch, tmp_path)
    prebuilt.validator("other", int)
    for index in range(prebuilt.KEEP + 2):
        monkeypatch.setattr(prebuilt, "_KEPT", {})
        monkeypatch.setattr(prebuilt, "_fingerprint", lambda index=index: f"{index:032x}")
        prebuilt.validator("spec", Spec)
        entry = tmp_path / f"spec-{index:032x}.validator"
        os.utime(entry, ns=(index * 10**9, index * 10**9))
    names = sorted(p.name for p in _entries(tmp_path) if p.name.startswith("spec-"))
    assert names == [f"spec-{i:032x}.validator" for i in range(2, prebuilt.KEEP + 2)]
    assert len([p for p in _entries(tmp_path) if p.name.startswith("other-")]) == 1


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


def test_every_union_the_diagnostics_read_is_registered_without_a_build() -> None:
    """A process that loads its validators from the cache generates no schema, so every
    union tag and message must be registered by importing the models (`register_unions`):
    building all three validators afterwards registers nothing new."""
    probe = """
import json
from agentspec.language import Spec
from agentspec.language.common import TAGS, UNION_MESSAGES
from agentspec.testing.models import ScenarioFile
from agentspec.evaluation.models import EvalFile
from pydantic import TypeAdapter
before = (dict(TAGS), dict(UNION_MESSAGES))
for kind in (Spec, ScenarioFile, EvalFile):
    TypeAdapter(kind).rebuild(force=True)
print(json.dumps([sorted(set(TAGS) - set(before[0])),
                  sorted(set(UNION_MESSAGES) - set(before[1])),
                  sorted(k for k in before[0] if TAGS[k] is not before[0][k])]))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=ROOT, check=True, env={**os.environ, "AGENTSPEC_CACHE_DIR": ""})
    assert json.loads(done.stdout) == [[], [], []]


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


_EVERY_CASE = """
import re
import sys
from pathlib import Path
from agentspec.diagnostics import normalize
from agentspec.evaluation.check import check_evals
from agentspec.testing.check import check_scenarios
from agentspec.validate.check import check

root = Path(sys.argv[1])
specs = sorted([*root.glob("tests/cases/*/spec.yaml"), *root.glob("specs/*.yaml"),
                *root.glob("examples/*/*.yaml")])
found = [(p, check(p).diagnostics) for p in specs]
found += [(p, check_scenarios(p).diagnostics)
          for p in sorted([*root.glob("tests/scenario_cases/*/scenario.yaml"),
                           *root.glob("specs/scenarios/*.yaml")])]
found += [(p, check_evals(p).diagnostics) for p in sorted(root.glob("tests/eval_cases/*/*.yaml"))]
for path, diagnostics in found:
    for d in normalize(diagnostics):
        line = f"{path.relative_to(root)} {d.code} {d.span} {d.message} {d.hint}"
        print(re.sub(r"/proc/[0-9]+/", "/proc/PID/", line))  # a case names its own process
print(len(found), "files")
"""


@pytest.mark.slow
def test_every_case_reads_the_same_with_the_validators_built_loaded_or_uncached(
        tmp_path: Path) -> None:
    """Every golden case, shipped spec, scenario and eval file: the diagnostics of a process
    that builds and stores the validators, one that loads them, and one without the cache."""
    def run(cache: Path | str) -> str:
        env = {**os.environ, "AGENTSPEC_CACHE_DIR": str(cache)}
        return subprocess.run([sys.executable, "-c", _EVERY_CASE, str(ROOT)], cwd=ROOT,
                              capture_output=True, text=True, env=env, check=True).stdout

    built = run(tmp_path)
    assert {p.name.split("-")[0] for p in _entries(tmp_path)} >= {"spec", "scenario_file"}
    assert int(built.split()[-2]) > 200 and "Did you mean" in built
    assert run(tmp_path) == built
    assert run("") == built
