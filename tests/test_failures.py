"""A failure never passes unseen (issue 11): the router front desk whose deep reviewer
delegates with `task` runs everywhere, and `agentspec test` fails a scenario on any error it
does not declare, wherever the error happened: in an agent tool, a `task` delegation, a
planner node, a router's fallback chain; a script's own problems read as such."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentspec.cli import cli

FRONT_DESK = """\
    agentspec: 1
    name: front_desk
    root: front
    agents:
      front:
        kind: router
        sub_agents: [reviewer]
        route: {state: desk}
        default: reviewer
      reviewer:
        kind: deep
        description: Reviews.
        model: gemini-2.5-flash
        instruction: Review what you are given; check the details with `task`.
    """
FRONT_DESK_SCRIPT = """\
    messages: [Review my essay.]
    replies:
      reviewer:
        - call: task
          args: {description: Check the spelling., subagent_type: general-purpose}
        - {when: No spelling mistakes, text: Reviewed - all good.}
      general_purpose:
        - text: No spelling mistakes.
    expect:
      tools: [task]
      final: Reviewed - all good.
    """


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name="agentspec")


def _project(tmp_path: Path, spec: str, scenario: str, files: dict[str, str] | None = None
             ) -> Path:
    (tmp_path / "scenarios").mkdir(exist_ok=True)
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(spec))
    (tmp_path / "scenarios" / "spec.yaml").write_text(textwrap.dedent(scenario))
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    return tmp_path / "spec.yaml"


def test_a_router_front_desk_whose_deep_reviewer_delegates_with_task(tmp_path: Path) -> None:
    spec = _project(tmp_path, FRONT_DESK, FRONT_DESK_SCRIPT)
    done = invoke("run", str(spec), "--script", str(tmp_path / "scenarios" / "spec.yaml"))
    assert done.exit_code == 0, done.output
    assert "[general_purpose] No spelling mistakes." in done.stdout
    assert done.stdout.splitlines()[-1] == "[reviewer] Reviewed - all good."
    tested = invoke("test", str(spec))
    assert tested.exit_code == 0 and " PASSED" in tested.output, tested.output


MODELS = '''\
from google.adk.models.llm_response import LlmResponse
from google.genai import types


def scripted(callback_context, llm_request):
    """Stands in for the model: the reviewer delegates with `task`, then answers."""
    last = llm_request.contents[-1].parts[-1] if llm_request.contents else None
    if callback_context.agent_name == "general_purpose":
        part = types.Part(text="No spelling mistakes.")
    elif last is not None and last.function_response is not None:
        part = types.Part(text="Reviewed - all good.")
    else:
        part = types.Part(function_call=types.FunctionCall(
            name="task", args={"description": "Check the spelling.",
                               "subagent_type": "general-purpose"}))
    return LlmResponse(content=types.Content(role="model", parts=[part]))
'''


@pytest.mark.slow
def test_the_front_desk_through_adk_api_server(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """`adk api_server` (and `adk web`, the same app): a before_model callback stands in for
    the model, as no script can reach a server's own runner."""
    from fastapi.testclient import TestClient
    from google.adk.cli.fast_api import get_fast_api_app

    monkeypatch.setenv("ADK_DISABLE_LOAD_DOTENV", "1")
    spec = _project(tmp_path, textwrap.dedent(FRONT_DESK) + "    callbacks: {before_model: "
                    "[desk_models:scripted]}\n", FRONT_DESK_SCRIPT, {"desk_models.py": MODELS})
    assert invoke("build", str(spec), "-o", str(tmp_path / "out")).exit_code == 0
    server = get_fast_api_app(agents_dir=str(tmp_path / "out"), web=False,
                              session_service_uri="memory://", artifact_service_uri="memory://",
                              auto_create_session=True, use_local_storage=False)
    with TestClient(server) as client:
        done = client.post("/run", json={
            "app_name": "front_desk", "user_id": "u", "session_id": "s",
            "new_message": {"role": "user", "parts": [{"text": "Review my essay."}]}})
    assert done.status_code == 200, done.text
    events = done.json()
    assert [e for e in events if e.get("errorCode")] == []
    texts = [(e["author"], p["text"]) for e in events for p in (e.get("content") or {}).get(
        "parts", []) if p.get("text")]
    assert texts == [("general_purpose", "No spelling mistakes."),
                     ("reviewer", "Reviewed - all good.")]


