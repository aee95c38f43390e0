"""Agent Config trees that use only ADK's built-in classes: each converts, validates and
builds (objects and the generated package agree), and a scripted conversation through the
converted spec sends every agent's model the same first request as ADK's own `from_config`
on the original (system instruction, tool declarations, generation settings)."""

from __future__ import annotations

import ast
import shutil
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from agentspec.adkimport import import_adk
from agentspec.compiler import build_objects, compile_spec, emit_package, write_package
from agentspec.diagnostics import Severity
from tests.buildkit import fingerprint, package_loader, purge, scripted_turn

CONFIGS = Path(__file__).parent / "data" / "adk_configs"
SAMPLES = sorted(p.name for p in CONFIGS.iterdir() if (p / "root_agent.yaml").exists())
#: values for the environment variables the converted specs read secrets from (fakes)
ENVIRON = {"NOTES_HEADERS": '{"Authorization": "Bearer not-a-real-token", "Notes-Version": "1"}'}
#: warnings a conversion may carry: a secret moved to the environment
EXPECTED_WARNINGS = {"mcp_notes": {"AS615"}}

Replies = dict[str, list[dict[str, Any]]]
#: per sample, conversations (replies per agent, initial state) that reach every LLM agent
SCRIPTS: dict[str, list[tuple[Replies, dict[str, Any]]]] = {
    "basic_agent": [({"assistant": [{"text": "ok"}]}, {"topic": "gardening"})],
    "seq_pipeline": [({"code_writer": [{"text": "print(1)"}],
                       "code_reviewer": [{"text": "- fine"}],
                       "code_refactorer": [{"text": "print(2)"}]}, {})],
    "loop_refiner": [({"critic": [{"text": "too long"}, {"call": "exit_loop"}],
                       "reviser": [{"text": "shorter"}]}, {})],
    "llm_router": [({"front_desk": [{"transfer": "billing_agent"}],
                     "billing_agent": [{"text": "paid"}]}, {}),
                   ({"front_desk": [{"transfer": "support_agent"}],
                     "support_agent": [{"text": "restart it"}]}, {})],
    "tool_functions": [({"dice_agent": [{"call": "roll_die", "args": {"sides": 6}},
                                        {"text": "You rolled 4."}]}, {})],
    "agent_tools": [({"research_lead": [{"call": "summarizer", "args": {"request": "text"}},
                                        {"text": "done"}],
                      "summarizer": [{"text": "short"}]}, {})],
    "generate_settings": [({"careful_writer": [{"text": "Once."}]}, {})],
    "parallel_review": [({"optimist": [{"text": "great"}], "pessimist": [{"text": "risky"}],
                          "merger": [{"text": "test it"}]}, {})],
    "shared_helper": [({"drafter": [{"text": "one"}], "drafter_2": [{"text": "two"}]}, {})],
    # `{topic}` and `{user:audience}` come from the session's creator: the spec declares them
    # `required`, and both apps read the same values
    "caller_state": [({"researcher": [{"text": "eels migrate"}], "writer": [{"text": "brief"}]},
                      {"topic": "eels", "user:audience": "children"})],
}
#: ADK builds a file twice where the spec has an agent and its `extends` copy
ADK_NAMES = {"drafter_2": "drafter"}
#: ADK's AgentTool runs its agent with the identity paragraph every LLM agent gets; the
#: spec's `{agent: name}` is ADK 2.x's `single_turn` delegation, which leaves it out
AGENT_TOOL_AGENTS = {"agent_tools": ["summarizer"]}


@pytest.fixture
def agents_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A copy of the configs, importable the way ADK's agents directory is."""
    folder = tmp_path / "agents"
    shutil.copytree(CONFIGS, folder)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("ADK_ALLOW_CONFIG_STDIO_MCP_SERVERS", "1")
    for name, value in ENVIRON.items():
        monkeypatch.setenv(name, value)
    yield folder
    for sample in SAMPLES:
        purge(sample)


def _converted(folder: Path) -> Path:
    result = import_adk(folder)
    assert result.ok, result.diagnostics
    warned = {d.code for d in result.diagnostics if d.severity is Severity.WARNING}
    assert warned == EXPECTED_WARNINGS.get(folder.name, set())
    return result.output


