"""Resolution behaviour: imports, extends, defaults, interpolation and environment overlays."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentspec.validate.check import CheckResult
from tests.conftest import located

Check = Callable[..., CheckResult]


def data(result: CheckResult) -> dict[str, Any]:
    assert result.document is not None, result.diagnostics
    return result.document.data


def codes(result: CheckResult) -> list[str]:
    return [d.code for d in result.diagnostics]


# --- imports --------------------------------------------------------------------------------


def test_imports_merge_relative_to_the_importing_file(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        imports: [./lib/tools.yaml]
        agents:
          main: {instruction: Hi, model: gemini-2.5-flash, tools: [search, fetch]}
        """,
        files={
            # `./more.yaml` is relative to lib/tools.yaml, not to the main spec
            "lib/tools.yaml": """\
                agentspec: 1
                imports: [./more.yaml]
                tools:
                  search: {builtin: google_search}
                """,
            "lib/more.yaml": """\
                agentspec: 1
                tools:
                  fetch: {python: my_tools:fetch}
                """,
            "more.yaml": "agentspec: 1\ntools:\n  wrong: {builtin: url_context}\n",
        },
    )
    assert set(data(result)["tools"]) == {"search", "fetch"}
    assert "AS301" not in codes(result)
    assert "lib/tools.yaml" in result.sources
    assert "lib/more.yaml" in result.sources


def test_imported_definition_keeps_its_own_position(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        imports: [./lib.yaml]
        agents:
          main: {instruction: Hi, model: gemini-2.5-flash, tools: [search]}
        """,
        files={"lib.yaml": "agentspec: 1\ntools:\n  search: {builtin: nope}\n"},
    )
    assert ("lib.yaml", 3, 21, "AS104") in located(result)


def test_missing_import_points_at_the_entry(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        imports:
          - ./missing.yaml
        agents:
          main: {instruction: Hi, model: gemini-2.5-flash}
        """
    )
    assert located(result) == [("spec.yaml", 4, 5, "AS301")]


def test_diamond_import_is_merged_once(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        imports: [./a.yaml, ./b.yaml]
        agents:
          main: {instruction: Hi, model: gemini-2.5-flash, tools: [shared]}
        """,
        files={
            "a.yaml": "agentspec: 1\nimports: [./c.yaml]\n",
            "b.yaml": "agentspec: 1\nimports: [./c.yaml]\n",
            "c.yaml": "agentspec: 1\ntools:\n  shared: {builtin: google_search}\n",
        },
    )
    assert result.ok, located(result)
    assert located(result) == []
    assert list(data(result)["tools"]) == ["shared"]


def test_import_cycle(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        imports: [./a.yaml]
        agents:
          main: {instruction: Hi, model: gemini-2.5-flash}
        """,
        files={
            "a.yaml": "agentspec: 1\nimports: [./b.yaml]\n",
            "b.yaml": "agentspec: 1\nimports: [./a.yaml]\n",
        },
    )
    assert located(result) == [("b.yaml", 2, 11, "AS302")]


def test_duplicate_name_across_import(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        imports: [./lib.yaml]
        tools:
          search: {builtin: google_search}
        agents:
          main: {instruction: Hi, model: gemini-2.5-flash, tools: [search]}
        """,
        files={"lib.yaml": "agentspec: 1\ntools:\n  search: {builtin: url_context}\n"},
    )
    assert located(result) == [("lib.yaml", 3, 3, "AS205")]
    (diag,) = result.diagnostics
    assert [(r.span.file, r.span.start.line, r.span.start.col) for r in diag.related] == [
        ("spec.yaml", 5, 3)
    ]
    # the main spec's definition wins
    assert data(result)["tools"]["search"] == {"builtin": "google_search"}


def test_import_ignored_key_is_a_warning(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        imports: [./lib.yaml]
        agents:
          main: {instruction: Hi, model: gemini-2.5-flash}
        """,
        files={"lib.yaml": "agentspec: 1\nroot: other\n"},
    )
    assert located(result) == [("lib.yaml", 2, 1, "AS303")]
    assert result.ok


# --- extends and defaults -------------------------------------------------------------------


