"""`kind: router`: each route method, fallback before the first event (and not after), every
option failing, the choice recorded; through the generated package and `agentspec run`."""

from __future__ import annotations

import textwrap
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentspec.cli import cli
from agentspec.cli.run import run_failure
from agentspec.compiler import build_objects, compile_spec, emit_package, write_package
from agentspec.runtime.router import RoutingError, attempts_note
from agentspec.testing.scripted import ScriptedFailure, ScriptedModel
from tests.buildkit import ROOT, package_loader, scripted_turn

SPEC = """\
    agentspec: 1
    name: desk
    root: front
    agents:
      front:
        kind: router
        sub_agents: [billing, tech, general]
        route: {ROUTE}
        default: general
        fallback: [tech, general]
      billing: {{description: Invoices., instruction: Bill., model: gemini-2.5-flash}}
      tech: {{description: Faults., instruction: Fix., model: gemini-2.5-flash}}
      general: {{description: Anything else., instruction: Help., model: gemini-2.5-flash}}
    """
ROUTING = '''\
def choose(agent_names, ctx, failed):
    """billing first; after a failure, nothing (the fallback list decides)."""
    if failed:
        return None
    return ctx.state.get("preferred", "billing")
'''


def _spec(tmp_path: Path, route: str) -> Path:
    (tmp_path / "routing.py").write_text(ROUTING)
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(SPEC).replace("{{", "{").replace("}}", "}")
                    .replace("{ROUTE}", route))
    return path


def _app(tmp_path: Path, route: str) -> Any:
    compiled = compile_spec(_spec(tmp_path, route), environ={})
    assert compiled.ok, [(d.code, d.message) for d in compiled.diagnostics]
    app, problems = build_objects(compiled)
    assert problems == []
    return app


class AfterOneEvent(ScriptedModel):
    """Answers with a partial text, then fails: the failure comes after the first event."""

    async def generate_content_async(self, llm_request: Any, stream: bool = False
                                     ) -> AsyncGenerator[Any, None]:
        from google.adk.models.llm_response import LlmResponse
        from google.genai import types

        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="Half")]),
                          partial=True)
        raise ConnectionError("lost the stream")


def run(app: Any, replies: dict[str, list[Any]], state: dict[str, Any] | None = None,
        swap: dict[str, Any] | None = None) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """One turn; `swap` replaces the models of the named children after the script."""
    def prepare(app: Any) -> None:
        for agent in app.root_agent.sub_agents:
            if swap and agent.name in swap:
                agent.model = swap[agent.name]

    turn = scripted_turn(app, replies, "My invoice is wrong", state=state, prepare=prepare)
    return turn.said, turn.state


# route methods -------------------------------------------------------------------------------


def test_state_route_with_map(tmp_path: Path) -> None:
    app = _app(tmp_path, "{state: kind, map: {invoice: billing, bug: tech}}")
    said, state = run(app, {"billing": [{"text": "Billing here."}]}, state={"kind": "invoice"})
    assert said == [("billing", "Billing here.")]
    assert state["agentspec:route:front"] == {
        "agent": "billing", "key": "invoice",
        "reason": "state `kind` is 'invoice', mapped to 'billing'", "failed": []}


def test_state_route_unset_runs_the_default(tmp_path: Path) -> None:
    app = _app(tmp_path, "{state: kind}")
    said, state = run(app, {"general": [{"text": "General here."}]})
    assert said == [("general", "General here.")]
    assert state["agentspec:route:front"]["reason"] == "state `kind` is not set; the default"


def test_model_route_uses_structured_output(tmp_path: Path) -> None:
    app = _app(tmp_path, "{model: gemini-2.5-flash, instruction: Faults go to tech.}")
    said, state = run(app, {
        "front_classifier": [{"text": '{"agent": "tech", "reason": "a fault"}'}],
        "tech": [{"text": "Tech here."}]})
    assert said == [("tech", "Tech here.")]  # the classifier's answer is not in the chat
    assert state["agentspec:route:front"]["reason"] == "the classifier: a fault"
    classifier = app.root_agent.classifier
    assert classifier.output_schema["properties"]["agent"]["enum"] == ["billing", "tech",
                                                                        "general"]
    request = classifier.model.requests[0]
    assert "- tech: Faults." in request.config.system_instruction
    assert "Faults go to tech." in request.config.system_instruction
    assert [p.text for c in request.contents for p in c.parts] == ["My invoice is wrong"]


def test_a_classifier_answer_naming_no_agent_runs_the_default(tmp_path: Path) -> None:
    app = _app(tmp_path, "{model: gemini-2.5-flash}")
    said, state = run(app, {"front_classifier": [{"text": '{"agent": "sales"}'}],
                            "general": [{"text": "General here."}]})
    assert said == [("general", "General here.")]
    assert "not one of its agents; the default" in state["agentspec:route:front"]["reason"]


