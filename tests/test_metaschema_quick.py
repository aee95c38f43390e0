"""The quick meta-schema check (`agentspec.validate.semantic.metaschema.vouched`) vouches only
for schemas jsonschema's draft 2020-12 meta-schema accepts, and for the plain schemas specs
carry, so that validating them needs no jsonschema."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from agentspec.validate.semantic import metaschema as m
from agentspec.validate.semantic.metaschema import _KEYWORDS, vouched

META = Draft202012Validator(Draft202012Validator.META_SCHEMA)


def meta_accepts(schema: Any) -> bool:
    return not list(META.iter_errors(schema))


PLAIN = [
    True,
    False,
    {},
    {"type": "object", "properties": {"supported": {"type": "boolean"},
                                      "reason": {"type": "string"}},
     "required": ["supported", "reason"]},
    {"type": ["string", "null"], "enum": ["a", None], "default": "a", "description": "x"},
    {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 10},
     "minItems": 1, "maxItems": 5, "uniqueItems": True},
    {"anyOf": [{"type": "string", "pattern": "^a+$", "maxLength": 3}, {"type": "null"}]},
    {"$defs": {"n": {"type": "number", "multipleOf": 0.5}}, "$ref": "#/$defs/n",
     "title": "t", "examples": [1, 2], "format": "date"},
    {"type": "object", "additionalProperties": False, "patternProperties": {"^x": True},
     "dependentRequired": {"a": ["b"]}, "if": {"required": ["a"]}, "then": {}, "else": False},
]

REFUSED = [
    {"type": "strnig"},
    {"type": []},
    {"type": ["string", "string"]},
    {"required": ["a", "a"]},
    {"required": "a"},
    {"minLength": -1},
    {"minLength": 1.5},
    {"minItems": True},
    {"multipleOf": 0},
    {"maximum": "10"},
    {"properties": {"a": 3}},
    {"properties": []},
    {"items": [{"type": "string"}]},
    {"anyOf": []},
    {"allOf": {"type": "string"}},
    {"not": None},
    {"enum": "a"},
    {"uniqueItems": "yes"},
    {"description": 3},
    {"$id": "#frag"},
    {"$anchor": "1bad"},
    "object",
    3,
    None,
]


@pytest.mark.parametrize("schema", PLAIN, ids=range(len(PLAIN)))
def test_it_vouches_for_plain_schemas(schema: Any) -> None:
    assert meta_accepts(schema)
    assert vouched(schema)


@pytest.mark.parametrize("schema", REFUSED, ids=range(len(REFUSED)))
def test_it_never_vouches_for_what_the_meta_schema_refuses(schema: Any) -> None:
    assert not meta_accepts(schema)  # the case is real
    assert not vouched(schema)


def test_what_it_does_not_know_goes_to_jsonschema() -> None:
    """Unknown or deprecated keywords, non-string keys and deep nesting: not vouched for,
    though the meta-schema may accept them (jsonschema then decides)."""
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(40):
        deep = {"items": deep}
    for schema in ({"x-extra": 1}, {"definitions": {}}, {1: {"type": "string"}},
                   {"properties": {1: {}}}, deep):
        assert not vouched(schema)


_LEAVES = (st.none() | st.booleans() | st.integers(-2, 3) | st.floats(allow_nan=True)
           | st.sampled_from(["", "a", "string", "object", "null", "integer", "#x", "^a"])
           | st.lists(st.sampled_from(["a", "b", "string", "null"]), max_size=3))


def _keywords(children: st.SearchStrategy[Any], *, near_misses: bool) -> st.SearchStrategy[Any]:
    """Schemas of the known keywords, each with a value of the shape the meta-schema asks
    for; with `near_misses`, also unknown keywords and values of the wrong shape."""
    names = st.lists(st.sampled_from(["a", "b", "c"]), max_size=3, unique=True)
    valid: dict[Any, st.SearchStrategy[Any]] = {
        m._schema: children,
        m._schemas: st.lists(children, min_size=1, max_size=3),
        m._schema_map: st.dictionaries(st.sampled_from(["a", "b"]), children, max_size=2),
        m._names_map: st.dictionaries(st.sampled_from(["a", "b"]), names, max_size=2),
        m._type: st.sampled_from(sorted(m._TYPES)) | st.lists(
            st.sampled_from(sorted(m._TYPES)), min_size=1, max_size=3, unique=True),
        m._names: names,
        m._count: st.integers(0, 5),
        m._positive: st.integers(1, 5) | st.floats(min_value=0.1, max_value=1e9),
        m._number: st.integers() | st.floats(allow_nan=False),
        m._string: st.text(max_size=5),
        m._boolean: st.booleans(),
        m._array: st.lists(_LEAVES, max_size=2),
        m._any: _LEAVES,
    }
    keys = [*_KEYWORDS, "x-y", "$anchor", "$id", "definitions"] if near_misses else [*_KEYWORDS]

    def value(key: str) -> st.SearchStrategy[Any]:
        own = valid[_KEYWORDS[key]] if key in _KEYWORDS else _LEAVES
        if not near_misses:
            return own
        return st.integers(0, 3).flatmap(lambda i: _LEAVES if i == 0 else own)  # 1 in 4

    pair = st.sampled_from(keys).flatmap(lambda key: st.tuples(st.just(key), value(key)))
    return st.booleans() | st.lists(pair, max_size=4).map(dict)


#: what the quick check must vouch for: every value of the right shape
_VALID = st.recursive(st.booleans() | st.just({}),
                      lambda inner: _keywords(inner, near_misses=False), max_leaves=20)
#: what it may vouch for only when the meta-schema accepts it
_SCHEMAS = st.recursive(st.booleans() | st.just({}),
                        lambda inner: _keywords(inner, near_misses=True), max_leaves=20)


@settings(max_examples=100, deadline=None)
@given(_VALID)
def test_it_vouches_for_every_known_keyword_of_the_right_shape(schema: Any) -> None:
    assert meta_accepts(schema), schema  # the strategy is right
    assert vouched(schema), schema


def test_the_property_test_sees_vouched_schemas() -> None:
    """Otherwise the property below would pass trivially."""
    found: list[Any] = []

    @settings(max_examples=150, deadline=None, database=None, derandomize=True)
    @given(_SCHEMAS)
    def collect(schema: Any) -> None:
        if isinstance(schema, dict) and len(schema) > 1 and vouched(schema):
            found.append(schema)

    collect()
    assert len(found) >= 15


@settings(max_examples=200, deadline=None)
@given(_SCHEMAS)
def test_vouched_implies_the_meta_schema_accepts(schema: Any) -> None:
    if vouched(schema):
        assert meta_accepts(schema), schema
