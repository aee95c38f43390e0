"""`output_schema` / `input_schema` mappings must be valid JSON Schema."""

from __future__ import annotations

from typing import Any

from agentspec.diagnostics import codes
from agentspec.validate.semantic.context import Context

__all__ = ["check_schemas"]


def _problem(schema: dict[str, Any]) -> tuple[str, tuple[str | int, ...]] | None:
    from jsonschema import Draft202012Validator  # deferred: only specs with schemas pay for it
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return exc.message, tuple(exc.path)
    return None


def check_schemas(ctx: Context) -> None:
    for name, agent in ctx.llm_agents():
        for field in ("output_schema", "input_schema"):
            schema = getattr(agent, field)
            if not isinstance(schema, dict):
                continue
            problem = _problem(schema)
            if problem is not None:
                message, inner = problem
                path = ("agents", name, field, *inner)
                ctx.report(codes.INVALID_JSON_SCHEMA(
                    f"`{field}` is not valid JSON Schema: {message}",
                    ctx.at(*path),
                    hint="see https://json-schema.org/understanding-json-schema/"))
