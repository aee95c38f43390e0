"""The JSON Schema of the language, generated from the models (committed under schemas/)."""

from __future__ import annotations

import json
from typing import Any

from agentspec.spec.document import Spec

__all__ = ["SCHEMA_ID", "json_schema", "schema_text"]

SCHEMA_ID = "https://agentspec.dev/schemas/agentspec.schema.json"


def json_schema() -> dict[str, Any]:
    schema = Spec.model_json_schema(mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
            **schema}


def schema_text() -> str:
    """The schema exactly as committed: stable key order, two-space indent, final newline."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"
