"""The two emitters agree: the in-memory App and the generated package, loaded the way
`adk run` / `adk web` load it, are the same App; and the loaded package runs offline."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from agentspec.compiler import build_objects, emit_package, write_package
from agentspec.testing.scripted import install_script
from tests.buildkit import (
    ROOT,
    agent_fingerprint,
    buildable_params,
    compiled,
    fingerprint,
    package_loader,
)


def _generated_app(path: Path, out: Path, load: Any) -> Any:
    result = compiled(path)
    assert result.plan is not None
    assert write_package(emit_package(result, out), out) == []
    return load(out, result.plan.app_name)


@pytest.fixture
def loader(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    with package_loader(monkeypatch) as load:
        yield load


@pytest.mark.parametrize("path", buildable_params())
def test_in_memory_and_generated_apps_have_the_same_fingerprint(
        path: Path, tmp_path: Path, loader: Any) -> None:
    from google.adk.apps import App

    in_memory, problems = build_objects(compiled(path))
    assert problems == []
    generated = _generated_app(path, tmp_path, loader)
    assert isinstance(generated, App)
    assert generated is not in_memory
    assert generated.root_agent is not in_memory.root_agent
    expected, actual = fingerprint(in_memory), fingerprint(generated)
    # compare agent by agent first, for a readable failure
    mine = {a["name"]: a for a in _flat(expected["root_agent"])}
    theirs = {a["name"]: a for a in _flat(actual["root_agent"])}
    assert list(mine) == list(theirs)
    for name in mine:
        assert _shallow(theirs[name]) == _shallow(mine[name]), name
    assert actual == expected


def _flat(agent: dict[str, Any]) -> list[dict[str, Any]]:
    return [agent, *(a for child in agent["sub_agents"] for a in _flat(child))]


def _shallow(agent: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in agent.items() if k != "sub_agents"}


def test_the_fingerprint_sees_what_the_spec_decides() -> None:
    """A control: changing a tool, a callback or a setting changes the fingerprint."""
    from google.adk.agents import LlmAgent

    def tool_a(city: str) -> dict[str, str]:
        """Look up a city."""
        return {"city": city}

    def tool_b(city: str, days: int) -> dict[str, str]:
        """Look up a city."""
        return {"city": city}

    tool_b.__name__ = tool_b.__qualname__ = "tool_a"  # same name, another declaration
    base = agent_fingerprint(LlmAgent(name="a", model="gemini-2.5-flash", tools=[tool_a]))
    assert base == agent_fingerprint(LlmAgent(name="a", model="gemini-2.5-flash",
                                              tools=[tool_a]))
    for other in (LlmAgent(name="a", model="gemini-2.5-flash", tools=[tool_b]),
                  LlmAgent(name="a", model="gemini-2.5-pro", tools=[tool_a]),
                  LlmAgent(name="a", model="gemini-2.5-flash", tools=[tool_a],
                           before_model_callback=tool_a),
                  LlmAgent(name="a", model="gemini-2.5-flash", tools=[tool_a], mode="chat")):
        assert agent_fingerprint(other) != base


# --- a scripted conversation through the loaded package ---------------------------------------


def _events(app: Any, message: str, state: dict[str, Any] | None = None) -> list[Any]:
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    async def main() -> list[Any]:
        runner = Runner(app=app, session_service=InMemorySessionService())
        try:
            session = await runner.session_service.create_session(
                app_name=app.name, user_id="u", state=state or {})
            content = types.Content(role="user", parts=[types.Part(text=message)])
            return [e async for e in runner.run_async(user_id="u", session_id=session.id,
                                                       new_message=content)]
        finally:
            await runner.close()

    return asyncio.run(main())


def _calls(events: list[Any]) -> list[str]:
    return [p.function_call.name for e in events for p in (e.content.parts if e.content else [])
            if p.function_call]


def _results(events: list[Any]) -> dict[str, Any]:
    return {p.function_response.name: p.function_response.response for e in events
            for p in (e.content.parts if e.content else []) if p.function_response}


def _final_text(events: list[Any]) -> tuple[str, str]:
    final = [e for e in events if e.is_final_response() and e.content and e.content.parts
             and any(p.text for p in e.content.parts)]
    assert final, "no final answer"
    return final[-1].author, "".join(p.text or "" for p in final[-1].content.parts)


FAKE_FORECAST = {
    "current": {"time": "2025-05-01T12:00", "weather_code": 1, "temperature_2m": 21.5,
                "apparent_temperature": 21.0, "relative_humidity_2m": 40,
                "wind_speed_10m": 8.0},
    "daily": {"time": ["2025-05-01", "2025-05-02"], "weather_code": [1, 61],
              "temperature_2m_min": [12.0, 11.0], "temperature_2m_max": [22.0, 18.0],
              "precipitation_sum": [0.0, 4.2], "precipitation_probability_max": [5, 70]}}


@pytest.fixture
def offline_weather(monkeypatch: pytest.MonkeyPatch) -> None:
    """The weather example's tool, without the network (Paris is in cities.json)."""
    monkeypatch.syspath_prepend(str(ROOT / "examples" / "weather"))
    import weather_tools

    monkeypatch.setattr(weather_tools, "_get_json", lambda url, params: FAKE_FORECAST)


