"""No spec string becomes code: arbitrary text in every place of a spec that reaches generated
source either gets a diagnostic or leaves the program's structure exactly as a harmless value
would (names stay names, text stays inside literals); and the source writer refuses any name
that is not an identifier, whatever the plan says."""

from __future__ import annotations

import ast
import functools
import tempfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from agentspec.compiler import compile_spec, emit_package
from agentspec.emit.source import SPEC_PATH, UnsafeName, source
from agentspec.ir.plan import Binding, Call, Import, Plan, Ref
from agentspec.language.common import is_reserved_word

SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])
#: text that leans on what turns a name into code
NAME_PIECES = ["limit=__import__('os').system('touch PWNED') and 5, region", "max-results",
               "class", "None", "__debug__", "a b", "x)", "(", "=", ",", "*", "**", ":", ".",
               "..", "/", "#", "\n", "'", '"', "\\", "1x", "é", "ﬁ", "ℌ", "_", "x", "os",
               "system", "app", "root_agent", "main", "tools", "${env.HOME}", "${vars.v}", "{x}",
               "\x00", "\u2028", " ", "\t"]
NAMES = st.one_of(st.text(max_size=40),
                  st.lists(st.sampled_from(NAME_PIECES), min_size=1, max_size=5).map("".join))
ALWAYS = ["limit=__import__('os').system('touch PWNED') and 5, region", "max-results", "class",
          "__debug__", "ﬁle", "a.b", "x=1", "", "ok_name", "app", "root_agent", "A\n"]

TOOLS_PY = '''\
def make(**kwargs):
    def search(query: str) -> str:
        """Search."""
        return query
    return search


def search(query: str) -> str:
    """Search."""
    return query


def route(names, ctx, failed):
    return names[0]


def before(callback_context):
    return None
'''


def _base() -> dict[str, Any]:
    return {
        "agentspec": 1, "name": "fuzzed", "description": "Fuzzed.",
        "vars": {"v": "value"},
        "models": {"zq_fast": "gemini-2.5-flash"},
        "backends": {"zq_scratch": {"type": "state"}},
        "tools": {"zq_named": {"python": "tools:make", "args": {"limit": 5}},
                  "zq_server": {"mcp": {"command": "server", "args": ["--x"],
                                        "env": {"TOKEN": "t"}}, "prefix": "srv"}},
        "plugins": [{"python": "tools:make", "args": {"level": 1}}],
        "global_instruction": "Be brief.",
        "agents": {
            "zq_main": {"kind": "router", "sub_agents": ["zq_helper", "zq_other"],
                        "route": {"python": "tools:route"}, "default": "zq_helper",
                        "callbacks": {"before_agent": ["tools:before"]}},
            "zq_helper": {"model": "zq_fast", "description": "Helps.", "instruction": "Help.",
                          "tools": ["zq_named", "zq_server",
                                    {"python": "tools:make", "args": {"depth": 2}}],
                          "filesystem": "zq_scratch", "output_key": "answer",
                          "interrupt_on": {"zq_named": {"decisions": ["approve", "reject"],
                                                        "hint": "Run it?"}},
                          "output_schema": {"python": "tools:search"}},
            "zq_other": {"kind": "planner", "model": "zq_fast",
                         "worker": {"tools": [{"python": "tools:make", "args": {"k": 1}}]}},
        },
    }


Place = Callable[[dict[str, Any], str], None]


def _rename_agent(spec: dict[str, Any], value: str) -> None:
    spec["agents"][value] = spec["agents"].pop("zq_helper")
    spec["agents"]["zq_main"]["sub_agents"][0] = value
    spec["agents"]["zq_main"]["default"] = value


def _rename_tool(spec: dict[str, Any], value: str) -> None:
    spec["tools"][value] = spec["tools"].pop("zq_named")
    helper = spec["agents"]["zq_helper"]
    helper["tools"][0] = value
    helper["interrupt_on"] = {value: helper["interrupt_on"]["zq_named"]}


