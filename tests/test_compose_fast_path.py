"""libyaml's fast path of `agentspec.parse.compose` stands in for the `mod:attr` colons of
flow collections (YAML 1.1 refuses them): what it composes must be what the pure-Python
YAML 1.2 parser composes, node for node, type for type, mark for mark."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from agentspec.parse import compose as composing
from agentspec.parse.compose import _compose_c

ROOT = Path(__file__).resolve().parent.parent


def pure(text: str) -> list[Node]:
    yaml = YAML(typ="safe", pure=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(yaml.compose_all(text))


def shape(node: Node, seen: dict[int, int] | None = None) -> Any:
    """Everything of a node tree the loader reads: kinds, tags, values, marks, sharing."""
    seen = {} if seen is None else seen
    if id(node) in seen:
        return ("alias", seen[id(node)])
    seen[id(node)] = len(seen)
    marks = (node.start_mark.line, node.start_mark.column, node.end_mark.line,
             node.end_mark.column)
    if isinstance(node, ScalarNode):
        return ("scalar", str(node.tag), node.value, node.style or None, marks)  # C: "", pure: None
    if isinstance(node, SequenceNode):
        return ("seq", str(node.tag), marks, [shape(n, seen) for n in node.value])
    assert isinstance(node, MappingNode)
    return ("map", str(node.tag), marks,
            [(shape(k, seen), shape(v, seen)) for k, v in node.value])


def fast(text: str) -> list[Node] | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _compose_c(text)


def yaml_files() -> list[Path]:
    found = [p for folder in ("specs", "examples", "tests/cases", "tests/scenario_cases")
             for p in sorted((ROOT / folder).rglob("*.yaml")) if p.is_file()]
    return [p for p in found if ":" in p.read_text(encoding="utf-8", errors="replace")]


def test_the_shipped_specs_take_the_fast_path() -> None:
    """Every shipped spec names python code in a flow mapping, which libyaml alone refuses."""
    specs = sorted((ROOT / "specs").glob("*.yaml"))
    assert specs
    for spec in specs:
        text = spec.read_text(encoding="utf-8")
        assert "python: " in text
        nodes = fast(text)
        assert nodes is not None, spec
        assert [shape(n) for n in nodes] == [shape(n) for n in pure(text)], spec


def test_every_yaml_file_of_the_project_composes_as_the_pure_parser_does() -> None:
    compared = 0
    for path in yaml_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            expected = [shape(n) for n in pure(text)]
        except Exception:  # noqa: BLE001 - broken on purpose (a golden case): pure decides
            continue
        nodes = fast(text)
        if nodes is not None:
            assert [shape(n) for n in nodes] == expected, path
            compared += 1
    assert compared > 50


@pytest.mark.parametrize("text", [
    "tools:\n  a: {python: my_tools.search:web_search}\n  b: [x:y, {k: a.b:c}]\n",
    "when: [2001-12-14t21:59:43.10-05:00, 12:30]\n",  # typed again after the stand-in
    "a: {x: &ref mod:attr, y: *ref}\n",
    "{a:b: c, d: e:f}\n",
    "a: [m:n]\r\nb: {p: q:r}\r\n",
    "a: [m:n]\n---\nb: {p: q:r}\n",
    "a: 'é' \n\nb: [ü:ö, {python: x:y}]\n",
    "# a:b in a comment\na: {python: a:b}  # {c:d}\n",
    "a: [\"q:r\", s:t]\n",
    "url: https://example.invalid/x:y\nat: 12:30\nq: \"a:b\"\nb: |\n  c:d\n  e: f\n",
    "? a:b\n: c:d\nx:y: z\n",
    "!!map {a: !!str b:c}\n",
])
def test_stand_ins_change_nothing(text: str) -> None:
    nodes = fast(text)
    assert nodes is not None
    assert [shape(n) for n in nodes] == [shape(n) for n in pure(text)]


def test_text_holding_every_stand_in_goes_to_the_pure_parser() -> None:
    text = "a: {python: m:a}\nb: \"\ue000\ue001\ue002\ue003\"\n"
    assert fast(text) is None
    assert [shape(n) for n in composing.compose(text, 1000)] == [shape(n) for n in pure(text)]


@pytest.mark.parametrize("text", ['a: "x\u2028y"\nb: [m:n]\n', 'a: "x\x85y"\nb: [mn]\n'])
def test_text_with_yaml_1_1_line_breaks_goes_to_the_pure_parser(text: str) -> None:
    """libyaml counts NEL, LS and PS as line breaks, YAML 1.2 does not: marks would differ."""
    assert fast(text) is None
    assert [shape(n) for n in composing.compose(text, 1000)] == [shape(n) for n in pure(text)]


def test_many_colons_in_flow_collections() -> None:
    text = "a: [" + ", ".join(f"m{i}:a" for i in range(500)) + "]\n"
    nodes = fast(text)
    assert nodes is not None
    assert [shape(n) for n in nodes] == [shape(n) for n in pure(text)]


@pytest.mark.parametrize("text", ["a: {\"k\":v, 'k2':w}\n", "a: [x::y, :z, z:]\n"])
def test_what_libyaml_still_refuses_the_pure_parser_reads(text: str) -> None:
    assert fast(text) is None
    assert [shape(n) for n in composing.compose(text, 1000)] == [shape(n) for n in pure(text)]


def test_a_stand_in_in_a_tag_goes_to_the_pure_parser() -> None:
    text = "a: !<tag:example.com,2000:x> {python: m:a}\n"
    assert fast(text) is None


def test_other_errors_still_go_to_the_pure_parser() -> None:
    """A YAML 1.2 text libyaml refuses for another reason, and a broken one."""
    assert fast("a: {python: m:a}\nb: [1, 2\n") is None
    with pytest.raises(Exception):  # noqa: B017 - the pure parser's error is the one reported
        composing.compose("a: {python: m:a}\nb: [1, 2\n", 1000)
