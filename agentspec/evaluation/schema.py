"""The JSON Schema of eval files, generated from their models (committed as
schemas/eval.schema.json, printed by `agentspec schema --eval`)."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from agentspec.evaluation.models import EvalFile
from agentspec.language.schema import DRAFT, schema_dump

__all__ = ["EVAL_SCHEMA_ID", "eval_json_schema", "eval_schema_text"]

EVAL_SCHEMA_ID = "https://agentspec.dev/schemas/eval.schema.json"


def eval_json_schema() -> dict[str, Any]:
    schema = TypeAdapter(EvalFile).json_schema(mode="validation")
    return {"$schema": DRAFT, "$id": EVAL_SCHEMA_ID, **schema,
            "title": "agentspec eval file"}


def eval_schema_text() -> str:
    """The eval file schema exactly as committed."""
    return schema_dump(eval_json_schema())
