"""`adk web specs` lists the generated apps and nothing else: the tool packages beside the
shipped specs are namespace packages (no `__init__.py`), which ADK's agent loader skips."""

from __future__ import annotations

from pathlib import Path

from agentspec.emit.source import HEADER

SPECS = Path(__file__).resolve().parent.parent / "specs"


def test_adk_web_specs_lists_only_the_generated_apps() -> None:
    from google.adk.cli.utils.agent_loader import AgentLoader

    generated = sorted(p.parent.name for p in SPECS.glob("*/agent.py")
                       if p.read_text().startswith(HEADER.split("{")[0]))
    assert len(generated) >= 6
    assert AgentLoader(str(SPECS)).list_agents() == generated
    tools = sorted(p.name for p in SPECS.glob("*_tools"))
    assert len(tools) == 5 and not any((SPECS / t / "__init__.py").exists() for t in tools)
