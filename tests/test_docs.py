"""The documentation: generated pages current, every schema field documented, no broken or
outside link, and the site builds with `mkdocs build --strict`."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from agentspec.language.schema import json_schema
from agentspec.testing.schema import scenario_json_schema

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
LANGUAGE = DOCS / "language"
PAGES = sorted(DOCS.rglob("*.md"))
LINKED = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *PAGES]

FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
TAG = re.compile(r"<!-- fields: ([A-Za-z ]+) -->\n((?:\|.*\n)+)")
ROW = re.compile(r"^\|\s*`([a-z_]+)`\s*\|", re.M)


def _tools_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tools_docs", ROOT / "tools" / "docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_reference_pages_are_current() -> None:
    assert _tools_docs().stale() == [], "run `python tools/docs.py`"


def documented_fields() -> dict[str, set[str]]:
    """Fields the language reference documents, per schema object, from its tagged tables."""
    found: dict[str, set[str]] = {}
    for page in sorted(LANGUAGE.glob("*.md")):
        for objects, table in TAG.findall(page.read_text(encoding="utf-8")):
            rows = set(ROW.findall(table))
            assert rows, f"{page.name}: an empty field table for {objects}"
            for name in objects.split():
                found.setdefault(name, set()).update(rows)
    return found


def test_every_field_of_the_schema_is_documented_in_the_language_reference() -> None:
    """The spec's schema and the scenario file's (docs/language/scenarios.md)."""
    spec_fields = _tools_docs().schema_fields(json_schema())
    scenario_fields = _tools_docs().schema_fields(scenario_json_schema())
    scenario_fields.pop("Spec")  # the scenario file's top level is a union, no object
    assert not spec_fields.keys() & scenario_fields.keys()
    schema = {**spec_fields, **scenario_fields}
    documented = documented_fields()
    missing = {name: sorted(set(fields) - documented.get(name, set()))
               for name, fields in schema.items()}
    extra = {name: sorted(fields - set(schema.get(name, ())))
             for name, fields in documented.items()}
    assert {k: v for k, v in missing.items() if v} == {}, "document these fields in docs/language/"
    assert {k: v for k, v in extra.items() if v} == {}, "these documented fields do not exist"
    total_schema = sum(len(fields) for fields in schema.values())
    total_documented = sum(len(documented[name]) for name in schema)
    assert total_documented == total_schema
    print(f"{total_documented} documented fields = {total_schema} schema fields "
          f"in {len(schema)} objects")


def _links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)
    return LINK.findall(text)


@pytest.mark.parametrize("page", LINKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves_inside_the_repository(page: Path) -> None:
    for target in _links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            assert target.startswith("https://"), f"{target}: only https links leave the repo"
            continue
        path = target.split("#", 1)[0]
        if not path:
            continue
        resolved = (page.parent / path).resolve()
        assert resolved.is_relative_to(ROOT), f"{target} leaves the repository"
        assert resolved.exists(), f"{target} does not exist"
        if page.is_relative_to(DOCS):
            assert resolved.is_relative_to(DOCS), f"{target}: a docs page links outside docs/"


def test_the_link_check_finds_broken_and_outside_links(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("[a](x.md) ![img](y.png) `[b](z.md)`\n```\n[c](w.md)\n```\n"
                    "[d](../../shared/design/spec-language.md#x)\n", encoding="utf-8")
    assert _links(page) == ["x.md", "../../shared/design/spec-language.md#x"]


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                           "--site-dir", str(tmp_path / "site")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "language" / "agents" / "index.html").is_file()