def test_extends_copies_fields_but_not_sub_agents(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        root: base
        agents:
          base:
            description: The base.
            instruction: Be brief.
            model: gemini-2.5-flash
            output_key: answer
            sub_agents: [helper]
            tools: [{builtin: google_search}]
          helper: {instruction: Help., model: gemini-2.5-flash}
          child:
            extends: base
            model: gemini-2.5-pro
            output_key: other
          holder: {instruction: Hold., model: gemini-2.5-flash, sub_agents: [child]}
        """
    )
    agents = data(result)["agents"]
    child = agents["child"]
    assert child["instruction"] == "Be brief."
    assert child["description"] == "The base."
    assert child["tools"] == [{"builtin": "google_search"}]
    assert child["model"] == "gemini-2.5-pro"  # its own field wins
    assert child["output_key"] == "other"
    assert "sub_agents" not in child
    # `helper` keeps a single parent: extends did not copy it under `child`
    assert "AS207" not in codes(result)
    # the base is not changed
    assert agents["base"]["model"] == "gemini-2.5-flash"


def test_extends_copy_is_independent_of_the_base(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        root: a
        agents:
          a: {instruction: A., model: gemini-2.5-flash, sub_agents: [b]}
          b: {extends: a, tools: [{builtin: google_search}]}
        """
    )
    agents = data(result)["agents"]
    assert agents["b"]["instruction"] == "A."
    assert "tools" not in agents["a"]


def test_extends_chain_and_unknown_base(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        root: top
        agents:
          top: {instruction: T., model: gemini-2.5-flash, sub_agents: [mid, low, bad]}
          mid: {extends: top, description: Mid.}
          low: {extends: mid}
          bad: {extends: tpo, instruction: B.}
        """
    )
    agents = data(result)["agents"]
    assert agents["low"]["instruction"] == "T."
    assert agents["low"]["description"] == "Mid."
    assert ("spec.yaml", 8, 18, "AS201") in located(result)


def test_extends_cycle(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        root: a
        agents:
          a: {instruction: A., extends: b, model: gemini-2.5-flash}
          b: {instruction: B., extends: a, model: gemini-2.5-flash}
        """
    )
    assert "AS308" in codes(result)


def test_defaults_apply_only_to_llm_and_deep_agents(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        root: flow
        defaults:
          model: gemini-2.5-flash
          todos: true
        agents:
          flow: {kind: sequential, sub_agents: [plain, deep, loop, plan]}
          plain: {instruction: P.}
          deep: {kind: deep, instruction: D.}
          loop: {kind: loop, max_iterations: 2, sub_agents: [inner]}
          inner: {instruction: I., tools: [{builtin: exit_loop}]}
          plan: {kind: planner, model: gemini-2.5-pro}
        """
    )
    assert result.ok, located(result)
    agents = data(result)["agents"]
    for name in ("plain", "deep", "inner"):
        assert agents[name]["model"] == "gemini-2.5-flash", name
        assert agents[name]["todos"] is True, name
    for name in ("flow", "loop"):
        assert "model" not in agents[name]
        assert "todos" not in agents[name]
    assert agents["plan"]["model"] == "gemini-2.5-pro"
    assert "todos" not in agents["plan"]


def test_defaults_never_override_a_set_field(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        defaults:
          model: gemini-2.5-flash
          todos: true
        agents:
          main: {instruction: M., model: gemini-2.5-pro, todos: false}
        """
    )
    main = data(result)["agents"]["main"]
    assert main["model"] == "gemini-2.5-pro"
    assert main["todos"] is False
    assert result.spec is not None
    assert result.spec.agents["main"].model == "gemini-2.5-pro"


def test_defaults_value_is_reported_at_the_defaults(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        models: {fast: gemini-2.5-flash}
        defaults:
          model: fats
        agents:
          main: {instruction: M.}
        """
    )
    assert located(result) == [("spec.yaml", 5, 10, "AS202")]


# --- interpolation --------------------------------------------------------------------------


def test_vars_substitution_in_text(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        vars: {company: Acme, team: "${vars.company} research", n: 3}
        agents:
          main:
            instruction: "You work for ${vars.team}; make ${vars.n} points."
            model: gemini-2.5-flash
        """
    )
    assert result.ok, located(result)
    assert data(result)["agents"]["main"]["instruction"] == (
        "You work for Acme research; make 3 points."
    )