def test_python_route(tmp_path: Path) -> None:
    app = _app(tmp_path, "{python: routing:choose}")
    said, state = run(app, {"tech": [{"text": "Tech here."}]}, state={"preferred": "tech"})
    assert said == [("tech", "Tech here.")]
    assert state["agentspec:route:front"]["reason"] == "choose chose 'tech'"


# fallback -----------------------------------------------------------------------------------


def test_fallback_when_the_chosen_agent_fails_before_any_event(tmp_path: Path) -> None:
    app = _app(tmp_path, "{python: routing:choose}")
    said, state = run(app, {"billing": [{"fail": "billing is down"}],
                            "tech": [{"fail": "tech is down"}],
                            "general": [{"text": "General here."}]})
    assert said == [("general", "General here.")]
    record = state["agentspec:route:front"]
    assert record["agent"] == "general"
    assert [(f["agent"], f["error"]) for f in record["failed"]] == [
        ("billing", "ScriptedFailure: billing: billing is down"),
        ("tech", "ScriptedFailure: tech: tech is down")]


def test_no_fallback_after_the_first_event(tmp_path: Path) -> None:
    app = _app(tmp_path, "{python: routing:choose}")
    with pytest.raises(ConnectionError, match="lost the stream"):
        run(app, {"general": [{"text": "never"}]},
            swap={"billing": AfterOneEvent(agent="billing", replies=[], requests=[])})
    assert app.root_agent.sub_agents[2].model.requests == []  # general never ran


def test_every_option_failing_raises_the_first_error_with_the_chain(tmp_path: Path) -> None:
    app = _app(tmp_path, "{python: routing:choose}")
    with pytest.raises(ScriptedFailure) as raised:  # the chosen agent's own error
        run(app, {name: [{"fail": f"{name} is down"}] for name in ("billing", "tech",
                                                                    "general")})
    assert str(raised.value) == "billing: billing is down"
    note = attempts_note(raised.value)
    assert note is not None and note.startswith(
        "router front: every option failed before answering: ")
    for name in ("billing", "tech", "general"):
        assert f"{name}: ScriptedFailure: {name}: {name} is down" in note
    assert note.count("ScriptedFailure: billing") == 1  # never retried
    # blamed as what it is, the first agent's model, with the chain after it
    assert run_failure(raised.value, "billing") == (
        f"agent `billing`: model `scripted` failed: ScriptedFailure: billing: billing is down "
        f"({note})")


def test_a_route_without_a_usable_choice_or_default_is_a_routing_error(tmp_path: Path) -> None:
    path = _spec(tmp_path, "{state: kind}")
    path.write_text(path.read_text().replace("    default: general\n", ""))
    compiled = compile_spec(path, environ={})
    app, _ = build_objects(compiled)
    with pytest.raises(RoutingError, match="state `kind` is not set and it has no default"):
        run(app, {})


# where a router can sit ---------------------------------------------------------------------


PLACES = """\
    agentspec: 1
    name: places
    root: lead
    agents:
      lead:
        model: gemini-2.5-flash
        instruction: Delegate.
        tools: [{agent: picker}]
        sub_agents: [flow]
      flow:
        kind: sequential
        sub_agents: [picker_in_flow]
      picker:
        kind: router
        description: Picks a desk.
        sub_agents: [a]
        route: {state: desk}
        default: a
      picker_in_flow:
        kind: router
        sub_agents: [b]
        route: {state: desk}
        default: b
      a: {description: A., instruction: A., model: gemini-2.5-flash}
      b: {description: B., instruction: B., model: gemini-2.5-flash}
    """


def test_a_router_as_a_tool_and_inside_a_workflow(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(PLACES))
    app, problems = build_objects(compile_spec(path, environ={}))
    assert problems == []
    turn = scripted_turn(app, {
        "lead": [{"call": "picker", "args": {"request": "pick"}}, {"transfer": "flow"}],
        "a": [{"text": "A answers."}], "b": [{"text": "B answers."}]}, "go")
    assert ("a", "A answers.") in turn.said and ("b", "B answers.") in turn.said
    # the chosen agent's answer is the tool's result
    assert [r for tool, r in turn.results if tool == "picker"] == [{"result": "A answers."}]


# the generated package and the CLI ---------------------------------------------------------