AGENT_TOOL = """\
    agentspec: 1
    name: desk
    root: lead
    agents:
      lead:
        model: gemini-2.5-flash
        instruction: Ask the helper.
        tools: [{agent: helper}]
      helper: {description: Helps., model: gemini-2.5-flash, instruction: Help.}
    """


def _agent_tool(helper: str, expect: str = "") -> str:
    return f"""\
        messages: [Hi]
        replies:
          lead:
            - {{call: helper, args: {{request: help}}}}
            - {{text: Done.}}
          helper: {helper}
        expect:
          final: Done.
        {expect}
        """


def test_an_agent_tool_that_failed_fails_the_scenario(tmp_path: Path) -> None:
    spec = _project(tmp_path, AGENT_TOOL, _agent_tool("[{fail: the helper is down}]"))
    done = invoke("test", str(spec))
    assert done.exit_code == 1, done.output
    assert done.output.splitlines()[1] == "    unexpected error: agent `helper` failed: " \
        "ScriptedFailure: helper: the helper is down", done.output


def test_an_error_the_scenario_declares_passes_and_must_happen(tmp_path: Path) -> None:
    declared = "  errors: [{agent: helper, contains: the helper is down}]"
    spec = _project(tmp_path, AGENT_TOOL, _agent_tool("[{fail: the helper is down}]",
                                                      declared))
    done = invoke("test", str(spec))
    assert done.exit_code == 0, done.output
    _project(tmp_path, AGENT_TOOL, _agent_tool("[{text: Sure.}]", declared))
    done = invoke("test", str(spec))
    assert done.exit_code == 1
    assert "expected an error of agent 'helper' contains 'the helper is down'; there was " \
           "none" in done.output


def test_a_script_that_runs_out_inside_an_agent_tool_says_so(tmp_path: Path) -> None:
    spec = _project(tmp_path, AGENT_TOOL, _agent_tool("[]"))
    done = invoke("test", str(spec))
    assert done.exit_code == 1
    failures = done.output.splitlines()[1:-1]
    assert failures == ["    the script has no more replies for agent `helper`"], done.output
    ran = invoke("run", str(spec), "--script", str(tmp_path / "scenarios" / "spec.yaml"))
    assert ran.exit_code == 1
    assert "agentspec: the script has no more replies for agent `helper`" in ran.output


ROUTER = """\
    agentspec: 1
    name: desk
    root: front
    agents:
      front:
        kind: router
        sub_agents: [billing, general]
        route: {state: desk}
        default: billing
        fallback: [general]
      billing: {description: Bills., model: gemini-2.5-flash, instruction: Bill.}
      general: {description: Helps., model: gemini-2.5-flash, instruction: Help.}
    """


def test_a_script_that_runs_out_is_not_buried_in_a_fallback_chain(tmp_path: Path) -> None:
    spec = _project(tmp_path, ROUTER, """\
        messages: [Hi]
        replies:
          general: [{text: General answers.}]
        expect: {final: General answers.}
        """)
    done = invoke("test", str(spec))
    assert done.exit_code == 1
    assert done.output.splitlines()[1] == \
        "    the script has no more replies for agent `billing`", done.output


def test_a_reply_for_an_agent_that_does_not_exist_says_so(tmp_path: Path) -> None:
    spec = _project(tmp_path, AGENT_TOOL, _agent_tool("[{text: Sure.}]").replace(
        "  helper:", "  helpr:"))
    done = invoke("test", str(spec))  # refused before it runs, at the name (AS704)
    assert done.exit_code == 2
    assert "AS704 The spec has no agent with a model named `helpr` (hint: Did you mean " \
           "`helper`?)" in done.output


