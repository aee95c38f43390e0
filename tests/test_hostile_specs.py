"""Hostile sizes get a diagnostic, never a traceback or a runaway: variables that expand
geometrically, numbers with thousands of digits, agent trees thousands deep or wide."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentspec.check import CheckResult, check
from agentspec.resolve.interpolate import MAX_EXPANSION

Check = Callable[..., CheckResult]
SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


def _strings(value: Any) -> int:
    """Characters in every string of `value`."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(_strings(k) + _strings(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(_strings(v) for v in value)
    return 0


def _nested_vars(levels: int, uses: int, seed: str = "xxxxxxxxxx") -> str:
    lines = ["agentspec: 1", "name: bomb", "vars:", f"  v0: '{seed}'"]
    lines += [f"  v{i}: '" + f"${{vars.v{i - 1}}}" * uses + "'" for i in range(1, levels + 1)]
    lines += ["agents:", "  main:", "    model: gemini-2.5-flash",
              f"    instruction: '${{vars.v{levels}}}'",
              f"    description: '${{vars.v{levels}}} ${{vars.v{levels}}}'"]
    return "\n".join(lines) + "\n"


# --- ${vars} expansion (item 6) -------------------------------------------------------------


def test_nine_levels_of_ten_variables_are_stopped(check_yaml: Check) -> None:
    """1 KB that used to grow past 10 GB."""
    text = _nested_vars(9, 10)
    assert len(text) < 1200
    result = check_yaml(text)
    assert [d.code for d in result.diagnostics] == ["AS311"]
    assert result.document is not None
    assert _strings(result.document.data) <= len(text) + 2 * MAX_EXPANSION


def test_many_uses_of_one_large_variable_are_stopped(check_yaml: Check) -> None:
    big = "y" * 200_000
    agents = "\n".join(f"  a{i}: {{model: gemini-2.5-flash, instruction: '${{vars.big}}'}}"
                       for i in range(40))
    result = check_yaml(f"agentspec: 1\nname: app\nroot: a0\nvars:\n  big: '{big}'\n"
                        f"agents:\n{agents}\n")
    assert "AS311" in [d.code for d in result.diagnostics]


def test_variables_that_expand_a_little_are_fine(check_yaml: Check) -> None:
    result = check_yaml(_nested_vars(3, 10))
    assert [d.code for d in result.diagnostics] == []
    assert result.spec is not None
    assert result.spec.agents["main"].instruction == "x" * 10_000  # type: ignore[union-attr]


@SETTINGS
@given(levels=st.integers(1, 12), uses=st.integers(1, 12), seed=st.text("ab", max_size=30))
def test_variables_expand_exactly_or_stop_at_the_cap(tmp_path: Path, levels: int, uses: int,
                                                     seed: str) -> None:
    path = tmp_path / "spec.yaml"
    text = _nested_vars(levels, uses, seed)
    path.write_text(text)
    result = check(path, environ={})
    assert result.document is not None
    assert _strings(result.document.data) <= len(text) + 2 * MAX_EXPANSION
    if "AS311" not in [d.code for d in result.diagnostics]:
        expanded = seed * uses ** levels
        assert result.document.data["agents"]["main"]["instruction"] == expanded


@pytest.mark.parametrize("environment", ["prod"])
def test_an_overlay_is_capped_too(check_yaml: Check, environment: str) -> None:
    text = _nested_vars(2, 10) + "environments:\n  prod:\n    vars:\n" + "".join(
        f"      v{i}: '" + f"${{vars.v{i - 1}}}" * 10 + "'\n" for i in range(1, 10))
    result = check_yaml(text, environment=environment)
    assert "AS311" in [d.code for d in result.diagnostics]