def test_whole_value_var_keeps_its_type(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        vars: {n: 3, hot: 0.5, flag: true}
        root: loop
        agents:
          loop:
            kind: loop
            max_iterations: ${vars.n}
            sub_agents: [worker]
          worker:
            instruction: W.
            model: gemini-2.5-flash
            generate: {temperature: "${vars.hot}"}
            disallow_transfer_to_peers: ${vars.flag}
            tools: [{builtin: exit_loop}]
        """
    )
    assert result.ok, located(result)
    agents = data(result)["agents"]
    assert agents["loop"]["max_iterations"] == 3
    assert type(agents["loop"]["max_iterations"]) is int
    assert agents["worker"]["generate"]["temperature"] == 0.5
    assert agents["worker"]["disallow_transfer_to_peers"] is True
    assert result.spec is not None
    assert result.spec.agents["loop"].max_iterations == 3  # type: ignore[union-attr]


def test_unknown_var_points_at_the_reference(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        vars: {company: Acme}
        agents:
          main: {instruction: "Hi ${vars.compnay}", model: gemini-2.5-flash}
        """
    )
    assert located(result) == [("spec.yaml", 5, 27, "AS304")]


def test_var_cycle(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        vars: {a: "${vars.b}", b: "${vars.a}"}
        agents:
          main: {instruction: Hi, model: gemini-2.5-flash}
        """
    )
    assert "AS309" in codes(result)


def test_env_stays_symbolic(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        tools:
          gh:
            mcp:
              command: npx
              env: {TOKEN: "${env.GITHUB_TOKEN}", MODE: "${env.MODE:-dev}"}
        agents:
          main: {instruction: "Key ${env.GITHUB_TOKEN}.", model: gemini-2.5-flash, tools: [gh]}
        """,
        environ={"GITHUB_TOKEN": "secret-value"},
    )
    assert result.ok, located(result)
    assert located(result) == []
    env = data(result)["tools"]["gh"]["mcp"]["env"]
    assert env == {"TOKEN": "${env.GITHUB_TOKEN}", "MODE": "${env.MODE:-dev}"}
    assert data(result)["agents"]["main"]["instruction"] == "Key ${env.GITHUB_TOKEN}."
    assert "secret-value" not in repr(data(result))


def test_unset_env_is_a_warning_at_the_reference(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        agents:
          main: {instruction: "Key ${env.MISSING_TOKEN}.", model: gemini-2.5-flash}
        """
    )
    assert located(result) == [("spec.yaml", 4, 28, "AS305")]
    assert result.ok
    assert data(result)["agents"]["main"]["instruction"] == "Key ${env.MISSING_TOKEN}."


def test_unset_env_with_default_is_fine(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        agents:
          main: {instruction: "Mode ${env.MODE:-dev}.", model: gemini-2.5-flash}
        """
    )
    assert located(result) == []


