"""The real wire path: every shipped spec's scenarios run through google-genai's client and
ADK's `Gemini` model class against a fake Gemini API (tests/fakegemini) that checks each
request against the API's rules, in process and through `adk api_server` serving the
generated packages; a tool schema the API would refuse fails here, not in production."""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from agentspec.cli import cli
from agentspec.cli.test import load_scenarios, run_scenario
from tests.buildkit import ROOT
from tests.fakegemini import FakeGemini, serve
from tests.fakegemini.rules import problems

SPECS = sorted((ROOT / "specs").glob("*.yaml"))
#: a model any spec's non-Gemini agents are carried on over the wire (their provider's own
#: rules are not what this checks)
STAND_IN = "gemini-2.5-flash"
#: a planner's nodes ask role agents made at run time, `<planner>_1_2_worker`; the script
#: answers them as `<planner>_worker`
PLANNER_ROLE = re.compile(r"(?P<planner>.+?)(?:_\d+)+_(?P<role>planner|worker|synthesizer)")


def script_name(agent: str) -> str:
    found = PLANNER_ROLE.fullmatch(agent)
    return f"{found['planner']}_{found['role']}" if found else agent


def _cases() -> list[Any]:
    cases = []
    for spec in SPECS:
        file = spec.parent / "scenarios" / f"{spec.stem}.yaml"
        for index, scenario in enumerate(load_scenarios(file)):
            cases.append(pytest.param(spec, index, id=f"{spec.stem}::{scenario.name}"))
    return cases


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeGemini]:
    with serve(FakeGemini(alias=script_name)) as server:
        yield server


@pytest.fixture
def wire(fake: FakeGemini, monkeypatch: pytest.MonkeyPatch) -> FakeGemini:
    """google-genai pointed at the fake: any key, the Gemini API (not Vertex)."""
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
    monkeypatch.setenv("GOOGLE_API_KEY", "fake-key")
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    monkeypatch.delenv("GOOGLE_GENAI_USE_ENTERPRISE", raising=False)
    monkeypatch.setenv("SUPPORT_QUEUE_DIR", "/nonexistent-never-written")
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)  # research_desk's scenario file sets it
    fake.requests.clear()
    fake.violations.clear()
    fake.script_problems.clear()
    return fake


def over_the_wire(fake: FakeGemini) -> Callable[[Any, Mapping[str, list[Any]]],
                                                  Callable[[], list[str]]]:
    """A scenario's script served by the fake; every LLM agent talks to it through ADK's
    `Gemini` class (a model id resolves to it already; a LiteLLM model is carried on one)."""

    def script(root: Any, replies: Mapping[str, list[Any]]) -> Callable[[], list[str]]:
        from google.adk.agents import LlmAgent
        from google.adk.models.google_llm import Gemini

        from agentspec.runtime.agents import walk
        from agentspec.runtime.scripted import ScriptError

        agents = [a for a in walk(root) if isinstance(a, LlmAgent)]
        unknown = set(replies) - {a.name for a in agents}
        if unknown:
            raise ScriptError(f"replies for agents that are not here: {sorted(unknown)}")
        for agent in agents:
            if not isinstance(agent.model, str) and not isinstance(agent.model, Gemini):
                agent.model = Gemini(model=STAND_IN)
            assert isinstance(agent.canonical_model, Gemini), agent.name
        fake.load(replies, probes(agents))
        return lambda: fake.script_problems + fake.violations

    return script


def probes(agents: list[Any]) -> dict[str, str]:
    """Per agent, the start of its instruction's literal text (before any placeholder)."""
    found = {}
    for agent in agents:
        instruction = agent.instruction
        text = instruction if isinstance(instruction, str) else getattr(instruction, "text", "")
        literal = str(text).split("{", 1)[0].strip().splitlines()
        if literal:
            found[agent.name] = literal[0][:80]
    return found


@pytest.mark.parametrize(("spec", "index"), _cases())
def test_every_shipped_scenario_passes_over_the_wire(spec: Path, index: int,
                                                     wire: FakeGemini) -> None:
    scenario = load_scenarios(spec.parent / "scenarios" / f"{spec.stem}.yaml")[index]
    failures = run_scenario(spec, None, scenario, index, script=over_the_wire(wire))
    assert failures == [], "\n".join(failures)
    assert wire.requests and all(not r.problems for r in wire.requests)
    assert wire.replies == {} or all(not steps for steps in wire.replies.values()), \
        f"replies left unused: {wire.replies}"


# --- what the API refuses fails here --------------------------------------------------------

REFUSED_SPEC = """\
    agentspec: 1
    name: desk
    agents:
      desk:
        model: gemini-2.5-flash
        instruction: Help.
        tools: [{tool}]
    tools:
      weather: {{python: {module}:{weather}}}
      tag: {{python: {module}:tag}}
    """
REFUSED_TOOLS = """\
    def {weather}(city: str) -> dict:
        \"\"\"Looks the weather up.\"\"\"
        return {{"city": city}}


    def tag(tags: set[str]) -> dict:
        \"\"\"Tags the ticket (a set: JSON Schema's uniqueItems).\"\"\"
        return {{"tags": sorted(tags)}}
    """
LONG = "look_up_the_weather_for_a_city_by_its_name_and_its_country_and_date"


def _refused(fake: FakeGemini, tmp_path: Path, tool: str, weather: str = "weather"
             ) -> list[str]:
    module = f"{tool}_tools"  # a module of its own: no test imports another's
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(REFUSED_TOOLS.format(
        weather=weather)))
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(REFUSED_SPEC.format(
        tool=tool, weather=weather, module=module)))
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "spec.yaml").write_text(textwrap.dedent("""\
        messages: [Tag it]
        replies: {desk: [{text: Done.}]}
        expect: {final: Done.}
        """))
    [scenario] = load_scenarios(tmp_path / "scenarios" / "spec.yaml")
    return run_scenario(tmp_path / "spec.yaml", None, scenario, 0, script=over_the_wire(fake))


def test_a_tool_schema_the_api_refuses_fails_the_scenario(tmp_path: Path,
                                                          wire: FakeGemini) -> None:
    failures = _refused(wire, tmp_path, "tag")
    assert any("JSON Schema keyword 'uniqueItems' is not supported" in f for f in failures), \
        failures
    assert [r.problems != [] for r in wire.requests] == [True]  # answered with a 400
    assert wire.replies == {"desk": [{"text": "Done."}]}  # and the model never answered


def test_a_function_name_longer_than_the_api_takes_fails_the_scenario(
        tmp_path: Path, wire: FakeGemini) -> None:
    assert len(LONG) > 64
    failures = _refused(wire, tmp_path, "weather", weather=LONG)
    assert any("Invalid function name" in f for f in failures), failures
