"""Validate predicts build (issue 13, item 4): for generated specs of every kind, with tools,
schemas and names chosen to lean on what ADK refuses, a spec `validate` accepts builds, as
live objects and as a generated package, and that package imports through ADK's own loader.

The other direction is not claimed: validate may refuse what build would take (a warning is
not a refusal; a spec with only warnings must build). Failures found are pinned with
`@example`; the conftest's profile makes the run deterministic."""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, event, example, given, settings
from hypothesis import strategies as st

from agentspec.compiler import build_objects, compile_spec, emit_package, write_package
from agentspec.validate.check import check

pytestmark = pytest.mark.slow

MODEL = "gemini-2.5-flash"
TOOLS_PY = '''\
def search(query: str) -> str:
    """Search."""
    return query


def route(names, ctx, failed):
    return names[0]
'''

#: names that lean on what breaks generated code or ADK: its reserved words, names of the
#: generated module and of what it imports, Python keywords and dunders, long ones
TRICKY = ["user", "app", "root_agent", "main", "agent", "tools", "os", "sys", "google",
          "agentspec", "types", "class", "None", "self", "_x", "__init__", "__name__",
          "model_config", "json", "schema", "a" * 80, "x1", "Tool", "LlmAgent", "search"]
PLAIN = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)
NAMES = st.one_of(PLAIN, PLAIN, PLAIN, st.sampled_from(TRICKY))  # a tricky one in four
FIELD_TYPES = ["string", "integer", "number", "boolean", "array", "object", "null"]

field_schemas = st.recursive(
    st.fixed_dictionaries({"type": st.one_of(st.sampled_from(FIELD_TYPES),
                                             st.lists(st.sampled_from(FIELD_TYPES),
                                                      min_size=1, max_size=2, unique=True))},
                          optional={"description": st.sampled_from(["What it is.", ""])}),
    lambda inner: st.one_of(
        st.fixed_dictionaries({"type": st.just("array"), "items": inner}),
        st.fixed_dictionaries({"type": st.just("object"),
                               "properties": st.dictionaries(NAMES, inner, max_size=2)}),
        st.fixed_dictionaries({"anyOf": st.lists(inner, min_size=1, max_size=2)})),
    max_leaves=4)


@st.composite
def object_schemas(draw: st.DrawFn) -> dict[str, Any]:
    properties = draw(st.dictionaries(NAMES, field_schemas, max_size=3))
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if properties and draw(st.booleans()):
        schema["required"] = draw(st.lists(st.sampled_from(sorted(properties)), max_size=2,
                                           unique=True))
    return schema


SCHEMAS = st.one_of(object_schemas(), field_schemas,
                    st.sampled_from([{"type": "null"}, {"type": "object"}, {}]))
KINDS = ["llm", "deep", "sequential", "parallel", "loop", "router", "planner"]


@st.composite
def leaves(draw: st.DrawFn, name: str, others: list[str]) -> dict[str, Any]:
    """An LLM agent with tools, schemas and settings drawn."""
    agent: dict[str, Any] = {"kind": draw(st.sampled_from(["llm", "llm", "deep"])),
                             "model": MODEL, "description": f"Does {name}.",
                             "instruction": "Answer."}
    tools: list[Any] = []
    for tool in draw(st.lists(st.sampled_from(["python", "builtin", "mcp", "agent"]),
                              max_size=3, unique=True)):
        if tool == "python":
            tools.append({"python": "tools:search"})
        elif tool == "builtin":
            tools.append({"builtin": draw(st.sampled_from(["google_search", "url_context",
                                                           "load_memory"]))})
        elif tool == "mcp":
            tools.append({"mcp": {"command": sys.executable, "args": ["-c", "pass"]},
                          "prefix": draw(st.sampled_from(["srv", "a_b"]))})
        elif others:
            tools.append({"agent": draw(st.sampled_from(others))})
    if tools:
        agent["tools"] = tools
    if draw(st.booleans()):
        agent["output_schema"] = draw(SCHEMAS)
    if draw(st.booleans()):
        agent["output_key"] = draw(NAMES)
    if draw(st.booleans()):
        agent["generate"] = {"temperature": draw(st.sampled_from([0, 0.5, 2]))}
    return agent


