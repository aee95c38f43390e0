"""JSON Schema mappings where ADK wants a pydantic model (`input_schema`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, create_model

from agentspec.contract.adk_schemas import input_schema_problems

__all__ = ["UnsupportedSchema", "model_from_json_schema"]

_SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool}


class UnsupportedSchema(ValueError):
    """A JSON Schema that has no faithful pydantic model here."""


def _field_type(schema: dict[str, Any], where: str) -> Any:
    kind = schema.get("type")
    if kind in _SCALARS:
        return _SCALARS[kind]
    if kind == "array":
        return list[_field_type(schema.get("items", {"type": "string"}), where)]  # type: ignore[misc]
    if kind == "object":
        return dict[str, Any]
    raise UnsupportedSchema(f"{where}: type {kind!r} is not supported; use {{python: mod:Model}}")


def model_from_json_schema(name: str, schema: dict[str, Any]) -> type[BaseModel]:
    """A pydantic model for an object schema whose properties are scalars, lists or objects
    (what `input_schema_problems` accepts, which validate checks as AS406)."""
    problems = input_schema_problems(schema)
    if problems:
        where = ".".join(map(str, problems[0].path)) or "the schema"
        raise UnsupportedSchema(f"{where}: {problems[0].message}")
    required = set(schema.get("required", ()))
    fields: dict[str, Any] = {}
    for key, prop in schema["properties"].items():
        annotation = _field_type(prop, key)
        description = prop.get("description")
        if key in required:
            fields[key] = (annotation, Field(description=description))
        else:
            fields[key] = (annotation | None, Field(None, description=description))
    return create_model(name, **fields)