def test_the_shipped_support_desk_through_its_generated_package(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = compile_spec(ROOT / "specs" / "support_router.yaml", environ={})
    out = tmp_path / "out"
    assert write_package(emit_package(compiled, out), out) == []
    assert "from agentspec.runtime.router import router" in \
        (out / "support_desk" / "agent.py").read_text()
    with package_loader(monkeypatch) as load:
        app = load(out, "support_desk")
        said, state = run(app, {
            "triage_classifier": [{"text": '{"agent": "tech", "reason": "a fault"}'}],
            "tech": [{"fail": "down"}],
            "general": [{"text": "General answers."}]})
    assert said == [("general", "General answers.")]
    assert state["agentspec:route:triage"]["failed"][0]["agent"] == "tech"


def test_agentspec_run_shows_the_choice(monkeypatch: pytest.MonkeyPatch,
                                        tmp_path: Path) -> None:
    monkeypatch.setenv("SUPPORT_QUEUE_DIR", str(tmp_path))
    done = CliRunner().invoke(cli, ["run", str(ROOT / "specs" / "support_router.yaml"),
                                    "--script", str(ROOT / "specs" / "scenarios" /
                                                    "support_router.yaml")])
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert lines[1].startswith("[triage] chose billing (the classifier: a duplicate charge")
    assert lines[1].endswith("which failed: ScriptedFailure: billing: The billing model is "
                             "unavailable.")
    assert lines[2] == "[triage] routes to general: the next fallback"
    assert lines[-1].startswith("[general] Duplicate charges are refunded in full.")


def test_the_python_route_is_asked_again_with_the_failed_names(tmp_path: Path) -> None:
    (tmp_path / "again.py").write_text(textwrap.dedent('''\
        async def choose(agent_names, ctx, failed):
            return "tech" if "billing" in failed else "billing"
        '''))
    app = _app(tmp_path, "{python: again:choose}")
    said, state = run(app, {"billing": [{"fail": "down"}], "tech": [{"text": "Tech here."}]})
    assert said == [("tech", "Tech here.")]  # not the fallback list's order
    assert state["agentspec:route:front"]["reason"] == "choose chose 'tech'"


def test_the_python_route_sees_each_failed_attempt_with_its_error(tmp_path: Path) -> None:
    (tmp_path / "seen.py").write_text(textwrap.dedent('''\
        SEEN = []

        def choose(agent_names, ctx, failed, attempts):
            SEEN.append([(a.agent, a.key, type(a.error).__name__, str(a.error))
                         for a in attempts])
            if any("quota" in str(a.error) for a in attempts):
                return "tech"
            return "billing"
        '''))
    app = _app(tmp_path, "{python: seen:choose}")
    said, _ = run(app, {"billing": [{"fail": "over quota"}], "tech": [{"text": "Tech here."}]})
    assert said == [("tech", "Tech here.")]  # routed around the error, not the fallback order
    import seen  # type: ignore[import-not-found]
    assert seen.SEEN == [[], [("billing", "billing", "ScriptedFailure", "billing: over quota")]]


def test_routes_map_the_keys_of_any_route_method(tmp_path: Path) -> None:
    (tmp_path / "keyed.py").write_text(textwrap.dedent('''\
        def choose(keys, ctx, failed, *, attempts=()):
            assert keys == ["money", "fault"], keys
            return "fault" if "money" in failed else "money"
        '''))
    app = _app(tmp_path, "{python: keyed:choose, routes: {money: billing, fault: tech}}")
    said, state = run(app, {"billing": [{"fail": "down"}], "tech": [{"text": "Tech here."}]})
    assert said == [("tech", "Tech here.")]
    record = state["agentspec:route:front"]
    assert (record["agent"], record["key"]) == ("tech", "fault")
    assert record["reason"] == "choose chose 'fault', mapped to 'tech'"

    app = _app(tmp_path, "{model: gemini-2.5-flash, routes: {money: billing, fault: tech}}")
    said, state = run(app, {
        "front_classifier": [{"text": '{"agent": "fault", "reason": "a fault"}'}],
        "tech": [{"text": "Tech here."}]})
    assert said == [("tech", "Tech here.")]
    classifier = app.root_agent.classifier
    assert classifier.output_schema["properties"]["agent"]["enum"] == ["money", "fault"]
    assert "- fault: Faults." in classifier.model.requests[0].config.system_instruction


def test_an_llm_agent_transfers_to_a_router(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent("""\
        agentspec: 1
        name: desk
        root: lead
        agents:
          lead: {model: gemini-2.5-flash, instruction: Hand over., sub_agents: [front]}
          front:
            kind: router
            description: Routes.
            sub_agents: [billing]
            route: {state: kind}
            default: billing
          billing: {description: Invoices., instruction: Bill., model: gemini-2.5-flash}
        """))
    app, problems = build_objects(compile_spec(path, environ={}))
    assert problems == []
    said, state = run(app, {"lead": [{"transfer": "front"}],
                            "billing": [{"text": "Billing here."}]})
    assert said == [("billing", "Billing here.")]
    assert state["agentspec:route:front"]["agent"] == "billing"
