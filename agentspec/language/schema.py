"""The JSON Schema of the language, generated from the models (committed under schemas/)."""

from __future__ import annotations

import json
from typing import Any

from agentspec.language.document import Spec

__all__ = ["DRAFT", "SCHEMA_ID", "json_schema", "schema_dump", "schema_text"]

SCHEMA_ID = "https://agentspec.dev/schemas/agentspec.schema.json"
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def json_schema() -> dict[str, Any]:
    schema = Spec.model_json_schema(mode="validation")
    return {"$schema": DRAFT, "$id": SCHEMA_ID, **schema}


def schema_dump(schema: dict[str, Any]) -> str:
    """A schema as committed: stable key order, two-space indent, final newline."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def schema_text() -> str:
    """The schema exactly as committed (schemas/agentspec.schema.json)."""
    return schema_dump(json_schema())