@st.composite
def specs(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(NAMES, min_size=2, max_size=4, unique=True))
    root, children = names[0], names[1:]
    agents: dict[str, Any] = {}
    called = draw(st.lists(st.sampled_from(children), max_size=len(children), unique=True))
    for index, child in enumerate(children):
        agents[child] = draw(leaves(child, [c for c in children[index + 1:]]))
        if child in called and draw(st.booleans()):
            agents[child]["input_schema"] = draw(SCHEMAS)
    kind = draw(st.sampled_from(KINDS))
    top: dict[str, Any] = {"kind": kind, "description": "The entry."}
    if kind in ("llm", "deep"):
        top.update(model=MODEL, instruction="Route the request.")
        tools = [{"agent": c} for c in called]
        subs = [c for c in children if c not in called]
        if tools:
            top["tools"] = tools
        if subs:
            top["sub_agents"] = subs
    elif kind == "planner":
        top.update(model=MODEL, worker={"tools": [{"agent": c} for c in children]})
    else:
        top["sub_agents"] = children
        if kind == "loop":
            top["max_iterations"] = 1
        if kind == "router":
            top.update(route=draw(st.sampled_from([{"state": "desk"},
                                                   {"python": "tools:route"}])),
                       default=children[0])
    agents = {root: top, **agents}
    return {"agentspec": 1, "name": draw(NAMES), "description": "Generated.", "root": root,
            "agents": agents}


def _import(out: Path, package: str) -> Any:
    """The generated package's app, loaded as `adk run` / `adk web` load it."""
    from google.adk.cli.utils.agent_loader import AgentLoader

    saved, dotenv = list(sys.path), os.environ.get("ADK_DISABLE_LOAD_DOTENV")
    os.environ["ADK_DISABLE_LOAD_DOTENV"] = "1"  # no .env of the machine's is read
    before = set(sys.modules)
    assert package not in before  # validate refuses a name that is a module already
    try:
        importlib.invalidate_caches()
        return AgentLoader(agents_dir=str(out)).load_agent(package)
    finally:
        for module in set(sys.modules) - before:  # the package, and what only it imported
            if module == package or module.startswith(package + "."):
                del sys.modules[module]
        sys.path[:] = saved
        if dotenv is None:
            del os.environ["ADK_DISABLE_LOAD_DOTENV"]
        else:
            os.environ["ADK_DISABLE_LOAD_DOTENV"] = dotenv


def assert_validate_predicts_build(spec: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        project = Path(directory)
        (project / "tools.py").write_text(TOOLS_PY)
        path = project / "spec.yaml"
        path.write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True))
        validated = check(path, environ={})
        errors = [(d.code, d.message) for d in validated.diagnostics if d.is_error]
        event("validate refused" if errors else "validate accepted")
        if errors:
            return
        compiled = compile_spec(path, environ={})
        assert compiled.ok, [(d.code, d.message) for d in compiled.diagnostics if d.is_error]
        app, problems = build_objects(compiled)
        assert problems == [], [(d.code, d.message, d.span) for d in problems]
        assert app is not None and app.root_agent.name == spec["root"]
        out = project / "out"
        assert compiled.plan is not None
        assert write_package(emit_package(compiled, out), out) == []
        loaded = _import(out, compiled.plan.app_name)
        assert type(loaded).__name__ == "App" and loaded.root_agent.name == spec["root"]


def _one(name: str, **leaf: Any) -> dict[str, Any]:
    """A spec whose root calls one leaf as a tool."""
    return {"agentspec": 1, "name": name, "root": "main", "agents": {
        "main": {"model": MODEL, "instruction": "x", "tools": [{"agent": "leaf"}]},
        "leaf": {"model": MODEL, "instruction": "x", "description": "A leaf.", **leaf}}}


