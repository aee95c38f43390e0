"""Which JSON Schema mappings ADK can take, as problems with their place in the schema.

One source for both sides: `validate` reports each problem at its position (AS406), and the
runtime's model factory refuses the same schemas, so a spec validate accepts builds.

- `input_schema` becomes a pydantic model (ADK wants a class): an object with `properties`
  whose values are strings, numbers, booleans, lists of those, or objects; a property name
  pydantic cannot take as a field (a leading underscore, a name of BaseModel's own such as
  `model_config` or `json`) is refused rather than renamed.
- `output_schema` is handed to ADK as the mapping, which google-genai reads as its `Schema`
  where it can: there `type` must be one name (a list such as `[string, "null"]` crashes it),
  through `properties`, `items`, `anyOf` and `defs`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from pydantic import BaseModel

__all__ = ["FIELD_TYPES", "Problem", "input_schema_problems", "output_schema_problems"]



class Problem(NamedTuple):
    """What is wrong, and where in the schema: keys and indexes from its top; `on_key` when
    the last key itself is the problem (a property's name), not its value."""

    path: tuple[str | int, ...]
    message: str
    on_key: bool = False


FIELD_TYPES = ("string", "integer", "number", "boolean", "array", "object")
#: names a pydantic model of its own already has (fields, methods, dunders)
_MODEL_NAMES = frozenset(dir(BaseModel))


def _field(schema: Any, at: tuple[str | int, ...], name: str) -> list[Problem]:
    if not isinstance(schema, dict):
        return [Problem(at, f"`{name}` must be a mapping with a `type`")]
    kind = schema.get("type")
    if kind not in FIELD_TYPES:
        where = (*at, "type") if "type" in schema else at
        shown = "no type" if "type" not in schema else f"type `{kind}`"
        return [Problem(where, f"`{name}` has {shown}; an input schema's fields are one of "
                        f"{', '.join(FIELD_TYPES)}")]
    if kind == "array" and "items" in schema:
        return _field(schema["items"], (*at, "items"), f"{name}[]")
    return []


def input_schema_problems(schema: Any) -> list[Problem]:
    """Why `schema` cannot become the pydantic model of an `input_schema` (empty: it can)."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        where: tuple[str | int, ...] = ("type",) if isinstance(schema, dict) and \
            "type" in schema else ()
        return [Problem(where, "an input schema must be an object (`type: object`) with "
                               "`properties`")]
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return [Problem(("properties",) if "properties" in schema else (),
                 "an input schema must have `properties`: the arguments the agent is called "
                 "with")]
    problems: list[Problem] = []
    for key, prop in properties.items():
        at: tuple[str | int, ...] = ("properties", key)
        if not isinstance(key, str) or key.startswith("_") or key in _MODEL_NAMES:
            problems.append(Problem(at, f"`{key}` cannot name a field of the input model (a "
                                        "leading underscore, or a name pydantic models "
                                        "already have)", on_key=True))
            continue
        problems += _field(prop, at, key)
    return problems


def output_schema_problems(schema: Any, at: tuple[str | int, ...] = ()) -> list[Problem]:
    """Why ADK cannot take `schema` as an `output_schema` mapping (empty: it can)."""
    if not isinstance(schema, dict):
        return []
    problems: list[Problem] = []
    if isinstance(schema.get("type"), list):
        problems.append(Problem((*at, "type"), "a list of types is not supported in an "
                                               "output schema; use `anyOf`, one type each"))
    for keyword in ("properties", "defs"):
        if isinstance(schema.get(keyword), dict):
            for key, inner in schema[keyword].items():
                problems += output_schema_problems(inner, (*at, keyword, key))
    if isinstance(schema.get("anyOf"), list):
        for index, inner in enumerate(schema["anyOf"]):
            problems += output_schema_problems(inner, (*at, "anyOf", index))
    problems += output_schema_problems(schema.get("items"), (*at, "items"))
    return problems