def _set(*path: str | int) -> Place:
    def place(spec: dict[str, Any], value: str) -> None:
        target: Any = spec
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return place


def _key(*path: str | int) -> Place:
    """The value becomes the (only) key of the mapping at `path`."""
    def place(spec: dict[str, Any], value: str) -> None:
        target: Any = spec
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = {value: 1}
    return place


def _ref(*path: str | int, part: int) -> Place:
    """The value becomes the module (part 0) or the attribute (part 1) of a reference."""
    def place(spec: dict[str, Any], value: str) -> None:
        target: Any = spec
        for key in path[:-1]:
            target = target[key]
        module, attr = str(target[path[-1]]).split(":")
        target[path[-1]] = f"{value}:{attr}" if part == 0 else f"{module}:{value}"
    return place


def _model_name(spec: dict[str, Any], value: str) -> None:
    spec["models"] = {value: "gemini-2.5-flash"}
    spec["agents"]["zq_helper"]["model"] = value
    spec["agents"]["zq_other"]["model"] = value


def _backend_name(spec: dict[str, Any], value: str) -> None:
    spec["backends"] = {value: {"type": "state"}}
    spec["agents"]["zq_helper"]["filesystem"] = value


def _var_name(spec: dict[str, Any], value: str) -> None:
    spec["vars"] = {value: "value"}
    spec["agents"]["zq_helper"]["instruction"] = "Help with ${vars." + value + "}."


def _inline_agent(spec: dict[str, Any], value: str) -> None:
    spec["agents"]["zq_main"]["sub_agents"][1] = {"name": value, "kind": "planner",
                                               "model": "zq_fast"}
    del spec["agents"]["zq_other"]


#: every place a spec string can reach generated source, by what it becomes there
NAME_PLACES: dict[str, Place] = {
    "tool args key": _key("tools", "zq_named", "args"),
    "inline tool args key": _key("agents", "zq_helper", "tools", 2, "args"),
    "plugin args key": _key("plugins", 0, "args"),
    "planner worker tool args key": _key("agents", "zq_other", "worker", "tools", 0, "args"),
    "tool module": _ref("tools", "zq_named", "python", part=0),
    "tool attribute": _ref("tools", "zq_named", "python", part=1),
    "inline tool attribute": _ref("agents", "zq_helper", "tools", 2, "python", part=1),
    "plugin module": _ref("plugins", 0, "python", part=0),
    "plugin attribute": _ref("plugins", 0, "python", part=1),
    "callback attribute": _ref("agents", "zq_main", "callbacks", "before_agent", 0, part=1),
    "route attribute": _ref("agents", "zq_main", "route", "python", part=1),
    "schema attribute": _ref("agents", "zq_helper", "output_schema", "python", part=1),
    "agent name": _rename_agent,
    "inline agent name": _inline_agent,
    "spec name": _set("name"),
    "tool name": _rename_tool,
    "model name": _model_name,
    "backend name": _backend_name,
    "variable name": _var_name,
    "mcp prefix": _set("tools", "zq_server", "prefix"),
    "output key": _set("agents", "zq_helper", "output_key"),
}
LITERAL_PLACES: dict[str, Place] = {
    "description": _set("agents", "zq_helper", "description"),
    "instruction": _set("agents", "zq_helper", "instruction"),
    "global instruction": _set("global_instruction"),
    "spec description": _set("description"),
    "approval hint": _set("agents", "zq_helper", "interrupt_on", "zq_named", "hint"),
    "tool args value": _set("tools", "zq_named", "args", "limit"),
    "tool args nested key": lambda spec, value: spec["tools"]["zq_named"]["args"].update(
        limit={value: [value]}),
    "mcp command": _set("tools", "zq_server", "mcp", "command"),
    "mcp argument": _set("tools", "zq_server", "mcp", "args", 0),
    "mcp env name": _key("tools", "zq_server", "mcp", "env"),
    "mcp env value": _set("tools", "zq_server", "mcp", "env", "TOKEN"),
    "variable value": _set("vars", "v"),
}

PLACES = {**NAME_PLACES, **LITERAL_PLACES}

