"""A quick, one-sided check of a JSON Schema against the draft 2020-12 meta-schema: `vouched`
says True only for a schema the meta-schema surely accepts, made of the keywords it knows
with values of the plain shapes it asks for. Anything else (an unknown keyword, a float
where an integer is asked, a deep schema) is left to `jsonschema`, which also words the
problems, so a spec whose schemas are plain never imports it (about 60 ms of start-up).

Formats (`uri-reference`, `regex`) are not asserted: the meta-schema is checked without a
format checker, as `schemas.py` does."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["vouched"]

#: deeper schemas are left to jsonschema rather than recursed into
_DEPTH = 32
_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})


def _schema(value: object, depth: int) -> bool:
    if isinstance(value, bool):
        return True
    if not isinstance(value, dict) or depth > _DEPTH:
        return False
    for key, item in value.items():
        check = _KEYWORDS.get(key) if isinstance(key, str) else None
        if check is None or not check(item, depth + 1):
            return False
    return True


def _any(_: object, __: int) -> bool:
    return True


def _string(value: object, _: int) -> bool:
    return isinstance(value, str)


def _boolean(value: object, _: int) -> bool:
    return isinstance(value, bool)


def _number(value: object, _: int) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _positive(value: object, depth: int) -> bool:
    return _number(value, depth) and value > 0  # type: ignore[operator]


def _count(value: object, _: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _array(value: object, _: int) -> bool:
    return isinstance(value, list)


def _names(value: object, _: int) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value) and \
        len(set(value)) == len(value)


def _type(value: object, _: int) -> bool:
    if isinstance(value, str):
        return value in _TYPES
    return isinstance(value, list) and bool(value) and all(
        isinstance(v, str) and v in _TYPES for v in value) and len(set(value)) == len(value)


def _schemas(value: object, depth: int) -> bool:
    """A non-empty array of schemas (`allOf`, `anyOf`, `oneOf`, `prefixItems`)."""
    return isinstance(value, list) and bool(value) and all(_schema(v, depth) for v in value)


def _schema_map(value: object, depth: int) -> bool:
    """An object of schemas (`properties`, `$defs`, `dependentSchemas`)."""
    return isinstance(value, dict) and all(
        isinstance(k, str) and _schema(v, depth) for k, v in value.items())


def _names_map(value: object, depth: int) -> bool:
    """An object of unique string arrays (`dependentRequired`)."""
    return isinstance(value, dict) and all(
        isinstance(k, str) and _names(v, depth) for k, v in value.items())


_KEYWORDS: dict[str, Callable[[object, int], bool]] = {
    # core (formats are not asserted; `$id`, `$anchor`, `$dynamicAnchor` and `$vocabulary`
    # have patterns and shapes of their own, so they are left to jsonschema)
    "$schema": _string, "$ref": _string, "$dynamicRef": _string,
    "$comment": _string, "$defs": _schema_map,
    # applicator
    "prefixItems": _schemas, "items": _schema, "contains": _schema,
    "additionalProperties": _schema, "properties": _schema_map,
    "patternProperties": _schema_map, "dependentSchemas": _schema_map,
    "propertyNames": _schema, "if": _schema, "then": _schema, "else": _schema,
    "allOf": _schemas, "anyOf": _schemas, "oneOf": _schemas, "not": _schema,
    # unevaluated
    "unevaluatedItems": _schema, "unevaluatedProperties": _schema,
    # validation
    "type": _type, "const": _any, "enum": _array, "multipleOf": _positive,
    "maximum": _number, "exclusiveMaximum": _number, "minimum": _number,
    "exclusiveMinimum": _number, "maxLength": _count, "minLength": _count,
    "pattern": _string, "maxItems": _count, "minItems": _count, "uniqueItems": _boolean,
    "maxContains": _count, "minContains": _count, "maxProperties": _count,
    "minProperties": _count, "required": _names, "dependentRequired": _names_map,
    # meta-data, format annotation, content
    "title": _string, "description": _string, "default": _any, "deprecated": _boolean,
    "readOnly": _boolean, "writeOnly": _boolean, "examples": _array, "format": _string,
    "contentEncoding": _string, "contentMediaType": _string, "contentSchema": _schema,
}


def vouched(schema: object) -> bool:
    """True only when the draft 2020-12 meta-schema surely accepts `schema`; False means
    "ask jsonschema", not "invalid"."""
    return _schema(schema, 0)
