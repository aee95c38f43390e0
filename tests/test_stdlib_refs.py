"""A python reference may not reach the standard library by any path (issue 12, item 9):
validate follows it through the source of the modules it names, build checks the object."""

from __future__ import annotations

import textwrap
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentspec.compiler import build_objects, compile_spec
from agentspec.validate.check import check
from tests.buildkit import purge

MYTOOLS = """\
import os
import subprocess as sp
from os import system
from shutil import *
import helpers
try:
    import ujson as json
except ImportError:
    import json
run_it = sp.run
logger = __import__("logging").getLogger("agentspec-test")
hidden = getattr(os, "system")


def ok(text: str) -> str:
    \"\"\"Echo.\"\"\"
    return text
"""
HELPERS = "from os.path import join as j\n"


def _spec(*refs: str) -> str:
    tools = "".join(f"      - {{python: '{ref}'}}\n" for ref in refs)
    return ("agentspec: 1\nname: app\nagents:\n  main:\n    model: gemini-2.5-flash\n"
            f"    instruction: Hi.\n    tools:\n{tools}")


STATIC = ["mytools:os.system", "mytools:sp.run", "mytools:system", "mytools:rmtree",
          "mytools:helpers.j", "mytools:json.loads", "mytools:run_it", "mytools:os.path.join",
          "mytools:helpers.j.__call__"]


def test_references_through_a_module_into_the_standard_library_are_refused(
        check_yaml: Callable[..., Any]) -> None:
    result = check_yaml(_spec(*STATIC, "mytools:ok"),
                        {"mytools.py": MYTOOLS, "helpers.py": HELPERS})
    assert [(d.span.start.line, d.code) for d in result.diagnostics if d.span] == [
        (8 + index, "AS221") for index in range(len(STATIC))]


@pytest.mark.parametrize("ref", ["mytools:logger.info", "mytools:hidden", *STATIC[:3]])
def test_build_refuses_what_turns_out_to_be_the_standard_library(
        ref: str, spec_dir: Callable[..., Path]) -> None:
    path = spec_dir(_spec(ref), {"mytools.py": MYTOOLS, "helpers.py": HELPERS})
    compiled = compile_spec(path, environ={})
    if not compiled.ok:  # validate saw it already
        assert [d.code for d in compiled.diagnostics] == ["AS221"]
        compiled.diagnostics = []
        assert compiled.plan is None
        return
    try:
        app, problems = build_objects(compiled)
    finally:
        purge("mytools")
        purge("helpers")
    assert app is None and [d.code for d in problems] == ["AS408"]


def test_a_reference_to_your_own_function_builds(spec_dir: Callable[..., Path]) -> None:
    path = spec_dir(_spec("mytools:ok"), {"mytools.py": MYTOOLS, "helpers.py": HELPERS})
    compiled = compile_spec(path, environ={})
    assert compiled.ok, compiled.diagnostics
    try:
        app, problems = build_objects(compiled)
    finally:
        purge("mytools")
        purge("helpers")
    assert problems == [] and app is not None


# --- the property: however the modules pass the name along --------------------------------

HOPS = st.lists(st.sampled_from(["import", "alias", "assign", "from", "star"]), min_size=1,
                max_size=4)


def _modules(prefix: str, hops: list[str], stdlib: bool) -> tuple[dict[str, str], str]:
    """Modules that pass a name along `hops` to `os.system` (or to a function of the last
    module), and the reference that reaches it from the first one."""
    count = len(hops)
    names = [f"{prefix}_m{i}" for i in range(count)] + (
        ["os"] if stdlib else [f"{prefix}_m{count}"])
    files: dict[str, str] = {}
    if not stdlib:
        files[names[-1]] = 'def target(text: str) -> str:\n    """Echo."""\n    return text\n'
    rest: tuple[str, ...] = ("system",) if stdlib else ("target",)
    for i in reversed(range(count)):
        following, form = names[i + 1], hops[i]
        code = {"import": f"import {following}\n", "alias": f"import {following} as a{i}\n",
                "assign": f"import {following} as _n{i}\nb{i} = _n{i}\n",
                "from": f"from {following} import {rest[0]} as c{i}\n",
                "star": f"from {following} import *\n"}[form]
        files[names[i]] = code + "\n\ndef unrelated() -> None:\n    pass\n"
        rest = {"import": (following, *rest), "alias": (f"a{i}", *rest),
                "assign": (f"b{i}", *rest), "from": (f"c{i}", *rest[1:]),
                "star": rest}[form]
    return files, f"{names[0]}:{'.'.join(rest)}"


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(hops=HOPS, stdlib=st.booleans())
def test_a_name_passed_along_any_chain_of_modules_is_judged_by_where_it_lands(
        tmp_path: Path, hops: list[str], stdlib: bool) -> None:
    prefix = f"p{uuid.uuid4().hex[:10]}"
    directory = tmp_path / prefix
    directory.mkdir()
    files, ref = _modules(prefix, hops, stdlib)
    for module, text in files.items():
        (directory / f"{module}.py").write_text(textwrap.dedent(text))
    (directory / "spec.yaml").write_text(_spec(ref))
    result = check(directory / "spec.yaml", environ={})
    assert [d.code for d in result.diagnostics] == (["AS221"] if stdlib else []), (ref, files)
    if stdlib:
        return
    compiled = compile_spec(directory / "spec.yaml", environ={})
    try:
        app, problems = build_objects(compiled)
    finally:
        for module in files:
            purge(module)
    assert problems == [] and app is not None
