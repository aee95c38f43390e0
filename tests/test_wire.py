"""The real wire path: every shipped spec's scenarios run through google-genai's client and
ADK's `Gemini` model class against a fake Gemini API (tests/fakegemini) that checks each
request against the API's rules, in process and through `adk api_server` serving the
generated packages; a tool schema the API would refuse fails here, not in production."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import textwrap
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from agentspec.cli import cli
from agentspec.testing.runner import load_scenarios, run_scenario
from tests.buildkit import ROOT, free_port, served
from tests.fakegemini import FakeGemini, serve, use_fake
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
    use_fake(monkeypatch, fake.url)
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
        from agentspec.testing.scripted import ScriptError

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
    assert not any(r.stream for r in wire.requests)  # ADK's default: generateContent
    assert wire.replies == {} or all(not steps for steps in wire.replies.values()), \
        f"replies left unused: {wire.replies}"


# --- the fake's rules, one by one -----------------------------------------------------------

USER = {"role": "user", "parts": [{"text": "Hi"}]}
CALL = {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]}
ANSWER = {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}
OBJECT = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}


def _declared(**declaration: Any) -> dict[str, Any]:
    return {"contents": [USER], "tools": [{"functionDeclarations": [
        {"name": "f", "description": "F.", **declaration}]}]}


@pytest.mark.parametrize(("body", "problem"), [
    ({"contents": [USER], "tolls": []}, 'Unknown name "tolls"'),
    ({"contents": []}, "contents is not specified"),
    ({"contents": [{"role": "assistant", "parts": [{"text": "Hi"}]}]}, "valid role"),
    ({"contents": [{"role": "user", "parts": [{"text": "a", "inlineData": {}}]}]},
     "exactly one of"),
    ({"contents": [CALL]}, "function call turn comes immediately after a user turn"),
    ({"contents": [USER, {"role": "model", "parts": [{"text": "Hm."}]}, CALL]},
     "function call turn comes immediately after a user turn"),
    ({"contents": [USER, ANSWER]}, "function response turn comes immediately after"),
    ({"contents": [USER, {"role": "model", "parts": [CALL["parts"][0]] * 2}, ANSWER]},
     "number of function response parts is equal"),
    ({"contents": [USER, CALL, {"role": "user", "parts": [{"functionResponse": {
        "name": "g", "response": {}}}]}]}, "do not answer the function calls"),
    ({"contents": [USER, CALL, {"role": "user", "parts": [{"functionResponse": {
        "name": "f", "response": [1]}}]}]}, "google.protobuf.Struct"),
    (_declared(name="9lives"), "Invalid function name"),
    (_declared(name="look up"), "Invalid function name"),
    (_declared(name="f" * 65), "Invalid function name"),
    ({"contents": [USER], "tools": [{"functionDeclarations": [{"name": "f"}, {"name": "f"}]}]},
     "Duplicate function declaration found: f"),
    (_declared(parameters={"type": "OBJECT"}, parametersJsonSchema=OBJECT),
     "mutually exclusive"),
    (_declared(parametersJsonSchema={"type": "string"}), "must describe an object"),
    (_declared(parametersJsonSchema={**OBJECT, "required": ["y"]}), "property is not defined"),
    (_declared(parametersJsonSchema={"type": "object", "properties": {
        "x": {"type": "string", "const": "a"}}}), "keyword 'const' is not supported"),
    (_declared(parametersJsonSchema={"type": "object", "properties": {
        "x": {"$ref": "#/$defs/X", "title": "X"}}, "$defs": {"X": {"type": "string"}}}),
     "only description and default can be set alongside it"),
    (_declared(parametersJsonSchema={"type": "object", "properties": {
        "x": {"$ref": "#/$defs/Y"}}}), "does not resolve"),
    (_declared(parametersJsonSchema={"type": "object", "properties": {
        "x": {"type": "text"}}}), "unknown type 'text'"),
    (_declared(parameters={"type": "OBJECT", "properties": {"x": {"type": "STRING",
                                                                 "additionalProperties": False}}}),
     'Unknown name "additionalProperties"'),
    (_declared(parameters={"type": "OBJECT", "properties": {"my-x": {"type": "STRING"}}}),
     "Parameter names must start with a letter"),
    (_declared(parameters={"type": "OBJECT", "properties": {"x": {"type": "INTEGER",
                                                                 "enum": ["1"]}}}),
     "only allowed for STRING type"),
    ({**_declared(parametersJsonSchema=OBJECT),
      "generationConfig": {"responseMimeType": "application/json"}},
     "Function calling with a response mime type: 'application/json' is unsupported"),
    ({**_declared(parametersJsonSchema=OBJECT), "tools": [
        {"functionDeclarations": [{"name": "f"}]}, {"googleSearch": {}}]},
     "Tool use with function calling is unsupported"),
    ({"contents": [USER], "generationConfig": {"responseJsonSchema": OBJECT}},
     "response_mime_type must be application/json"),
    ({"contents": [USER], "generationConfig": {"temperature": 3}}, "between 0 and 2"),
    ({"contents": [USER], "generation_config": {"thinking_config": {"budget": 1}}},
     'Unknown name "budget"'),
])
def test_each_rule_refuses_what_the_api_refuses(body: dict[str, Any], problem: str) -> None:
    found = problems(body, "gemini-2.5-flash")
    assert any(problem in p for p in found), found


def test_a_valid_request_breaks_no_rule() -> None:
    body = {**_declared(parametersJsonSchema={**OBJECT, "$defs": {"Y": {"type": "integer"}},
                                              "properties": {"x": {"type": "string"},
                                                             "y": {"$ref": "#/$defs/Y"}}}),
            "contents": [USER, CALL, ANSWER, {"role": "model", "parts": [{"text": "Done."}]}],
            "systemInstruction": {"role": "user", "parts": [{"text": "Be brief."}]},
            "generationConfig": {"temperature": 0.2, "thinkingConfig": {"thinkingBudget": 64}}}
    assert problems(body, "gemini-2.5-flash") == []
    # Gemini 3 models take a JSON answer and built-in tools beside functions
    mixed = {**_declared(parametersJsonSchema=OBJECT), "tools": [
        {"functionDeclarations": [{"name": "f"}]}, {"googleSearch": {}}],
        "generationConfig": {"responseMimeType": "application/json"}}
    assert problems(mixed, "gemini-3-pro-preview") == []


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
    module = f"wire_refused_{tool}"  # a module of its own, imported afresh
    sys.modules.pop(module, None)
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


# --- adk api_server serving the generated packages ------------------------------------------

#: specs api_server cannot serve offline, and why (their scenarios still run in process)
NOT_SERVED = {
    "research_desk": "its critic is a LiteLLM model (the litellm extra is not in the dev "
                     "extra) and its GitHub tools start an MCP server with npx; the in-process "
                     "run stubs both",
}
SERVED = [p for p in SPECS if p.stem not in NOT_SERVED]


@contextlib.contextmanager
def adk_server(kind: str, agents_dir: Path, env: Mapping[str, str], log: Path) -> Iterator[str]:
    """`adk api_server` or `adk web` (`kind`) in its own process on a free loopback port;
    its URL once it answers."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [str(Path(sys.executable).parent / "adk"), kind, "--host", "127.0.0.1",
               "--port", str(port), str(agents_dir)]
    with served(f"adk {kind}", command, ready=f"{url}/list-apps", log=log,
                env={**os.environ, **env}):
        yield url


