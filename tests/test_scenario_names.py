"""The names scenarios are checked against (`agentspec.testing.names`, read from the compiled
tree without building anything) are the names a build really makes: every agent of the built
app, every LLM agent a script can give replies, every tool an agent's model is offered."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentspec.compiler import build_objects
from agentspec.runtime.models import SCRIPTED
from agentspec.testing.names import spec_names
from tests.buildkit import NEEDS_ENVIRON, buildable_params, compiled, llm_agents, walk


@pytest.mark.parametrize("path", buildable_params())
def test_the_checked_names_are_the_built_ones(path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from google.adk.tools.base_tool import BaseTool

    for key, value in NEEDS_ENVIRON.get(path.stem, {}).items():
        monkeypatch.setenv(key, value)
    spec = compiled(path)
    assert spec.app is not None
    names = spec_names(spec.app)
    token = SCRIPTED.set(True)
    try:
        app, built = build_objects(spec)
    finally:
        SCRIPTED.reset(token)
    assert built == []
    assert {a.name for a in walk(app.root_agent)} <= names.agents
    assert {a.name for a in llm_agents(app.root_agent)} <= names.scripted
    offered = {tool.name for agent in llm_agents(app.root_agent) for tool in agent.tools
               if isinstance(tool, BaseTool)}
    assert offered <= names.tools, offered - names.tools
