"""The runtime ABI: generated code imports from agentspec only what `runtime.abi` lists,
and a package refuses, with what to do, an installed agentspec of another ABI."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentspec.compiler import compile_spec, emit_package, write_package
from agentspec.ir.plan import Call, DictOf, Import, ListOf
from agentspec.runtime import abi
from tests.buildkit import buildable, compiled

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "weather" / "agent.yaml"


def _imports(value: Any) -> Iterator[Import]:
    if isinstance(value, Import):
        yield value
    elif isinstance(value, Call):
        yield from _imports(value.callee)
        for item in (*value.args, *(v for _, v in value.kwargs)):
            yield from _imports(item)
    elif isinstance(value, (ListOf, DictOf)):
        for item in value.items:
            yield from _imports(item[1] if isinstance(item, tuple) else item)


def test_generated_code_imports_only_listed_runtime_names() -> None:
    used: set[tuple[str, str]] = set()
    for path in buildable():
        plan = compiled(path).plan
        assert plan is not None
        for binding in plan.bindings:
            used |= {(i.module, i.top) for i in _imports(binding.value)
                     if i.module.startswith("agentspec")}
    assert used, "the shipped specs use the runtime"
    unlisted = {(m, n) for m, n in used if n not in abi.NAMES.get(m, frozenset())}
    assert not unlisted, f"add these to agentspec.runtime.abi.NAMES (and think of ABI): {unlisted}"


def test_every_listed_name_exists() -> None:
    for module, names in abi.NAMES.items():
        loaded = importlib.import_module(module)
        for name in names:
            assert hasattr(loaded, name), (module, name)


def test_require_names_what_to_do() -> None:
    abi.require(abi.ABI)
    abi.require(abi.OLDEST)  # an older package whose names and calls are all still here
    with pytest.raises(abi.AbiMismatch, match="is older: upgrade agentspec "
                                              r"\(pip install -U agentspec-adk\)"):
        abi.require(abi.ABI + 1, "desk", "9.9")
    with pytest.raises(abi.AbiMismatch, match="is newer: rebuild the package"):
        abi.require(abi.OLDEST - 1, "desk")


def test_a_package_of_another_abi_refuses_to_import(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    result = compile_spec(EXAMPLE, environ={})
    assert result.ok and result.plan is not None
    assert write_package(emit_package(result, tmp_path), tmp_path) == []
    name = result.plan.app_name
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(abi, "ABI", abi.ABI + 1)  # the installed agentspec is newer
    monkeypatch.setattr(abi, "OLDEST", abi.ABI)  # ... and runs no package of this ABI
    try:
        with pytest.raises(abi.AbiMismatch, match="rebuild the package"):
            importlib.import_module(name)
    finally:
        for module in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
            del sys.modules[module]
