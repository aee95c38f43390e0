"""Snapshots of what every LLM agent's model receives on its first request.

Each agent of each buildable spec runs alone (a fresh in-memory build, the app's plugins, the
agent as the root of a Runner) with one scripted `text: ok` reply, from a session whose state
has every `output_key` of the spec set to `<key>`. The snapshot pins the system instruction,
the tool declarations the model sees (names, docstring descriptions, parameter schemas), the
request's contents and generation settings. `pytest --snapshot-update` rewrites it.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentspec.compiler import Compiled, build_objects, compile_spec
from agentspec.ir.tree import (
    AgentNode,
    AgentToolNode,
    DeepNode,
    LlmFields,
    LlmNode,
    PlannerNode,
    RouterNode,
)
from agentspec.testing.scripted import install_script
from tests.buildkit import buildable, compiled, llm_agents
from tests.buildkit import walk as agents_under

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:T[0-9:.+]+)?(?: \([A-Z][a-z]+day\))?")


def _nodes(node: AgentNode) -> list[AgentNode]:
    found = [node]
    for child in node.children:
        found.extend(_nodes(child))
    if isinstance(node, LlmFields):
        for tool in node.tools:
            if isinstance(tool, AgentToolNode):
                found.extend(_nodes(tool.agent))
        for agent in node.task.values():
            found.extend(_nodes(agent))
    return found


def _cases() -> list[Any]:
    cases = []
    for path in buildable():
        app = compiled(path).app
        assert app is not None
        nodes = _nodes(app.root)
        names = sorted({n.name for n in nodes if isinstance(n, (LlmNode, DeepNode))} | {
            f"{n.name}_classifier" for n in nodes
            if isinstance(n, RouterNode) and n.route.model} | {
            f"{n.name}_{role}" for n in nodes if isinstance(n, PlannerNode)
            for role in ("planner", "worker", "synthesizer")})
        cases.extend(pytest.param(path, name, id=f"{app.name}/{name}") for name in names)
    return cases


def _stable(text: Any) -> Any:
    """Today's date (a travel_desk callback stamps it into state) as `<date>`."""
    return _DATE.sub("<date>", text) if isinstance(text, str) else text


def _content_text(content: Any) -> Any:
    if content is None or isinstance(content, str):
        return _stable(content)
    return [_stable(p.text) for p in content.parts or [] if p.text is not None]