@settings(max_examples=200, deadline=None, phases=[p for p in Phase if p is not Phase.explain],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(spec=specs())
# found: validate accepted each, build failed with AS403 at the agent's key
@example(spec=_one("probe", input_schema={"type": "null"}))
@example(spec=_one("probe", input_schema={"type": "object",
                                          "properties": {"a": {"type": ["string", "null"]}}}))
@example(spec=_one("probe", input_schema={"type": "object",
                                          "properties": {"_a": {"type": "string"}}}))
@example(spec=_one("probe", input_schema={"type": "object",
                                          "properties": {"model_config": {"type": "string"}}}))
@example(spec=_one("probe", output_schema={"type": "object",
                                           "properties": {"a": {"type": ["string", "null"]}}}))
@example(spec=_one("user"))
@example(spec=_one("_app"))
@example(spec=_one("os"))  # found: a package named like a module it imports cannot load
@example(spec=_one("google"))
@example(spec=_one("tools"))
def test_a_spec_validate_accepts_builds_and_imports(spec: dict[str, Any]) -> None:
    assert_validate_predicts_build(spec)


def test_the_generator_reaches_specs_validate_accepts() -> None:
    """The property is not vacuous: most generated specs are accepted and built."""
    accepted = 0
    for spec in _samples(20):
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "spec.yaml"
            (Path(directory) / "tools.py").write_text(TOOLS_PY)
            path.write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True))
            accepted += check(path, environ={}).ok
    assert accepted >= 5, accepted


def _samples(count: int) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    @settings(max_examples=count, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(spec=specs())
    def collect(spec: dict[str, Any]) -> None:
        found.append(spec)

    collect()
    return found



@settings(max_examples=300, deadline=None)
@given(schema=SCHEMAS)
@example(schema={"type": "object", "properties": {"json": {"type": "string"}}})
@example(schema={"type": "object", "properties": {"a": {"type": "array", "items": True}}})
def test_a_schema_without_problems_is_one_adk_takes(schema: dict[str, Any]) -> None:
    """The schema rules validate applies (`agentspec.contract.adk_schemas`) against what really
    happens: no problem reported means pydantic makes the input model and ADK takes the
    output schema; a problem means the runtime's factory refuses it too."""
    from google.adk.agents import LlmAgent

    from agentspec.contract.adk_schemas import input_schema_problems, output_schema_problems
    from agentspec.runtime.schemas import UnsupportedSchema, model_from_json_schema

    if input_schema_problems(schema):
        with pytest.raises(UnsupportedSchema):
            model_from_json_schema("Args", schema)
    else:
        model = model_from_json_schema("Args", schema)
        assert set(model.model_json_schema()["properties"]) == set(schema["properties"])
    if not output_schema_problems(schema):
        LlmAgent(name="a", model=MODEL, output_schema=schema)


def test_the_bare_model_patterns_are_adks() -> None:
    """`agentspec.contract.adk_models` (what validate knows without importing ADK) is ADK's
    registry:
    its patterns for ids without a `/`, and ids that resolve in no installation. A process of
    its own: resolving drops a lazy entry whose package is missing from the live registry."""
    import json
    import subprocess

    from agentspec.contract.adk_models import BARE_MODEL_PATTERNS, never_resolves

    program = ("import json; from google.adk.models import registry; print(json.dumps("
               "[p for p in registry._llm_registry_dict if '/' not in p.replace('\\\\/', '/')]))")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=300, check=True)
    assert set(BARE_MODEL_PATTERNS) == set(json.loads(done.stdout.splitlines()[-1]))
    from google.adk.models import LLMRegistry

    for model_id in ("no-such-model", "gemni-2.5-flash", "x", "Gemini-2.5", "llama-3"):
        assert never_resolves(model_id)
        with pytest.raises(ValueError, match="not found"):
            LLMRegistry.resolve(model_id)
    for model_id in ("gemini-2.5-flash", "claude-sonnet-4-5", "gpt-4o", "o3-mini",
                     "openai/gpt-4o", "openai:gpt-4o", "projects/p/locations/l/endpoints/e",
                     "meta.llama-3"):
        assert not never_resolves(model_id)
