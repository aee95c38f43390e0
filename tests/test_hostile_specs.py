"""Hostile sizes get a diagnostic, never a traceback or a runaway: variables that expand
geometrically, numbers with thousands of digits, agent trees thousands deep or wide."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentspec.cli import cli
from agentspec.compiler import build_objects, compile_spec
from agentspec.resolve.interpolate import MAX_EXPANSION
from agentspec.review.graph import graph
from agentspec.validate.check import CheckResult, check
from agentspec.validate.semantic.tree import MAX_AGENT_DEPTH, MAX_AGENTS_BUILT

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


def test_an_overlay_is_capped_too(check_yaml: Check) -> None:
    text = _nested_vars(2, 10) + "environments:\n  prod:\n    vars:\n" + "".join(
        f"      v{i}: '" + f"${{vars.v{i - 1}}}" * 10 + "'\n" for i in range(1, 10))
    result = check_yaml(text, environment="prod")
    assert "AS311" in [d.code for d in result.diagnostics]


# --- numbers with thousands of digits (item 12) ---------------------------------------------


def test_a_five_thousand_digit_integer_is_a_diagnostic(check_yaml: Check) -> None:
    result = check_yaml("agentspec: 1\nname: app\nagents:\n  main:\n    model: gemini-2.5-flash\n"
                        "    instruction: Hi.\n    generate: {seed: " + "9" * 5000 + "}\n")
    assert [(d.span.start.line, d.span.start.col, d.code) for d in result.diagnostics
            if d.span] == [(7, 22, "AS016")]


def _number(sign: str, prefix: str, digits: str, underscores: bool) -> str:
    body = "_".join(digits[i:i + 3] for i in range(0, len(digits), 3)) if underscores \
        else digits
    return f"{sign}{prefix}{body}"


@SETTINGS
@given(sign=st.sampled_from(["", "-", "+"]), prefix=st.sampled_from(["", "0x", "0o", "0b"]),
       length=st.integers(1, 6000), underscores=st.booleans(),
       where=st.sampled_from(["generate: {seed: N}", "generate: {temperature: N}",
                              "tools: [{python: 'tools:make', args: {n: N}}]",
                              "output_key: N", "description: [N]"]))
def test_integers_of_any_length_never_raise(tmp_path: Path, sign: str, prefix: str,
                                            length: int, underscores: bool,
                                            where: str) -> None:
    digit = {"": "9", "0x": "f", "0o": "7", "0b": "1"}[prefix]
    number = _number(sign, prefix, digit * length, underscores and prefix == "")
    path = tmp_path / "spec.yaml"
    path.write_text("agentspec: 1\nname: app\nagents:\n  main:\n    model: gemini-2.5-flash\n"
                    f"    instruction: Hi.\n    {where.replace('N', number)}\n")
    result = check(path, environ={})
    assert ("AS016" in [d.code for d in result.diagnostics]) == (length > 100)


# --- agent trees thousands deep or wide (item 12) -------------------------------------------


def _chain(depth: int, kind: str = "sequential") -> str:
    lines = ["agentspec: 1", "name: deep", "root: a0", "agents:"]
    link = {"sequential": "sub_agents: [a{next}]", "llm": "tools: [{{agent: a{next}}}]"}[kind]
    extra = "kind: sequential, " if kind == "sequential" else \
        "model: gemini-2.5-flash, instruction: Hi, "
    lines += [f"  a{i}: {{{extra}{link.format(next=i + 1)}}}" for i in range(depth)]
    lines.append(f"  a{depth}: {{model: gemini-2.5-flash, instruction: Hi}}")
    return "\n".join(lines) + "\n"


def _shared(levels: int) -> str:
    """Each agent calls the next twice (a tool and `task`): 2 ** (levels + 1) - 1 agents."""
    lines = ["agentspec: 1", "name: wide", "root: a0", "agents:"]
    lines += [f"  a{i}: {{model: gemini-2.5-flash, instruction: Hi, tools: [{{agent: a{i + 1}}}],"
              f" task: {{agents: [a{i + 1}]}}}}" for i in range(levels)]
    lines.append(f"  a{levels}: {{model: gemini-2.5-flash, instruction: Hi}}")
    return "\n".join(lines) + "\n"


def test_two_thousand_nested_agents_are_a_diagnostic_at_the_limit(check_yaml: Check) -> None:
    result = check_yaml(_chain(2000))
    assert [(d.span.start.line, d.span.start.col, d.code) for d in result.diagnostics
            if d.span] == [(4 + MAX_AGENT_DEPTH + 1, 41, "AS240")]


@pytest.mark.slow
@pytest.mark.parametrize("command", ["build", "graph", "diff"])
def test_build_graph_and_diff_of_a_deep_tree_give_the_diagnostic(
        command: str, spec_dir: Callable[..., Path]) -> None:
    path = spec_dir(_chain(2000, "llm"))
    args = [command, str(path)] + ([str(path)] if command == "diff" else [])
    result = CliRunner().invoke(cli, args, prog_name="agentspec")
    assert result.exit_code == 1, result.output
    assert "AS240" in result.output and "internal error" not in result.output


@pytest.mark.parametrize("kind", ["sequential", "llm"])
def test_a_tree_at_the_depth_limit_builds_and_draws(kind: str,
                                                   spec_dir: Callable[..., Path]) -> None:
    path = spec_dir(_chain(MAX_AGENT_DEPTH, kind))
    compiled = compile_spec(path, environ={})
    assert compiled.ok, compiled.diagnostics
    assert compiled.app is not None
    assert len(graph(compiled.app).edges) == MAX_AGENT_DEPTH
    app, problems = build_objects(compiled)
    assert problems == [] and app is not None


def test_agents_shared_at_every_level_are_a_diagnostic(check_yaml: Check) -> None:
    result = check_yaml(_shared(30))  # 2 ** 30 agents to build
    assert [d.code for d in result.diagnostics] == ["AS241"]
    assert result.diagnostics[0].span is not None
    assert result.diagnostics[0].span.start.line == 5


@pytest.mark.slow
@settings(SETTINGS, max_examples=15)
@given(depth=st.integers(1, 250), shared=st.integers(1, 14))
def test_the_tree_limits_match_what_build_would_make(tmp_path: Path, depth: int,
                                                     shared: int) -> None:
    for text, too_big in ((_chain(depth), depth > MAX_AGENT_DEPTH),
                          (_shared(shared), 2 ** (shared + 1) - 1 > MAX_AGENTS_BUILT)):
        path = tmp_path / "spec.yaml"
        path.write_text(text)
        compiled = compile_spec(path, environ={})
        assert (not compiled.ok) == too_big, compiled.diagnostics
        if compiled.app is not None:  # what build makes stays within what validate allowed
            assert len(graph(compiled.app).edges) < MAX_AGENTS_BUILT