def test_a_broken_route_is_a_failure(tmp_path: Path) -> None:
    spec = _project(tmp_path, ROUTER.replace("route: {state: desk}",
                                             "route: {python: failing_route:choose}"), """\
        messages: [Hi]
        replies:
          billing: [{text: Billing answers.}]
        expect: {final: Billing answers.}
        """, {"failing_route.py": """\
        def choose(agent_names, ctx, failed):
            raise LookupError("no desk for this customer")
        """})
    done = invoke("test", str(spec))
    assert done.exit_code == 1
    assert "unexpected error: agent `front` failed: LookupError: no desk for this customer" \
        in done.output


DEEP = """\
    agentspec: 1
    name: desk
    root: lead
    agents:
      lead:
        kind: deep
        description: Leads.
        model: gemini-2.5-flash
        instruction: Delegate.
    """


def test_a_task_delegation_that_failed_fails_the_scenario(tmp_path: Path) -> None:
    spec = _project(tmp_path, DEEP, """\
        messages: [Hi]
        replies:
          lead:
            - call: task
              args: {description: Do it., subagent_type: general-purpose}
            - {when: the helper is down, text: It failed.}
          general_purpose: [{fail: the helper is down}]
        expect: {final: It failed.}
        """)
    done = invoke("test", str(spec))
    assert done.exit_code == 1, done.output
    assert "unexpected error: tool `task` of agent `lead` returned an error: ScriptedFailure: " \
           "general_purpose: the helper is down" in done.output


PLANNER = """\
    agentspec: 1
    name: desk
    root: plan
    agents:
      plan:
        kind: planner
        model: gemini-2.5-flash
        worker: {tools: [{agent: helper}]}
      helper: {description: Helps., model: gemini-2.5-flash, instruction: Help.}
    """


def test_an_agent_tool_that_failed_in_a_planner_node_fails_the_scenario(
        tmp_path: Path) -> None:
    spec = _project(tmp_path, PLANNER, """\
        messages: [Hi]
        replies:
          plan_planner: [{text: '{"kind": "llm", "subtasks": []}'}]
          plan_worker:
            - {call: helper, args: {request: help}}
            - {text: Done.}
          helper: [{fail: the helper is down}]
        expect: {final: Done.}
        """)
    done = invoke("test", str(spec))
    assert done.exit_code == 1, done.output
    assert "unexpected error: agent `helper` failed: ScriptedFailure: helper: the helper is " \
        "down" in done.output


APPROVAL = """\
    agentspec: 1
    name: desk
    root: lead
    tools:
      wipe: {python: approval_tools:wipe}
    agents:
      lead:
        model: gemini-2.5-flash
        instruction: Wipe when asked.
        tools: [wipe]
        interrupt_on: {wipe: true}
    """


def test_a_rejection_the_scenario_decides_is_no_error(tmp_path: Path) -> None:
    spec = _project(tmp_path, APPROVAL, """\
        messages: [Wipe it]
        replies:
          lead: [{call: wipe}, {text: Not wiped.}]
        decisions: [reject]
        expect: {final: Not wiped.}
        """, {"approval_tools.py": '''\
        def wipe() -> str:
            """Wipes."""
            return "wiped"
        '''})
    done = invoke("test", str(spec))
    assert done.exit_code == 0, done.output


@pytest.mark.parametrize(("entry", "code"), [
    ("[{tool: a, agent: b}]", "AS107"), ("[{contains: x}]", "AS703"),
    ("[{tool: a, x: 1}]", "AS101"), ("{tool: a}", "AS103"), ("[{tool: ''}]", "AS104"),
    ("[{agent: [a]}]", "AS103")])
def test_a_malformed_errors_entry_is_a_usage_error(tmp_path: Path, entry: str, code: str) -> None:
    spec = _project(tmp_path, AGENT_TOOL, f"messages: [Hi]\nexpect: {{errors: {entry}}}\n")
    done = invoke("test", str(spec))
    assert done.exit_code == 2 and ":2:" in done.output and code in done.output, done.output
    assert "is not a valid scenario file" in done.output