def test_escaped_dollar_brace_stays_as_is(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        vars: {x: X}
        agents:
          main: {instruction: "Literal $${vars.x} and ${vars.x}", model: gemini-2.5-flash}
        """
    )
    assert located(result) == []
    assert data(result)["agents"]["main"]["instruction"] == "Literal $${vars.x} and X"


@pytest.mark.parametrize("text", ["${nope}", "${vars.}", "open ${vars.x", "${env.1BAD}"])
def test_bad_interpolation(check_yaml: Check, text: str) -> None:
    result = check_yaml(
        f"""\
        agentspec: 1
        name: app
        vars: {{x: X}}
        agents:
          main: {{instruction: "{text}", model: gemini-2.5-flash}}
        """
    )
    assert [c for c in codes(result) if c.startswith("AS3")] == ["AS306"]
    (line, col) = next((d.span.start.line, d.span.start.col)
                       for d in result.diagnostics if d.code == "AS306" and d.span)
    assert line == 5
    assert col == 24 + text.index("${")


# --- environments ---------------------------------------------------------------------------

OVERLAY_SPEC = """\
    agentspec: 1
    name: app
    models:
      fast: gemini-2.5-flash
      smart: {id: gemini-2.5-pro, generate: {temperature: 0.2, max_output_tokens: 100}}
    agents:
      main:
        description: Main.
        instruction: Hi
        model: smart
        tools: [{builtin: google_search}, {builtin: url_context}]
    environments:
      prod:
        models:
          fast: gemini-2.5-pro
          smart: {generate: {temperature: 0.7}}
        agents:
          main:
            description: null
            tools: [{builtin: load_memory}]
      test: {}
    """


def test_environment_overlay_deep_merges(check_yaml: Check) -> None:
    result = check_yaml(OVERLAY_SPEC, environment="prod")
    assert result.ok, located(result)
    models = data(result)["models"]
    assert models["fast"] == "gemini-2.5-pro"
    assert models["smart"] == {"id": "gemini-2.5-pro",
                               "generate": {"temperature": 0.7, "max_output_tokens": 100}}


def test_environment_null_removes_a_key(check_yaml: Check) -> None:
    result = check_yaml(OVERLAY_SPEC, environment="prod")
    main = data(result)["agents"]["main"]
    assert "description" not in main
    assert main["instruction"] == "Hi"


def test_environment_lists_replace_lists(check_yaml: Check) -> None:
    result = check_yaml(OVERLAY_SPEC, environment="prod")
    assert data(result)["agents"]["main"]["tools"] == [{"builtin": "load_memory"}]


def test_without_env_the_base_spec_is_the_document(check_yaml: Check) -> None:
    result = check_yaml(OVERLAY_SPEC)
    assert result.ok, located(result)
    main = data(result)["agents"]["main"]
    assert main["description"] == "Main."
    assert len(main["tools"]) == 2
    assert data(result)["models"]["fast"] == "gemini-2.5-flash"


def test_unknown_environment(check_yaml: Check) -> None:
    result = check_yaml(OVERLAY_SPEC, environment="staging")
    assert "AS307" in codes(result)
    assert not result.ok


def test_error_only_in_an_overlay_is_reported_without_env(check_yaml: Check) -> None:
    text = """\
        agentspec: 1
        name: app
        models: {fast: gemini-2.5-flash}
        agents:
          main: {instruction: Hi, model: fast}
        environments:
          dev: {}
          prod:
            agents:
              main: {model: fsat}
        """
    result = check_yaml(text)
    assert located(result) == [("spec.yaml", 10, 21, "AS202")]
    assert not result.ok
    # the base spec alone is fine, and so is the dev overlay
    assert located(check_yaml(text, environment="dev")) == []
    assert located(check_yaml(text, environment="prod")) == [("spec.yaml", 10, 21, "AS202")]
    assert located(check_yaml(text, all_environments=False)) == []


def test_overlay_unknown_and_forbidden_keys(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        agents:
          main: {instruction: Hi, model: gemini-2.5-flash}
        environments:
          prod:
            agentz: {}
            imports: [./x.yaml]
        """
    )
    assert located(result) == [("spec.yaml", 7, 5, "AS101"), ("spec.yaml", 8, 5, "AS310")]


def test_overlay_and_vars_together(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        vars: {n: 2}
        root: loop
        agents:
          loop: {kind: loop, max_iterations: 5, sub_agents: [w]}
          w: {instruction: W., model: gemini-2.5-flash, tools: [{builtin: exit_loop}]}
        environments:
          prod:
            agents: {loop: {max_iterations: "${vars.n}"}}
        """,
        environment="prod",
    )
    assert result.ok, located(result)
    assert data(result)["agents"]["loop"]["max_iterations"] == 2


# --- inline agents --------------------------------------------------------------------------


def test_inline_sub_agents_join_agents(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        agents:
          flow:
            kind: sequential
            sub_agents:
              - {name: first, instruction: One., model: gemini-2.5-flash}
              - {name: second, instruction: Two., model: gemini-2.5-flash}
        """
    )
    assert result.ok, located(result)
    agents = data(result)["agents"]
    assert agents["flow"]["sub_agents"] == ["first", "second"]
    assert set(agents) == {"flow", "first", "second"}


def test_inline_agent_name_clash(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        agents:
          flow:
            kind: sequential
            sub_agents:
              - {name: other, instruction: One., model: gemini-2.5-flash}
          other: {instruction: Two., model: gemini-2.5-flash}
        """
    )
    assert ("spec.yaml", 7, 16, "AS205") in located(result)


# --- positions inside values ----------------------------------------------------------------


def test_env_reference_in_a_block_scalar_points_at_its_line(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        agents:
          main:
            model: gemini-2.5-flash
            instruction: |
              First line.
              Key: ${env.MISSING_KEY}
        """
    )
    assert located(result) == [("spec.yaml", 8, 12, "AS305")]


def test_env_reference_after_an_escaped_one(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        agents:
          main: {instruction: "$${env.NOPE} ${env.NOPE}", model: gemini-2.5-flash}
        """
    )
    assert located(result) == [("spec.yaml", 4, 37, "AS305")]


def test_placeholder_after_a_literal_brace_pair(check_yaml: Check) -> None:
    result = check_yaml(
        """\
        agentspec: 1
        name: app
        root: main
        agents:
          main: {instruction: "{{topic}} and {topic}", model: gemini-2.5-flash}
        """
    )
    assert located(result) == [("spec.yaml", 5, 38, "AS223")]