def sample(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """A small value that satisfies a JSON Schema (required fields only)."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return sample(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [o for o in schema[key] if o.get("type") != "null"]
            return sample(options[0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "object")
    if kind == "object":
        properties = schema.get("properties", {})
        return {k: sample(properties[k], defs) for k in schema.get("required", [])}
    if kind == "array":
        return [sample(schema.get("items", {"type": "string"}), defs)
                for _ in range(max(1, schema.get("minItems", 1)))]
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    return {"string": "x", "boolean": False}[kind]


def _schema_of(value: Any) -> dict[str, Any]:
    return value.model_json_schema() if isinstance(value, type) else value


def _reply(agent: Any) -> dict[str, Any]:
    """`ok`, or a JSON value of the agent's output schema."""
    if agent.output_schema is None:
        return {"text": "ok"}
    return {"text": json.dumps(sample(_schema_of(agent.output_schema)))}


def _task_starter(agents: Any, agent: Any) -> tuple[Any, str] | None:
    """The agent whose `task` tool starts `agent`, and the subagent_type that names it."""
    for owner in agents:
        for tool in owner.tools:
            if getattr(tool, "name", None) != "task":
                continue
            for kind, started in getattr(tool, "agents", {}).items():
                if started is agent:
                    return owner, kind
    return None


def first_request(path: Path, agent_name: str) -> Any:
    return first_request_of(compiled(path), agent_name)


def first_request_of(result: Compiled, agent_name: str) -> Any:
    """The first request of `agent_name`'s model. The agent runs as the root, except a
    `single_turn` agent (ADK refuses it as a root): its parent calls it as a tool."""
    from google.adk.apps import App
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    built, problems = build_objects(result)  # fresh objects: the script replaces models
    assert problems == []
    agents = {a.name: a for a in llm_agents(built.root_agent)}
    agent = agents[agent_name]
    state = {a.output_key: f"<{a.output_key}>" for a in agents.values() if a.output_key}
    replies: dict[str, list[Any]] = {agent_name: [_reply(agent)]}
    root = agent
    starter = _task_starter(agents.values(), agent)
    owner = next((a for a in agents_under(built.root_agent)
                  if agent in (getattr(a, "inner_agents", None) or ())), None)
    answerer = agent_name
    if owner is not None and owner.name + "_classifier" != agent_name:  # a planner role
        root, answerer = owner, f"{owner.name}_synthesizer"
        split = json.dumps({"kind": "parallel", "subtasks": ["first part", "second part"]})
        direct = json.dumps({"kind": "llm", "subtasks": []})
        replies = {f"{root.name}_planner": [{"text": split}, {"text": direct},
                                            {"text": direct}],
                   f"{root.name}_worker": [{"text": "ok"}, {"text": "ok"}],
                   f"{root.name}_synthesizer": [{"text": "ok"}]}
    elif owner is not None:  # a router's classifier: the router runs, the classifier picks
        root, first = owner, owner.sub_agents[0].name
        replies[agent_name] = [{"text": json.dumps({"agent": first, "reason": "x"})}]
        replies[first] = [_reply(agents[first])]
    elif starter is not None:  # started by a `task` tool: its owner calls it
        root, kind = starter
        replies[root.name] = [{"call": "task", "args": {"description": "x", "subagent_type": kind}},
                              {"text": "done"}]
    elif agent.mode == "single_turn":
        root = agent.parent_agent
        tool = next(t for t in root.tools if getattr(t, "agent", None) is agent)
        arguments = sample(tool._get_declaration().parameters_json_schema)
        replies[root.name] = [{"call": agent_name, "args": arguments}, {"text": "done"}]
    models = install_script(built.root_agent, replies)
    text = "Hello!"
    if root is agent and agent.input_schema is not None:  # an offline agent, as a worker runs it
        text = json.dumps(sample(_schema_of(agent.input_schema)))
    app = App(name=built.name, root_agent=root, plugins=built.plugins)

    async def main() -> list[Any]:
        runner = Runner(app=app, session_service=InMemorySessionService())
        try:
            session = await runner.session_service.create_session(
                app_name=app.name, user_id="u", state=state)
            message = types.Content(role="user", parts=[types.Part(text=text)])
            return [e async for e in runner.run_async(user_id="u", session_id=session.id,
                                                       new_message=message)]
        finally:
            await runner.close()

    events = asyncio.run(main())
    assert models[agent_name].requests, f"{agent_name} was never asked"
    for name, model in models.items():
        assert model.replies == [], f"{name} did not use all its replies"
    assert any(e.author in (answerer, root.name) and e.is_final_response() for e in events)
    return models[agent_name].requests[0]


def _declarations(request: Any) -> list[dict[str, Any]]:
    found = [d.model_dump(exclude_none=True, mode="json")
             for tool in request.config.tools or [] for d in tool.function_declarations or []]
    return sorted(found, key=lambda d: d["name"])


def _settings(config: Any) -> dict[str, Any]:
    found = config.model_dump(exclude_none=True, mode="json",
                              exclude={"system_instruction", "tools", "labels",
                                       "response_schema"})
    schema = config.response_schema
    if isinstance(schema, type):
        found["response_schema"] = {schema.__name__: schema.model_json_schema()}
    elif schema is not None:
        found["response_schema"] = schema if isinstance(schema, dict) else schema.model_dump(
            exclude_none=True, mode="json")
    return found


@pytest.mark.parametrize(("path", "agent_name"), _cases())
def test_first_request(path: Path, agent_name: str, snapshot: Any) -> None:
    request = first_request(path, agent_name)
    declarations = _declarations(request)
    seen = {
        "system_instruction": _content_text(request.config.system_instruction),
        "tools": declarations,
        "contents": [(c.role, _content_text(c)) for c in request.contents],
        "settings": _settings(request.config),
    }
    assert seen == snapshot
    # what the snapshot must pin, whatever it holds
    assert seen["system_instruction"]
    assert all(d.get("description") for d in declarations), "a tool without a description"
    names = [d["name"] for d in declarations]
    assert len(names) == len(set(names))


def test_every_buildable_spec_has_first_request_cases() -> None:
    specs = {case.values[0] for case in _cases()}
    assert specs == set(buildable())


def test_an_agent_used_as_a_tool_is_not_offered_transfers(spec_dir: Any) -> None:
    path = spec_dir("""\
        agentspec: 1
        name: tool_agents
        root: lead
        agents:
          lead:
            model: gemini-2.5-flash
            instruction: Ask the helper.
            tools: [{agent: helper}]
            sub_agents: [colleague]
          helper:
            model: gemini-2.5-flash
            description: Answers one question.
            instruction: Answer the question.
          colleague:
            model: gemini-2.5-flash
            description: Takes over conversations.
            instruction: Chat.
        """)
    result = compile_spec(path, environ={})
    assert result.ok, [(d.code, d.message) for d in result.diagnostics]
    request = first_request_of(result, "helper")
    assert [d["name"] for d in _declarations(request)] == []
