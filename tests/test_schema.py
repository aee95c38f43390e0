"""The committed JSON Schema, the shipped specs against it, and the diagnostic code registry."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from agentspec.diagnostics import REGISTRY, Severity, lookup
from agentspec.language.schema import SCHEMA_ID, json_schema, schema_text
from agentspec.parse import load

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_FILE = ROOT / "schemas" / "agentspec.schema.json"
MODELINE = "# yaml-language-server: $schema="


def candidate_files() -> list[Path]:
    """`specs/*.yaml` and `examples/*/*.yaml`."""
    return sorted([*ROOT.glob("specs/*.yaml"), *ROOT.glob("examples/*/*.yaml")])


@cache
def _data(path: Path) -> Any:
    parsed = load(path)
    return parsed.value if parsed.ok else None


def _imported() -> set[Path]:
    """Files some candidate imports: fragments, not specs of their own."""
    found: set[Path] = set()
    for path in candidate_files():
        data = _data(path)
        imports = data.get("imports") if isinstance(data, dict) else None
        for entry in imports if isinstance(imports, list) else []:
            if isinstance(entry, str):
                found.add((path.parent / entry).resolve())
    return found


def spec_files() -> list[Path]:
    """Candidates that are specs: fragments (no `agentspec:`, or imported by another) skipped."""
    imported = _imported()
    specs = []
    for path in candidate_files():
        data = _data(path)
        if isinstance(data, dict) and "agentspec" not in data:
            continue
        if path.resolve() in imported:
            continue
        specs.append(path)
    return specs


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(ROOT)) for p in paths]


SPECS = spec_files()


# --- (a) the committed schema is current ----------------------------------------------------


def test_committed_schema_is_current() -> None:
    assert SCHEMA_FILE.is_file(), "run `agentspec schema > schemas/agentspec.schema.json`"
    committed = SCHEMA_FILE.read_text(encoding="utf-8")
    assert committed == schema_text(), (
        "schemas/agentspec.schema.json is stale: "
        "run `agentspec schema > schemas/agentspec.schema.json`"
    )


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == SCHEMA_ID
    assert schema == json_schema()


def test_schema_text_is_stable() -> None:
    assert schema_text() == schema_text()
    assert schema_text().endswith("}\n")


# --- (b) shipped specs validate against the committed schema --------------------------------


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))


def test_there_are_specs_to_check() -> None:
    """The one spec per pattern that the project ships, and at least one example."""
    names = {p.name for p in SPECS if p.parent.name == "specs"}
    assert {"research_desk.yaml", "planner.yaml", "support_router.yaml", "deep_agent.yaml",
            "offline_jobs.yaml", "pipeline.yaml"} <= names
    assert any(p.parent.parent.name == "examples" for p in SPECS)


@pytest.mark.parametrize("path", SPECS, ids=_ids(SPECS))
def test_spec_validates_against_committed_schema(
        path: Path, validator: jsonschema.Draft202012Validator) -> None:
    parsed = load(path)
    assert parsed.ok, [(d.code, d.message) for d in parsed.diagnostics]
    errors = sorted(validator.iter_errors(parsed.value), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(
        f"{'.'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors[:10]
    )


# --- (c) every spec carries the schema modeline ---------------------------------------------


@pytest.mark.parametrize("path", SPECS, ids=_ids(SPECS))
def test_spec_starts_with_schema_modeline(path: Path) -> None:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith(MODELINE), f"{path.name} must start with `{MODELINE}...`"
    target = first[len(MODELINE):].strip()
    if target != SCHEMA_ID:
        assert (path.parent / target).resolve() == SCHEMA_FILE.resolve(), (
            f"the modeline of {path.name} points at {target}, not the committed schema"
        )


# --- (d) `agentspec validate specs/*.yaml` passes -------------------------------------------


def test_validate_shipped_specs_exits_0() -> None:
    done = subprocess.run([sys.executable, "-m", "agentspec", "validate", "specs/*.yaml"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_validate_examples_exits_0() -> None:
    examples = [str(p.relative_to(ROOT)) for p in SPECS if p.parent.parent.name == "examples"]
    done = subprocess.run([sys.executable, "-m", "agentspec", "validate", *examples],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


# --- (e) the code registry ------------------------------------------------------------------


def test_registry_is_not_empty() -> None:
    assert len(REGISTRY) > 10


@pytest.mark.parametrize("code", list(REGISTRY))
def test_code_entry_is_well_formed(code: str) -> None:
    entry = REGISTRY[code]
    assert entry.code == code
    assert re.fullmatch(r"AS\d{3}", code)
    assert code[2] in "01234567", "stages are 0xx..7xx"
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", entry.name), entry.name
    assert entry.explanation.strip()
    assert entry.summary.strip()
    assert isinstance(entry.severity, Severity)
    assert lookup(code) is entry
    assert lookup(entry.name) is entry


def test_code_numbers_and_names_are_unique() -> None:
    numbers = [int(code[2:]) for code in REGISTRY]
    assert len(numbers) == len(set(numbers))
    names = [entry.name for entry in REGISTRY.values()]
    assert len(names) == len(set(names))
    assert list(REGISTRY) == sorted(REGISTRY)
