"""`interrupt_on`: every tool kind x approve / edit / reject, through the generated package.

Each case builds the spec below into a package, loads it with ADK's own loader, and runs one
scripted turn: the agent calls a tool that needs approval, the run pauses, the decision is
given, the paused invocation resumes. What ran, and with which arguments, is read from what
the tools did (a log file the python and MCP tools append to, the state backend, the models a
sub-agent was asked with), not from what the tools answered.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentspec.compiler import compile_spec, emit_package, write_package
from agentspec.runtime.harness.approvals import Decision, PendingApproval
from agentspec.testing.scripted import ScriptedModel, install_script
from tests.buildkit import package_loader

TOOLS = '''\
import json, os


def _log(name, **args):
    with open(os.environ["APPROVAL_LOG"], "a") as log:
        log.write(json.dumps([name, args]) + "\\n")


def get_weather(city: str) -> dict:
    """Weather for a city."""
    _log("get_weather", city=city)
    return {"city": city, "sky": "clear"}


def send_email(to: str, body: str) -> dict:
    """Sends an email."""
    _log("send_email", to=to, body=body)
    return {"sent_to": to}


def delete_record(record_id: int) -> dict:
    """Deletes a record."""
    _log("delete_record", record_id=record_id)
    return {"deleted": record_id}
'''

SERVER = '''\
import json, os
try:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server

server = Server("calc")


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    with open(os.environ["APPROVAL_LOG"], "a") as log:
        log.write(json.dumps(["add", {"a": a, "b": b}]) + "\\n")
    return a + b


server.run()
'''

SPEC = f"""\
agentspec: 1
name: approvals_app
tools:
  lookup: {{python: matrix_tools:get_weather}}   # the spec name is not the function's name
  calc:
    mcp: {{command: {sys.executable!r}, args: [calc_server.py], cwd: ., timeout: 30,
          env: {{APPROVAL_LOG: "${{env.APPROVAL_LOG}}"}}}}
    filter: [add]
    prefix: calc
  artifacts: {{builtin: load_artifacts}}
backends:
  work: {{type: shell, root: ./work, timeout: 10}}
  files: {{type: composite, default: work, routes: {{/notes/: notes}}}}
  notes: {{type: state}}
agents:
  ops:
    model: gemini-2.5-flash
    instruction: Do what the user asks.
    tools: [lookup, {{python: matrix_tools:send_email}}, calc, artifacts, {{agent: helper}}]
    filesystem: files
    todos: true
    task: {{agents: [worker]}}
    interrupt_on:
      lookup: true                  # a python tool, by its spec name
      send_email: {{hint: Send this email?}}   # a python tool, by its function name
      add: true                     # an MCP tool, by its unprefixed name
      artifacts: true               # a builtin, by its spec name
      helper: true                  # an agent called as a tool
      write_file: true              # a harness file tool on a state route
      execute: true                 # the shell
      write_todos: true             # the todo list
      read_file: false              # explicitly off
      edit_file: {{decisions: [approve, reject]}}
  helper:
    description: Helps with one request.
    model: gemini-2.5-flash
    instruction: Help.
  worker:
    description: Works on records.
    model: gemini-2.5-flash
    instruction: Work on the records.
    tools: [{{python: matrix_tools:delete_record}}]
    interrupt_on: {{delete_record: true}}