def built_agents(spec: Path, env: Mapping[str, str]) -> list[Any]:
    """The spec's LLM agents, built in process (for the fake's probes)."""
    from google.adk.agents import LlmAgent

    from agentspec.compiler import build_objects, compile_spec
    from agentspec.runtime.agents import walk
    from agentspec.runtime.models import SCRIPTED

    compiled = compile_spec(spec, environ={**os.environ, **env})
    assert compiled.ok, compiled.diagnostics
    token = SCRIPTED.set(True)
    try:
        app, problems = build_objects(compiled)
    finally:
        SCRIPTED.reset(token)
    assert not problems, problems
    return [a for a in walk(app.root_agent) if isinstance(a, LlmAgent)]


def play_over_http(url: str, app: str, scenario: Any, jobs: str) -> Any:
    """The scenario through api_server's HTTP API (`/run_sse`, streaming: the models are
    asked with `streamGenerateContent`), approvals answered as its decisions; the Outcome
    `check` judges."""
    from google.adk.events.event import Event

    from agentspec.runtime.harness.approvals import answer, pending_approvals
    from agentspec.runtime.jobs.stores import open_store
    from agentspec.testing.scenarios import Outcome

    outcome = Outcome()
    decisions = list(scenario.decisions or [])
    client = httpx.Client(base_url=url, timeout=300)
    made = client.post(f"/apps/{app}/users/u/sessions", json={"state": scenario.state})
    assert made.status_code == 200, made.text
    session = made.json()["id"]
    for message in scenario.messages:
        content: dict[str, Any] = {"role": "user", "parts": [{"text": message}]}
        invocation = None
        while True:
            ran = client.post("/run_sse", json={
                "app_name": app, "user_id": "u", "session_id": session, "new_message": content,
                "invocation_id": invocation, "streaming": True})
            assert ran.status_code == 200, ran.text
            waiting = []
            for line in ran.text.splitlines():
                if not line.startswith("data: "):
                    continue
                data = json.loads(line.removeprefix("data: "))
                assert "error" not in data, data
                event = Event.model_validate(data)
                outcome.record(event)
                waiting += pending_approvals(event)
            if not waiting:
                break
            parts = []
            for pending in waiting:
                assert decisions, f"{pending.agent} asked to approve {pending.tool}, and " \
                    "the scenario has no decision left for it"
                decision = decisions.pop(0)
                if decision.kind == "reject":
                    outcome.settled.add(pending.call_id)
                parts.append(answer(pending, decision).model_dump(
                    mode="json", by_alias=True, exclude_none=True))
            content = {"role": "user", "parts": parts}
            invocation = waiting[0].invocation_id
    assert not decisions, f"decisions left unused: {decisions}"
    stored = client.get(f"/apps/{app}/users/u/sessions/{session}")
    outcome.state = dict(stored.json()["state"])
    outcome.jobs = [job.to_dict() for job in open_store(jobs).recent(session_id=session)]
    return outcome


