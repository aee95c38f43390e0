"""The JSON Schemas of the language, generated from the models (committed under schemas/):
the spec's, and the scenario file's (`agentspec test`)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter

from agentspec.spec.document import Spec

__all__ = ["SCENARIO_SCHEMA_ID", "SCHEMA_ID", "json_schema", "scenario_json_schema",
           "scenario_schema_text", "schema_text"]

SCHEMA_ID = "https://agentspec.dev/schemas/agentspec.schema.json"
SCENARIO_SCHEMA_ID = "https://agentspec.dev/schemas/scenario.schema.json"
_DRAFT = "https://json-schema.org/draft/2020-12/schema"


def json_schema() -> dict[str, Any]:
    schema = Spec.model_json_schema(mode="validation")
    return {"$schema": _DRAFT, "$id": SCHEMA_ID, **schema}


def scenario_json_schema() -> dict[str, Any]:
    from agentspec.testing.models import ScenarioFile

    schema = TypeAdapter(ScenarioFile).json_schema(mode="validation")
    return {"$schema": _DRAFT, "$id": SCENARIO_SCHEMA_ID,
            "title": "agentspec scenario file",
            "description": "Scripted conversations and what must come of them, run offline "
            "by `agentspec test`: one scenario, or several under `scenarios:`.", **schema}


def _text(schema: dict[str, Any]) -> str:
    """Exactly as committed: stable key order, two-space indent, final newline."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def schema_text() -> str:
    """The spec schema exactly as committed (schemas/agentspec.schema.json)."""
    return _text(json_schema())


def scenario_schema_text() -> str:
    """The scenario file schema exactly as committed (schemas/scenario.schema.json)."""
    return _text(scenario_json_schema())