"""


@dataclass
class Case:
    """A call the `ops` agent makes, its edited arguments, and how to read what ran."""

    call: str
    args: dict[str, Any]
    edited: dict[str, Any]
    ran: Callable[[Run], Any]  # None: it did not run; else what it ran with
    spec: str = "main"  # which build of the spec: see SPECS


@dataclass
class Run:
    log: list[tuple[str, dict[str, Any]]]
    state: dict[str, Any]
    results: list[tuple[str, Any]]  # (tool, response) of every function response
    models: dict[str, ScriptedModel]
    asked: list[PendingApproval]
    workspace: Path

    def logged(self, name: str) -> Any:
        found = [args for tool, args in self.log if tool == name]
        assert len(found) <= 1, found
        return found[0] if found else None


def _request_text(run: Run, agent: str) -> str | None:
    model = run.models[agent]
    if not model.requests:
        return None
    return " ".join(p.text for c in model.requests[0].contents for p in c.parts or []
                    if p.text)


def _written(run: Run) -> Any:
    files = run.state.get("agentspec:files:notes") or {}
    return {path: "".join(data["content"]) if isinstance(data["content"], list)
            else data["content"] for path, data in files.items()} or None


def _executed(run: Run) -> Any:
    marks = sorted(p.name for p in run.workspace.glob("*.mark"))
    return marks or None


def _todos(run: Run) -> Any:
    return run.state.get("agentspec:todos")


def _artifacts(run: Run) -> Any:
    for tool, response in run.results:
        if tool == "load_artifacts" and "error" not in response:
            payload = response.get("result", response)
            return payload.get("artifact_names")
    return None


CASES: dict[str, Case] = {
    "python by spec name": Case(
        "get_weather", {"city": "Paris"}, {"city": "Porto"},
        lambda run: run.logged("get_weather")),
    "python by function name": Case(
        "send_email", {"to": "a@example.com", "body": "hi"},
        {"to": "b@example.com", "body": "hello"}, lambda run: run.logged("send_email")),
    "mcp": Case("calc_add", {"a": 1, "b": 2}, {"a": 40, "b": 2},
                lambda run: run.logged("add")),
    "builtin": Case("load_artifacts", {"artifact_names": ["a.txt"]},
                    {"artifact_names": ["b.txt"]}, _artifacts),
    "agent tool": Case("helper", {"request": "summarise the plan"},
                       {"request": "summarise the budget"},
                       lambda run: _request_text(run, "helper")),
    "file tool": Case("write_file", {"file_path": "/notes/a.md", "content": "one"},
                      {"file_path": "/notes/b.md", "content": "two"}, _written),
    "execute": Case("execute", {"command": "touch first.mark"},
                    {"command": "touch second.mark"}, _executed),
    "todos": Case("write_todos", {"todos": [{"content": "a", "status": "pending"}]},
                  {"todos": [{"content": "b", "status": "in_progress"}]}, _todos),
    "task": Case("task", {"description": "clean up", "subagent_type": "worker"},
                 {"description": "archive", "subagent_type": "worker"},
                 lambda run: _request_text(run, "worker"), spec="gated_task"),
    "a task sub-agent's tool": Case(
        "delete_record", {"record_id": 7}, {"record_id": 8},
        lambda run: run.logged("delete_record")),
}

EXPECTED_RAN = {
    "python by spec name": ({"city": "Paris"}, {"city": "Porto"}),
    "python by function name": ({"to": "a@example.com", "body": "hi"},
                                {"to": "b@example.com", "body": "hello"}),
    "mcp": ({"a": 1, "b": 2}, {"a": 40, "b": 2}),
    "builtin": (["a.txt"], ["b.txt"]),
    "agent tool": ("summarise the plan", "summarise the budget"),
    "file tool": ({"/a.md": "one"}, {"/b.md": "two"}),  # the route strips /notes
    "execute": (["first.mark"], ["second.mark"]),
    "todos": ([{"content": "a", "status": "pending"}],
              [{"content": "b", "status": "in_progress"}]),
    "task": ("clean up", "archive"),
    "a task sub-agent's tool": ({"record_id": 7}, {"record_id": 8}),
}


#: `task` itself gated needs sub-agents without approvals of their own (AS232)
SPECS = {"main": SPEC, "gated_task": SPEC.replace(
    "      write_todos: true ", "      task: true\n      write_todos: true ").replace(
    "    interrupt_on: {delete_record: true}\n", "")}


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mcp")
    root = tmp_path_factory.mktemp("approvals")
    (root / "matrix_tools.py").write_text(TOOLS)
    (root / "calc_server.py").write_text(SERVER)
    (root / "work").mkdir()
    for name, text in SPECS.items():
        (root / f"{name}.yaml").write_text(text)
        compiled = compile_spec(root / f"{name}.yaml", environ={"APPROVAL_LOG": "x"})
        assert compiled.ok, [(d.code, d.message) for d in compiled.diagnostics]
        out = root / name
        assert write_package(emit_package(compiled, out), out) == []
    return root


def _replies(case: Case) -> dict[str, list[dict[str, Any]]]:
    if case.call == "delete_record":
        return {"ops": [{"call": "task", "args": {"description": "remove record 7",
                                                  "subagent_type": "worker"}},
                        {"text": "done"}],
                "worker": [{"call": "delete_record", "args": case.args}, {"text": "removed"}]}
    replies: dict[str, list[dict[str, Any]]] = {
        "ops": [{"call": case.call, "args": case.args}, {"text": "done"}]}
    if case.call == "helper":
        replies["helper"] = [{"text": "helped"}]
    if case.call == "task":
        replies["worker"] = [{"text": "worked"}]
    return replies


async def _drive(app: Any, replies: dict[str, list[dict[str, Any]]],
                 decisions: list[Decision], workspace: Path, log: Path) -> Run:
    from google.adk.artifacts import InMemoryArtifactService
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    from agentspec.testing.conversation import turn

    models = install_script(app.root_agent, replies)
    runner = Runner(app=app, session_service=InMemorySessionService(),
                    artifact_service=InMemoryArtifactService())
    asked: list[PendingApproval] = []
    results: list[tuple[str, Any]] = []

    def decide(pending: PendingApproval) -> Decision:
        asked.append(pending)
        return decisions.pop(0)

    def collect(event: Any) -> None:
        for part in (event.content.parts if event.content else None) or ():
            if part.function_response:
                results.append((part.function_response.name, part.function_response.response))

    try:
        session = await runner.session_service.create_session(app_name=app.name, user_id="user")
        left = await turn(runner, session.id, "go", decide=decide, on_event=collect)
        assert left == []
        stored = await runner.session_service.get_session(app_name=app.name, user_id="user",
                                                          session_id=session.id)
    finally:
        await runner.close()
    assert stored is not None
    entries = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return Run([(n, a) for n, a in entries], dict(stored.state), results, models, asked,
               workspace)


@pytest.fixture
def run_case(package: Path, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Callable[[Case, Decision], Run]:
    log = tmp_path / "log.jsonl"
    monkeypatch.setenv("APPROVAL_LOG", str(log))
    for mark in (package / "work").glob("*.mark"):
        mark.unlink()

    def run(case: Case, decision: Decision) -> Run:
        with package_loader(monkeypatch) as load:
            app = load(package / case.spec, "approvals_app")
            return asyncio.run(_drive(app, _replies(case), [decision],
                                      package / "work", log))

    return run


def _decision(kind: str, case: Case) -> Decision:
    if kind == "edit":
        return Decision("edit", args=case.edited)
    if kind == "reject":
        return Decision("reject", message="not now")
    return Decision("approve")


@pytest.mark.parametrize("kind", ["approve", "edit", "reject"])
@pytest.mark.parametrize("label", list(CASES))
def test_approval_matrix(label: str, kind: str, run_case: Callable[[Case, Decision], Run]
                         ) -> None:
    case = CASES[label]
    run = run_case(case, _decision(kind, case))
    # the person was asked about exactly this call, with the model's arguments
    assert [(p.tool, p.args) for p in run.asked][-1] == (case.call, case.args)
    original, edited = EXPECTED_RAN[label]
    assert case.ran(run) == {"approve": original, "edit": edited, "reject": None}[kind]
    responses = [r for tool, r in run.results if tool == case.call]
    assert "waiting for a person's approval" in responses[0]["error"]  # the pause
    final = responses[-1]
    if kind == "reject":
        assert "rejected" in final["error"] and "not now" in final["error"]
    elif kind == "edit":
        assert "edited this call" in final["note"]
    # the model went on after the decision (and after the sub-agent's, for delegation)
    assert run.models["ops"].replies == []


def test_the_hint_and_the_offered_decisions_reach_the_person(
        run_case: Callable[[Case, Decision], Run]) -> None:
    run = run_case(CASES["python by function name"], Decision("approve"))
    assert run.asked[0].hint == "Send this email?"
    assert run.asked[0].decisions == ("approve", "edit", "reject")
    assert run.asked[0].agent == "ops"


def test_a_decision_the_spec_does_not_offer_is_refused(
        run_case: Callable[[Case, Decision], Run]) -> None:
    case = Case("edit_file", {"file_path": "/notes/a.md", "old_string": "x", "new_string": "y"},
                {}, _written)
    run = run_case(case, Decision("edit", args={"file_path": "/etc/passwd", "old_string": "r",
                                                "new_string": "x"}))
    assert run.asked[0].decisions == ("approve", "reject")
    response = [r for tool, r in run.results if tool == "edit_file"][-1]
    assert "not one this call allows" in response["error"]


def test_a_tool_switched_off_runs_without_asking(
        run_case: Callable[[Case, Decision], Run]) -> None:
    case = Case("read_file", {"file_path": "/notes/missing.md"}, {}, _written)
    run = run_case(case, Decision("approve"))
    assert run.asked == []
    assert [tool for tool, _ in run.results] == ["read_file"]


def test_a_pending_call_never_runs(package: Path, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Nobody answers: the turn ends with the call waiting, and nothing ran."""
    log = tmp_path / "log.jsonl"
    monkeypatch.setenv("APPROVAL_LOG", str(log))
    case = CASES["python by spec name"]
    from google.adk.artifacts import InMemoryArtifactService
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    from agentspec.testing.conversation import turn

    async def main(app: Any) -> list[PendingApproval]:
        install_script(app.root_agent, {"ops": [{"call": case.call, "args": case.args}]})
        runner = Runner(app=app, session_service=InMemorySessionService(),
                        artifact_service=InMemoryArtifactService())
        try:
            session = await runner.session_service.create_session(app_name=app.name,
                                                                   user_id="user")
            return await turn(runner, session.id, "go", decide=lambda pending: None)
        finally:
            await runner.close()

    with package_loader(monkeypatch) as load:
        left = asyncio.run(main(load(package / "main", "approvals_app")))
    assert [(p.tool, p.args) for p in left] == [("get_weather", {"city": "Paris"})]
    assert not log.exists()


def test_the_generated_code_gates_every_kind(package: Path) -> None:
    text = (package / "main" / "approvals_app" / "agent.py").read_text()
    assert "gated(get_weather, {'decisions': ['approve', 'edit', 'reject']})" in text
    assert "resumability_config=resumable()" in text
    assert "'read_file'" not in text.split("approval_gate(", 1)[1].split(")", 1)[0]
