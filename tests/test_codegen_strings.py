"""No string can change the structure of generated code: arbitrary text in plan values and in
spec fields comes back exactly when the generated module runs."""

from __future__ import annotations

import ast
import tempfile
import textwrap
from pathlib import Path, PurePosixPath
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from agentspec.compiler import build_objects, compile_spec, emit_package
from agentspec.contract.placeholders import placeholders
from agentspec.emit.source import SourceOptions, source
from agentspec.ir.plan import Binding, Call, DictOf, Env, Import, ListOf, Plan, Ref
from agentspec.runtime.env import MissingEnvironmentVariable, expand
from agentspec.runtime.state import initial_state

#: any unicode except surrogates (which no UTF-8 file can hold)
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=120)
#: text that leans on what breaks naive code generation
NASTY = st.lists(st.sampled_from(["'", '"', "'''", '"""', "\\", "\\n", "{", "}", "{{x}}", "\n",
                                  "\r", "\r\n", "\x00", "\x0b", "\x1c", "\x85", "\u2028", "#",
                                  "${", "$${", "${env.HOME}", "\t", " ", "é", "😀", "\ufeff"]),
                 max_size=12).map("".join)
STRINGS = st.one_of(TEXT, NASTY, st.text(st.characters(exclude_categories=("Cs",)),
                                         min_size=80, max_size=300))
DICT = Import("builtins", "dict")
SETTINGS = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def run_module(text: str) -> dict[str, Any]:
    """Execute generated agent.py in a fresh namespace (it is not inside a package here)."""
    lines = [line for line in text.splitlines(keepends=True)
             if not line.startswith("from . import _paths")]
    code = "".join(lines)
    ast.parse(code)
    namespace: dict[str, Any] = {"__name__": "generated_agent"}
    exec(compile(code, "agent.py", "exec"), namespace)  # noqa: S102 - the point of the test
    return namespace


@SETTINGS
@given(description=STRINGS, items=st.lists(STRINGS, max_size=4),
       mapping=st.dictionaries(STRINGS, STRINGS, max_size=4), single=STRINGS,
       template=STRINGS, spec_file=STRINGS, where=STRINGS)
def test_plan_strings_survive_code_generation(description: str, items: list[str],
                                              mapping: dict[str, str], single: str,
                                              template: str, spec_file: str,
                                              where: str) -> None:
    try:
        expanded = expand(template, {})
    except MissingEnvironmentVariable:
        assume(False)
    plan = Plan(
        app_name="strings_app", description=description, spec_file=spec_file,
        bindings=(
            Binding("values", ListOf(tuple(items)), file=where, line=3),
            Binding("mapping", DictOf(tuple(mapping.items())), file=where, line=4),
            Binding("call", Call(DICT, kwargs=(
                ("text", single),
                ("nested", ListOf((DictOf(tuple(mapping.items())), ListOf(tuple(items)),
                                   single))),
                ("loaded", Env(template))), args=(DictOf((("first", single),)),)),
                    file=where, line=5),
            Binding("app", Call(DICT, kwargs=(("call", Ref("call")), ("values", Ref("values")),
                                              ("mapping", Ref("mapping")),
                                              ("description", description))))),
    )
    files = source(plan, SourceOptions(module_paths=("../spec dir", where)))
    for relative, text in files.items():
        ast.parse(text, filename=str(relative))
    namespace = run_module(files[PurePosixPath("strings_app/agent.py")])
    assert namespace.get("__doc__") == (description or None)
    app = namespace["app"]
    assert app["values"] == items
    assert app["mapping"] == mapping
    assert app["description"] == description
    call = app["call"]
    assert call == {"first": single, "text": single, "nested": [mapping, items, single],
                    "loaded": expanded}
    # _paths.py only puts directories on sys.path; its literal must be the same tuple
    paths = ast.parse(files[PurePosixPath("strings_app/_paths.py")])
    literals = [ast.literal_eval(node.iter) for node in ast.walk(paths)
                if isinstance(node, ast.For)]
    assert literals == [("../spec dir", where)]


