"""Semantic checks whose hints matter as much as their positions."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import located


@pytest.mark.parametrize(("tool", "field"), [
    ("ls", "`filesystem:"), ("execute", "`filesystem:"), ("write_todos", "`todos: true`"),
    ("task", "`task:`"), ("list_skills", "`skills:`"),
    ("google_search", "{builtin: google_search}"),
])
def test_a_harness_tool_in_tools_names_the_field_that_gives_it(
        check_yaml: Any, tool: str, field: str) -> None:
    result = check_yaml(f"""\
        agentspec: 1
        name: demo
        agents:
          main:
            instruction: Help.
            model: gemini-2.5-flash
            tools: [{tool}]
        """)
    assert located(result) == [("spec.yaml", 7, 13, "AS203")]
    hint = result.diagnostics[0].hint or ""
    assert field in hint, hint


# --- state and placeholders ---------------------------------------------------------------

def codes_of(result: Any) -> list[tuple[int, str]]:
    return [(line, code) for _, line, _, code in located(result)]


def test_a_placeholder_nothing_provides_is_an_error_naming_the_closest_key(
        check_yaml: Any) -> None:
    result = check_yaml("""\
        agentspec: 1
        name: demo
        state: {topic: tides}
        agents:
          main:
            instruction: "Explain {topc}."
            model: gemini-2.5-flash
        """)
    assert located(result) == [("spec.yaml", 6, 27, "AS223")]
    assert not result.ok and "Did you mean `topic`" in (result.diagnostics[0].hint or "")


def test_without_a_close_key_the_hint_says_how_to_declare_state_code_sets(
        check_yaml: Any) -> None:
    result = check_yaml("""\
        agentspec: 1
        name: demo
        agents:
          main: {instruction: "Use {ticket}.", model: gemini-2.5-flash}
        """)
    hint = result.diagnostics[0].hint or ""
    assert codes_of(result) == [(4, "AS223")]
    assert "`state:`" in hint and "tool or callback" in hint and "`{ticket?}`" in hint


def test_declared_written_optional_and_escaped_keys_are_fine(check_yaml: Any) -> None:
    result = check_yaml("""\
        agentspec: 1
        name: demo
        state: {topic: tides, "user:language": English, "app:brand": Acme}
        agents:
          flow: {kind: sequential, sub_agents: [notes, main]}
          notes: {instruction: Take notes., model: gemini-2.5-flash, output_key: notes}
          main:
            model: gemini-2.5-flash
            instruction: >-
              {topic} {user:language} {app:brand} {notes} {maybe?} {temp:scratch}
              {{literal}} {artifact.report} {"json": 1}
        """)
    assert result.diagnostics == []


def test_undeclared_prefixed_keys_are_checked_too(check_yaml: Any) -> None:
    result = check_yaml("""\
        agentspec: 1
        name: demo
        state: {"user:language": English}
        agents:
          main: {instruction: "In {user:languag}.", model: gemini-2.5-flash}
        """)
    assert codes_of(result) == [(5, "AS223")]
    assert "Did you mean `user:language`" in (result.diagnostics[0].hint or "")


def test_state_keys_values_and_a_broken_state_without_a_cascade(check_yaml: Any) -> None:
    result = check_yaml("""\
        agentspec: 1
        name: demo
        state:
          topic: tides
          temp:scratch: 1
          bad key: 2
          ratio: .nan
          nested: {xs: [1, .inf]}
        agents:
          main: {instruction: "{topic} {ratio} {nested}", model: gemini-2.5-flash}
        """)
    assert codes_of(result) == [(5, "AS110"), (6, "AS110"), (7, "AS104"), (8, "AS104")]
    assert "`temp:`" in result.diagnostics[0].message
    broken = check_yaml("""\
        agentspec: 1
        name: demo
        state: [topic]
        agents:
          main: {instruction: "{topic}", model: gemini-2.5-flash}
        """)
    assert codes_of(broken) == [(3, "AS103")]  # no AS223: the state could not be read


def test_environments_change_the_state_validate_sees(check_yaml: Any) -> None:
    text = """\
        agentspec: 1
        name: demo
        state: {topic: tides}
        agents:
          main: {instruction: "{topic} {region}", model: gemini-2.5-flash}
        environments:
          eu: {state: {region: eu}}
          bare: {state: {topic: null, region: x}}
        """
    assert check_yaml(text, environment="eu").ok
    base = check_yaml(text)  # `{region}` undeclared; `bare` removes `topic` (col 24)
    assert [(col, code, d.message.endswith("(in environment `bare`)")) for (_, _, col, code), d
            in zip(located(base), base.diagnostics, strict=True)] == [
        (24, "AS223", True), (32, "AS223", False)]


def test_an_imported_files_state_is_ignored_with_a_warning(check_yaml: Any) -> None:
    result = check_yaml("""\
        agentspec: 1
        name: demo
        imports: [./lib.yaml]
        agents:
          main: {instruction: Hi., model: gemini-2.5-flash}
        """, files={"lib.yaml": "agentspec: 1\nstate: {topic: x}\n"})
    assert [(d.code, d.span.file if d.span else "") for d in result.diagnostics] == [
        ("AS303", "lib.yaml")]


def test_vars_interpolate_into_state_values(spec_dir: Any) -> None:
    from agentspec.compiler import compile_spec

    path = spec_dir("""\
        agentspec: 1
        name: demo
        vars: {n: 3, who: Acme}
        state: {rounds: "${vars.n}", greeting: "Hi from ${vars.who}", key: "${env.K:-d}"}
        agents:
          main: {instruction: "{rounds} {greeting} {key}", model: gemini-2.5-flash}
        """)
    compiled = compile_spec(path, environ={})
    assert compiled.app is not None
    assert dict(compiled.app.state) == {"rounds": 3, "greeting": "Hi from Acme",
                                        "key": "${env.K:-d}"}


def test_a_planners_worker_and_synthesizer_instructions_are_checked(check_yaml: Any) -> None:
    result = check_yaml("""\
        agentspec: 1
        name: demo
        state: {audience: experts}
        agents:
          plan:
            kind: planner
            model: gemini-2.5-flash
            worker: {instruction: "Write for {audience}."}
            synthesizer: {instruction: "Merge for {audiense}."}
        """)
    assert codes_of(result) == [(9, "AS223")]


def test_a_routers_default_fallback_map_and_model_are_references(check_yaml: Any) -> None:
    result = check_yaml("""\
        agentspec: 1
        name: demo
        agents:
          front:
            kind: router
            sub_agents: [a]
            route: {state: pick, map: {x: nobody}}
            default: nobdy
            fallback: [noone]
          back:
            kind: router
            sub_agents: [a]
            route: {model: fast_model}
          a: {model: gemini-2.5-flash, instruction: hi}
        """)
    references = [(line, code) for line, code in codes_of(result) if code in ("AS201", "AS202")]
    assert sorted(references) == [(7, "AS201"), (8, "AS201"), (9, "AS201"), (13, "AS202")]


def test_a_routers_python_route_is_a_python_reference(check_yaml: Any) -> None:
    result = check_yaml("""\
        agentspec: 1
        name: demo
        agents:
          front:
            kind: router
            sub_agents: [a]
            route: {python: "not a ref"}
          a: {model: gemini-2.5-flash, instruction: hi}
        """)
    assert (7, "AS220") in codes_of(result)


def test_a_planners_role_models_and_worker_tools_are_references(check_yaml: Any) -> None:
    result = check_yaml("""\
        agentspec: 1
        name: demo
        agents:
          plan:
            kind: planner
            model: big_model
            worker:
              model: small_model
              tools: [search, {python: "not a ref"}]
            synthesizer: {model: mid_model}
        """)
    assert sorted(codes_of(result)) == [(6, "AS202"), (8, "AS202"), (9, "AS203"),
                                        (9, "AS220"), (10, "AS202")]