@pytest.mark.slow
def test_every_served_scenario_passes_through_adk_api_server(
        tmp_path: Path, wire: FakeGemini) -> None:
    from agentspec.testing.scenarios import check

    jobs = f"sqlite:///{tmp_path / 'jobs.db'}"
    env = {"GOOGLE_GEMINI_BASE_URL": wire.url, "GOOGLE_API_KEY": "fake-key",
           "ADK_DISABLE_LOAD_DOTENV": "1", "AGENTSPEC_JOBS_STORE": jobs,
           "SUPPORT_QUEUE_DIR": "/nonexistent-never-written",
           "HOME": str(tmp_path)}  # ADK writes nothing into the real home
    out = tmp_path / "out"
    apps = {}  # spec -> its app's name (the package's)
    for spec in SERVED:
        before = set(out.iterdir()) if out.exists() else set()
        built = CliRunner().invoke(cli, ["build", str(spec), "-o", str(out)])
        assert built.exit_code == 0, built.output
        [package] = set(out.iterdir()) - before
        apps[spec] = package.name
    failures: dict[str, list[str]] = {}
    ran = []
    with adk_server("api_server", out, env, tmp_path / "api_server.log") as url:
        listed = httpx.get(f"{url}/list-apps").json()
        assert sorted(listed) == sorted(apps.values()), listed
        for spec in SERVED:
            for scenario in load_scenarios(spec.parent / "scenarios" / f"{spec.stem}.yaml"):
                wire.load(scenario.replies, probes(built_agents(spec, scenario.env)))
                wire.script_problems.clear()
                asked = len(wire.requests)
                outcome = play_over_http(url, apps[spec], scenario, jobs)
                assert len(wire.requests) > asked  # its models were asked over the wire
                found = wire.script_problems + wire.violations + check(scenario.expect,
                                                                       outcome)
                left = {a: s for a, s in wire.replies.items() if s}
                found += [f"replies left unused: {left}"] if left else []
                ran.append(f"{spec.stem}::{scenario.name}")
                if found:
                    failures[ran[-1]] = found
    assert failures == {}, json.dumps(failures, indent=2) + \
        f"\n(api_server's log: {tmp_path / 'api_server.log'})"
    assert len(ran) == len(SERVED)
    assert all(r.stream for r in wire.requests)  # /run_sse streaming: streamGenerateContent
