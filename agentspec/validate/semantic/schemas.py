"""`output_schema` / `input_schema` mappings must be valid JSON Schema."""

from __future__ import annotations

from typing import Any

from agentspec.diagnostics import codes
from agentspec.validate.semantic.context import Context

__all__ = ["check_schemas"]


def _problems(schema: dict[str, Any]) -> list[tuple[str, tuple[str | int, ...]]]:
    from jsonschema import Draft202012Validator  # deferred: only specs with schemas pay for it

    meta = Draft202012Validator(Draft202012Validator.META_SCHEMA)
    return [(error.message, tuple(error.path)) for error in meta.iter_errors(schema)]


def check_schemas(ctx: Context) -> None:
    for name, agent in ctx.llm_agents():
        for field in ("output_schema", "input_schema"):
            schema = getattr(agent, field)
            if not isinstance(schema, dict):
                continue
            for message, inner in _problems(schema):
                path = ("agents", name, field, *inner)
                ctx.report(codes.INVALID_JSON_SCHEMA(
                    f"`{field}` is not valid JSON Schema: {message}",
                    ctx.at(*path),
                    hint="see https://json-schema.org/understanding-json-schema/"))