#: per app: (message, replies per agent, agent that answers, the answer, tools that must run)
CONVERSATIONS: dict[str, tuple[str, dict[str, list[Any]], str, str, set[str]]] = {
    "weather_assistant": (
        "Weather in Paris for two days?",
        {"weather": [{"call": "get_weather", "args": {"city": "Paris", "days": 2}},
                     {"text": "Paris: mainly clear, 21.5C; rain tomorrow."}]},
        "weather", "Paris: mainly clear, 21.5C; rain tomorrow.", {"get_weather"}),
    "content_pipeline": (
        "Write about urban beekeeping",
        {"brief_writer": [{"text": "Topic: urban bees"}],
         "audience_researcher": [{"text": "city dwellers"}],
         "fact_finder": [{"text": "bees like roofs"}],
         "devils_advocate": [{"text": "stings"}],
         "drafter": [{"text": "# Bees\nBees are great. They live on roofs."}],
         "critic": [{"call": "text_stats", "args": {"text": "Bees are great. They live on roofs."}},
                    {"text": "NO MAJOR ISSUES"}],
         "reviser": [{"call": "exit_loop"}],
         "final_editor": [{"text": "Description: bees\nTags: a, b, c\n# Bees"}]},
        "final_editor", "Description: bees\nTags: a, b, c\n# Bees", {"text_stats", "exit_loop"}),
    "travel_desk": (
        "Do I need a visa for Tokyo? German passport, ten days.",
        {"concierge": [{"call": "find_city", "args": {"query": "Tokyo"}},
                       {"transfer": "visa_agent"}],
         "visa_agent": [{"call": "check_visa",
                         "args": {"nationality": "DE", "destination": "Tokyo", "stay_days": 10}},
                        {"text": "No visa needed for 10 days."}]},
        "visa_agent", "No visa needed for 10 days.", {"find_city", "check_visa"}),
    "support_desk": (
        "What does invoice INV-2025-0142 cover?",
        {"triage_classifier": [{"text": '{"agent": "billing", "reason": "an invoice"}'}],
         "billing": [{"call": "lookup_invoice", "args": {"invoice_id": "INV-2025-0142"}},
                     {"text": "Ten Team seats for March 2025."}]},
        "billing", "Ten Team seats for March 2025.", {"lookup_invoice"}),
    "research_planner": (
        "What is the capital of Portugal?",
        {"planner_planner": [{"text": '{"kind": "llm", "subtasks": []}'}],
         "planner_worker": [{"text": "Lisbon."}]},  # (its tools need the network)
        "planner_worker", "Lisbon.", set()),
    "deal_desk": (
        "Score deal D-1005",
        {"deal_assistant": [{"call": "scorer", "args": {"deal_id": "D-1005"}},
                            {"text": "Queued."}]},
        "deal_assistant", "Queued.", {"scorer"}),
    "dev_assistant": (
        "What is in the workspace?",
        {"assistant": [{"call": "write_todos", "args": {"todos": [
            {"content": "List the workspace", "status": "in_progress"}]}},
                       {"call": "ls", "args": {"path": "/"}},
                       {"call": "glob", "args": {"pattern": "**/*.py"}},
                       {"text": "The workspace is empty."}]},
        "assistant", "The workspace is empty.", {"write_todos", "ls", "glob"}),
}


