"""Semantic checks whose hints matter as much as their positions."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import located


@pytest.mark.parametrize(("tool", "field"), [
    ("ls", "`filesystem:"), ("execute", "`filesystem:"), ("write_todos", "`todos: true`"),
    ("task", "`task:`"), ("list_skills", "`skills:`"),
    ("google_search", "{builtin: google_search}"),
])
def test_a_harness_tool_in_tools_names_the_field_that_gives_it(
        check_yaml: Any, tool: str, field: str) -> None:
    result = check_yaml(f"""\
        agentspec: 1
        name: demo
        agents:
          main:
            instruction: Help.
            model: gemini-2.5-flash
            tools: [{tool}]
        """)
    assert located(result) == [("spec.yaml", 7, 13, "AS203")]
    hint = result.diagnostics[0].hint or ""
    assert field in hint, hint