_YAML = YAML(typ="safe", pure=True)
_YAML.default_flow_style = False
_YAML.allow_unicode = False  # escapes: the file's bytes stay printable ASCII
_YAML.width = 1_000_000  # no folding: ruamel folds after an escape such as `\x1F` and the
#                          reader then sees a space that was not in the string


def _spec_app(directory: Path, description: str, instruction: str) -> tuple[Any, str] | None:
    declared = {p.key: "x" for p in placeholders(instruction)  # AS223 would refuse the spec
                if not p.optional and not p.artifact and not p.key.startswith("temp:")}
    spec = {"agentspec": 1, "name": "fuzz_app", "state": {"note": description, **declared},
            "agents": {"main": {"model": "gemini-2.5-flash", "description": description,
                                "instruction": instruction}}}
    path = directory / "spec.yaml"
    with path.open("w", encoding="utf-8") as handle:
        _YAML.dump(spec, handle)
    result = compile_spec(path, environ={})
    if not result.ok:
        return None
    app, problems = build_objects(result)
    assert problems == []
    files = emit_package(result, directory / "out")
    return app, files[PurePosixPath("fuzz_app/agent.py")]


def _instruction(value: Any) -> Any:
    return getattr(value, "text", value)


@SETTINGS
@given(description=STRINGS, instruction=STRINGS)
def test_spec_strings_reach_both_emitters_unchanged(description: str, instruction: str) -> None:
    assume("${" not in instruction)
    with tempfile.TemporaryDirectory() as directory:
        built = _spec_app(Path(directory), description, instruction)
    assume(built is not None)
    assert built is not None
    app, agent_py = built
    generated = run_module(agent_py)["app"]
    mine, theirs = app.root_agent, generated.root_agent
    assert theirs.description == mine.description
    assert _instruction(theirs.instruction) == _instruction(mine.instruction)
    assert type(theirs.instruction) is type(mine.instruction)
    # and the spec's text is what the agent holds
    assert _instruction(mine.instruction) == instruction
    if "${" not in description:
        assert mine.description == description
        assert initial_state(app)["note"] == initial_state(generated)["note"] == description


# --- an empty string that does not fit on its line (it used to become `()`) --------------------


def test_an_empty_string_after_a_long_key_stays_a_string() -> None:
    key = "k" * 84
    plan = Plan("empty_app", None, "spec.yaml", (
        Binding("app", Call(DICT, kwargs=(("mapping", DictOf(((key, ""),))),))),))
    namespace = run_module(source(plan)[PurePosixPath("empty_app/agent.py")])
    assert namespace["app"] == {"mapping": {key: ""}}


def test_an_empty_tool_argument_reaches_both_emitters(spec_dir: Any, tmp_path: Path) -> None:
    path = spec_dir("""\
        agentspec: 1
        name: empty_app
        tools:
          ping:
            python: empty_tools:make
            args:
              options: {"X-A-Rather-Long-Header-Name-That-Some-Service-Insists-On-Using-Here": ""}
        agents:
          main: {model: gemini-2.5-flash, instruction: hi, tools: [ping]}
        """, {"empty_tools.py": textwrap.dedent('''\
        def make(options):
            def ping(text: str) -> dict:
                """Echo."""
                return {"text": text}
            ping.options = options
            return ping
        ''')})
    result = compile_spec(path, environ={})
    assert result.ok
    app, problems = build_objects(result)
    assert problems == []
    expected = {"X-A-Rather-Long-Header-Name-That-Some-Service-Insists-On-Using-Here": ""}
    assert app.root_agent.tools[0].options == expected
    agent_py = emit_package(result, tmp_path / "out")[PurePosixPath("empty_app/agent.py")]
    generated = run_module(agent_py)["app"]
    assert generated.root_agent.tools[0].options == expected