@pytest.mark.parametrize("path", buildable_params())
def test_the_generated_package_runs_a_scripted_conversation(
        path: Path, tmp_path: Path, loader: Any, offline_weather: None) -> None:
    app = _generated_app(path, tmp_path, loader)
    if app.name not in CONVERSATIONS:
        pytest.fail(f"add a scripted conversation for {app.name} to CONVERSATIONS")
    message, replies, author, answer, tools = CONVERSATIONS[app.name]
    models = install_script(app.root_agent, replies)
    events = _events(app, message)
    assert _final_text(events) == (author, answer)
    assert tools <= set(_calls(events))
    results = _results(events)
    assert tools <= set(results)
    for name in tools - {"exit_loop"}:
        assert "error" not in str(results[name]).lower()[:40], results[name]
    for name, model in models.items():
        assert model.replies == [], f"{name} did not use all its replies"


# --- the registry trick: generated code with model ids runs against a fake `gemini-.*` -------


@pytest.fixture(scope="module")
def fake_gemini() -> Iterator[Any]:
    """Register a fake class for `gemini-.*` for this module only, then restore ADK's registry.
    Replies come from a queue per agent, found from the request's system instruction."""
    from google.adk.models import (
        BaseLlm,
        LlmCapabilities,
        LLMRegistry,
        LlmRequest,
        LlmResponse,
        registry,
    )

    from agentspec.testing.scripted import parse_step

    class Gemini(BaseLlm):
        queues: ClassVar[dict[str, list[Any]]] = {}
        seen: ClassVar[list[tuple[str, str]]] = []  # (agent, model id)

        @classmethod
        def supported_models(cls) -> list[str]:
            return [r"gemini-.*"]

        @property
        def capabilities(self) -> LlmCapabilities:
            return LlmCapabilities(output_schema_and_tools=True)

        async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                         ) -> AsyncGenerator[LlmResponse, None]:
            found = re.search(r'Your internal name is "([^"]+)"',
                              str(llm_request.config.system_instruction))
            agent = found.group(1) if found else "?"
            Gemini.seen.append((agent, self.model))
            yield LlmResponse(content=parse_step(agent, Gemini.queues[agent].pop(0)),
                              partial=False, turn_complete=True)

    saved = dict(registry._llm_registry_dict)
    LLMRegistry.register(Gemini)
    try:
        yield Gemini
    finally:
        registry._llm_registry_dict.clear()
        registry._llm_registry_dict.update(saved)
        LLMRegistry.resolve.cache_clear()


def test_the_registry_trick_runs_the_weather_package_offline(
        tmp_path: Path, loader: Any, offline_weather: None, fake_gemini: Any) -> None:
    from google.adk.models import LLMRegistry

    assert LLMRegistry.resolve("gemini-2.5-flash") is fake_gemini
    app = _generated_app(ROOT / "examples" / "weather" / "agent.yaml", tmp_path, loader)
    assert app.root_agent.model == "gemini-2.5-flash"  # a model id, not an object
    message, replies, author, answer, tools = CONVERSATIONS["weather_assistant"]
    fake_gemini.queues.clear()
    fake_gemini.queues.update({k: list(v) for k, v in replies.items()})
    fake_gemini.seen.clear()
    events = _events(app, message)
    assert _final_text(events) == (author, answer)
    assert set(_calls(events)) == tools
    assert _results(events)["get_weather"]["status"] == "success"
    assert fake_gemini.seen == [("weather", "gemini-2.5-flash")] * 2
    assert fake_gemini.queues == {"weather": []}


def test_running_a_workflow_app_raises_no_deprecation_warning() -> None:
    import warnings

    app, problems = build_objects(compiled(ROOT / "specs" / "travel_desk.yaml"))
    assert problems == []
    install_script(app.root_agent, {"concierge": [{"text": "Hello!"}]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        events = _events(app, "Hi")
    assert _final_text(events) == ("concierge", "Hello!")
    assert [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)
            and "Workflow" in str(w.message)] == []