def _spec_app(spec: Path) -> Any:
    compiled = compile_spec(spec, environ=ENVIRON)
    assert compiled.ok, compiled.diagnostics
    app, problems = build_objects(compiled)
    assert problems == []
    return app


def _adk_app(folder: Path) -> Any:
    from google.adk.agents.config_agent_utils import from_config
    from google.adk.apps import App

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        root = from_config(str(folder / "root_agent.yaml"))
    return App(name=f"{folder.name}_adk", root_agent=root)


def test_every_sample_has_a_script() -> None:
    assert set(SAMPLES) - {"mcp_notes"} == set(SCRIPTS)  # MCP: a server is started to list
    assert len(SAMPLES) >= 10


@pytest.mark.parametrize("sample", SAMPLES)
def test_sample_converts_validates_and_builds(sample: str, agents_dir: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _converted(agents_dir / sample)
    assert spec == agents_dir / f"{sample}.agentspec.yaml"  # beside the folder: modules import
    app = _spec_app(spec)
    compiled = compile_spec(spec, environ=ENVIRON)
    out = agents_dir.parent / "built"
    files = emit_package(compiled, out, version=None)
    for text in files.values():
        ast.parse(text)
    assert write_package(files, out) == []
    with package_loader(monkeypatch) as load:
        assert fingerprint(load(out, compiled.plan.app_name)) == fingerprint(app)


def _text(instruction: Any) -> Any:
    if instruction is None or isinstance(instruction, str):
        return instruction
    return [part.text for part in instruction.parts or []]


def _request(request: Any) -> dict[str, Any]:
    """What the model sees of an agent, apart from the conversation."""
    config = request.config
    declarations = sorted(
        (d.model_dump(exclude_none=True, mode="json")
         for tool in config.tools or [] for d in tool.function_declarations or []),
        key=lambda d: d["name"])
    settings = config.model_dump(exclude_none=True, mode="json",
                                 exclude={"system_instruction", "tools", "labels"})
    return {"instruction": _text(config.system_instruction), "tools": declarations,
            "settings": settings}


def _first_requests(app: Any, replies: Replies, state: dict[str, Any],
                    names: dict[str, str]) -> dict[str, Any]:
    said = scripted_turn(app, {names.get(k, k): v for k, v in replies.items()}, state=state)
    found = {}
    for agent in replies:
        model = said.models[names.get(agent, agent)]
        assert model.requests, f"{agent} was never asked"
        assert model.problems == []
        found[agent] = _request(model.requests[0])
    return found


@pytest.mark.parametrize("sample", sorted(SCRIPTS))
def test_first_requests_match_adk(sample: str, agents_dir: Path) -> None:
    folder = agents_dir / sample
    spec = _converted(folder)
    for replies, state in SCRIPTS[sample]:
        ours = _first_requests(_spec_app(spec), replies, state, {})
        theirs = _first_requests(_adk_app(folder), replies, state, ADK_NAMES)
        for copy, original in ADK_NAMES.items():  # the copy's own name, in its identity
            if copy in theirs:
                theirs[copy]["instruction"] = theirs[copy]["instruction"].replace(
                    f'name is "{original}"', f'name is "{copy}"')
        for agent in AGENT_TOOL_AGENTS.get(sample, []):
            instruction, _, identity = theirs[agent]["instruction"].partition(
                "\n\nYou are an agent.")
            assert identity.startswith(f' Your internal name is "{agent}"')
            theirs[agent]["instruction"] = instruction
        assert ours == theirs


def test_mcp_sample_builds_the_same_toolset(agents_dir: Path) -> None:
    """The MCP sample starts a server to list tools; the toolsets are compared instead."""
    folder = agents_dir / "mcp_notes"
    ours = _spec_app(_converted(folder)).root_agent.tools[0].inner  # in its stand-in
    theirs = _adk_app(folder).root_agent.tools[0]

    def facts(toolset: Any) -> dict[str, Any]:
        params = toolset._connection_params
        server = getattr(params, "server_params", params)
        return {"filter": toolset.tool_filter, "prefix": toolset.tool_name_prefix,
                "command": server.command, "args": server.args, "env": server.env}

    assert facts(ours) == facts(theirs)
    assert facts(ours)["env"]["NOTES_HEADERS"] == ENVIRON["NOTES_HEADERS"]


def test_samples_modules_are_not_left_imported() -> None:
    assert not any(name in sys.modules for name in ("tool_functions", "tool_functions.tools"))
