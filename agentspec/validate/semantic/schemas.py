"""`output_schema` / `input_schema` mappings must be valid JSON Schema (AS225) that ADK can
take (AS406: what `agentspec.contract.adk_schemas` refuses, build would refuse too)."""

from __future__ import annotations

from typing import Any

from agentspec.contract.adk_schemas import input_schema_problems, output_schema_problems
from agentspec.diagnostics import codes
from agentspec.validate.semantic.context import Context
from agentspec.validate.semantic.metaschema import vouched

__all__ = ["check_schemas"]


#: the problems of each schema met, by its JSON text: an editor checks the same schemas
#: again at every keystroke
_SEEN: dict[str, list[tuple[str, tuple[str | int, ...]]]] = {}


def _problems(schema: dict[str, Any]) -> list[tuple[str, tuple[str | int, ...]]]:
    if vouched(schema):
        return []
    import json  # deferred, as jsonschema below: the quick check vouches for most schemas

    key = json.dumps(schema, sort_keys=True, default=repr)
    found = _SEEN.get(key)
    if found is None:
        from jsonschema import Draft202012Validator  # deferred: only unusual schemas pay for it

        meta = Draft202012Validator(Draft202012Validator.META_SCHEMA)
        found = [(error.message, tuple(error.path)) for error in meta.iter_errors(schema)]
        if len(_SEEN) >= 256:
            _SEEN.clear()
        _SEEN[key] = found
    return list(found)


def check_schemas(ctx: Context) -> None:
    for name, agent in ctx.llm_agents():
        for field in ("output_schema", "input_schema"):
            schema = getattr(agent, field)
            if not isinstance(schema, dict):
                continue
            invalid = _problems(schema)
            for message, inner in invalid:
                path = ("agents", name, field, *inner)
                ctx.report(codes.INVALID_JSON_SCHEMA(
                    f"`{field}` is not valid JSON Schema: {message}",
                    ctx.at(*path),
                    hint="see https://json-schema.org/understanding-json-schema/"))
            if invalid:
                continue
            unsupported = input_schema_problems(schema) if field == "input_schema" else \
                output_schema_problems(schema)
            for problem in unsupported:
                path = ("agents", name, field, *problem.path)
                ctx.report(codes.SCHEMA_UNSUPPORTED(
                    f"`{field}`: {problem.message}",
                    ctx.key_at(*path) if problem.on_key else ctx.at(*path),
                    hint="describe the arguments with a pydantic model: `{python: module:Model}`"
                    if field == "input_schema" else
                    'write `anyOf: [{type: string}, {type: "null"}]` for a choice of types'))