_YAML = YAML(typ="safe")  # libyaml's emitter where installed: a tenth of the pure one's time
_YAML.default_flow_style = False
_YAML.allow_unicode = False
_YAML.width = 1_000_000


class _Mask(ast.NodeTransformer):
    """Every name and every text becomes a placeholder: what is left is the structure."""

    def visit_Module(self, node: ast.Module) -> ast.AST:
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring is text (and absent when the description is empty)
        # imports hold only names (the writer checks them); which helpers are imported
        # depends on the text (`${env.X}` needs `expand`)
        node.body = [n for n in body if not isinstance(n, ast.ImportFrom)]
        self.generic_visit(node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        # values read at load time (`${env.X}`, `{{ }}` escapes, spec-relative paths) are
        # literals that the runtime finishes
        if isinstance(node.func, ast.Name) and node.func.id in (
                "expand", "template", "spec_path") and len(node.args) == 1 \
                and isinstance(node.args[0], ast.Constant) and not node.keywords:
            return ast.Constant("")
        self.generic_visit(node)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name("_", node.ctx)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        node.attr = "_"
        return node

    def visit_keyword(self, node: ast.keyword) -> ast.AST:
        self.generic_visit(node)
        node.arg = "_"
        return node

    def visit_alias(self, node: ast.alias) -> ast.AST:
        return ast.alias("_")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        self.generic_visit(node)
        node.module = "_"
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        return ast.Constant("" if isinstance(node.value, str) else node.value)


def skeleton(text: str) -> str:
    return ast.dump(_Mask().visit(ast.parse(text)))


def _generate(spec: dict[str, Any], directory: Path) -> dict[PurePosixPath, str] | None:
    """The generated package, or None when the spec does not compile (a diagnostic)."""
    (directory / "tools.py").write_text(TOOLS_PY)
    path = directory / "spec.yaml"
    with path.open("w", encoding="utf-8") as handle:
        _YAML.dump(spec, handle)
    compiled = compile_spec(path, environ={"HOME": "/home/x"})
    if not compiled.ok:
        assert any(d.is_error for d in compiled.diagnostics)
        return None
    return emit_package(compiled, directory / "out")


def _benign(value: str) -> str:
    """A harmless value of the same shape: a dotted name keeps its dots (as it reads once
    `${vars.v}` is replaced). The base spec's names start with `zq_` so that no value
    collides with them by chance."""
    value = value.replace("${vars.v}", "value")
    return ".".join(f"benign{i}" for i, _ in enumerate(value.split(".")))


def _structure(files: dict[PurePosixPath, str]) -> dict[str, str]:
    for relative in files:  # the package is one directory named like the app
        assert len(relative.parts) == 2 and relative.parts[0] not in ("", ".", ".."), relative
    return {relative.name: skeleton(text) for relative, text in files.items()}


def _generated_structure(place: Place, value: str) -> dict[str, str] | None:
    with tempfile.TemporaryDirectory() as scratch:
        spec = _base()
        place(spec, value)
        files = _generate(spec, Path(scratch))
    return None if files is None else _structure(files)


@functools.cache
def _baseline(place: str, benign: str) -> dict[str, str]:
    expected = _generated_structure(PLACES[place], benign)
    assert expected is not None
    return expected


def _check_place(place: str, value: str, benign: str) -> None:
    found = _generated_structure(PLACES[place], value)
    if found is not None:  # else refused with a diagnostic
        assert found == _baseline(place, benign)


def test_the_base_spec_compiles() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        assert _generate(_base(), Path(scratch)) is not None


@pytest.mark.parametrize("place", sorted(NAME_PLACES))
@pytest.mark.parametrize("value", ALWAYS)
def test_strings_that_broke_code_generation_are_refused_or_stay_names(place: str,
                                                                      value: str) -> None:
    _check_place(place, value, _benign(value))


@pytest.mark.slow
@pytest.mark.parametrize("place", sorted(NAME_PLACES))
@SETTINGS
@given(value=NAMES)
def test_any_string_in_a_name_place_is_refused_or_stays_a_name(place: str, value: str) -> None:
    _check_place(place, value, _benign(value))


@pytest.mark.slow
@pytest.mark.parametrize("place", sorted(LITERAL_PLACES))
@SETTINGS
@given(value=NAMES)
@example(value="x')\nimport os\nos.system('touch PWNED')\n('")
def test_any_string_in_a_literal_place_stays_inside_literals(place: str, value: str) -> None:
    _check_place(place, value, "benign")


# --- the source writer, whatever the plan says -----------------------------------------------


def _is_name(text: str) -> bool:
    return text.isascii() and text.isidentifier() and not is_reserved_word(text)


def _plans(name: str) -> dict[str, Plan]:
    call = Import("m", "f")
    return {
        "binding": Plan("app_x", None, "spec.yaml", (Binding(name, Call(call)),)),
        "reference": Plan("app_x", None, "spec.yaml", (
            Binding("x", Call(call)), Binding("y", Call(call, args=(Ref(name),))))),
        "keyword argument": Plan("app_x", None, "spec.yaml", (
            Binding("x", Call(call, kwargs=((name, 1),))),)),
        "tall keyword argument": Plan("app_x", None, "spec.yaml", (
            Binding("x", Call(call, kwargs=((name, "v" * 100),))),)),
        "imported module": Plan("app_x", None, "spec.yaml", (
            Binding("x", Call(Import(name, "f"))),)),
        "imported name": Plan("app_x", None, "spec.yaml", (
            Binding("x", Call(Import("m", name))),)),
        "imported attribute": Plan("app_x", None, "spec.yaml", (
            Binding("x", Call(Import("m", f"f.{name}"))),)),
        "app name": Plan(name, None, "spec.yaml", (Binding("x", Call(call)),)),
    }


@settings(max_examples=300, deadline=None)
@given(name=NAMES)
@example(name="limit=__import__('os').system('touch PWNED') and 5, region")
@example(name="class")
@example(name="__debug__")
@example(name="ﬁle")  # NFKC makes it `file`: two names could become one
def test_the_source_writer_refuses_every_name_that_is_not_an_identifier(name: str) -> None:
    for where, plan in _plans(name).items():
        dotted = where.startswith("imported")
        valid = all(_is_name(p) for p in name.split(".")) if dotted else _is_name(name)
        # the package's own `._paths` is the one relative module the writer takes (hypothesis
        # draws the constants it finds in the code under test, so it finds this one)
        valid = valid or (where == "imported module" and name == SPEC_PATH.module)
        if not valid:
            with pytest.raises(UnsafeName):
                source(plan)
            continue
        for relative, text in source(plan).items():
            tree = ast.parse(text, filename=str(relative))
            names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
                k.arg for k in ast.walk(tree) if isinstance(k, ast.keyword)} | {
                a.asname or a.name for a in ast.walk(tree) if isinstance(a, ast.alias)}
            assert not {"__import__", "eval", "exec", "os"} & (names - {name}), (where, text)


def test_reserved_words_are_refused_as_argument_names_by_validate(
        check_yaml: Callable[..., Any]) -> None:
    result = check_yaml("""\
        agentspec: 1
        name: app
        tools:
          lookup:
            python: tools:make
            args: {"limit=__import__('os').system('touch PWNED') and 5, region": 1}
        plugins:
          - {python: tools:make, args: {class: 1, max-results: 2, fine_name: 3}}
        agents:
          main:
            model: gemini-2.5-flash
            instruction: Hi.
            tools: [lookup, {python: "tools:make", args: {None: 1}}]
            callbacks: {before_model: ["class:def", "tools:__debug__"]}
        """, {"tools.py": TOOLS_PY})
    assert [(d.span.start.line, d.span.start.col, d.code) for d in result.diagnostics
            if d.span] == [(6, 12, "AS106"), (8, 33, "AS106"), (8, 43, "AS106"),
                           (13, 51, "AS106"), (14, 32, "AS220"), (14, 45, "AS220")]
