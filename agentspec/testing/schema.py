"""The JSON Schema of scenario files, generated from their models (committed as
schemas/scenario.schema.json, printed by `agentspec schema --scenario`)."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from agentspec.language.schema import DRAFT, schema_dump
from agentspec.testing.models import ScenarioFile

__all__ = ["SCENARIO_SCHEMA_ID", "scenario_json_schema", "scenario_schema_text"]

SCENARIO_SCHEMA_ID = "https://agentspec.dev/schemas/scenario.schema.json"


def scenario_json_schema() -> dict[str, Any]:
    schema = TypeAdapter(ScenarioFile).json_schema(mode="validation")
    return {"$schema": DRAFT, "$id": SCENARIO_SCHEMA_ID, "title": "agentspec scenario file",
            "description": "Scripted conversations and what must come of them, run offline "
            "by `agentspec test`: one scenario, or several under `scenarios:`.", **schema}


def scenario_schema_text() -> str:
    """The scenario file schema exactly as committed."""
    return schema_dump(scenario_json_schema())
