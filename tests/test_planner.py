"""`kind: planner`: a plan three levels deep, the depth and subtask limits against a model
that ignores them, malformed plans, the places a planner can sit; through the generated
package and `agentspec run`."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentspec.cli import cli
from agentspec.compiler import build_objects, compile_spec, emit_package, write_package
from agentspec.parse import load
from agentspec.testing.scripted import ScriptedModel
from tests.buildkit import ROOT, package_loader, scripted_turn

SCENARIO = ROOT / "specs" / "scenarios" / "planner.yaml"


def plan(kind: str, *subtasks: str) -> dict[str, str]:
    return {"text": json.dumps({"kind": kind, "subtasks": list(subtasks), "reason": "r"})}


def run(app: Any, replies: dict[str, list[Any]], message: str = "Big task"
        ) -> tuple[list[tuple[str, str]], dict[str, Any], dict[str, ScriptedModel]]:
    turn = scripted_turn(app, replies, message)
    return turn.said, turn.state, turn.models


def records(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k.removeprefix("agentspec:plan:"): v for k, v in state.items()
            if k.startswith("agentspec:plan:")}


def _text(request: Any) -> str:
    """What a request says: its system instruction and contents (a role with a static
    instruction gets the node's context as content)."""
    return "\n".join([str(request.config.system_instruction)] + [
        p.text or "" for c in request.contents for p in c.parts or []])


def _system(model: ScriptedModel, needle: str) -> str:
    found = [_text(r) for r in model.requests if needle in _text(r)]
    assert len(found) == 1, (needle, len(found))
    return found[0]


# three levels, through the generated package --------------------------------------------------


def test_the_shipped_research_planner_three_levels_deep(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = compile_spec(ROOT / "specs" / "planner.yaml", environ={})
    out = tmp_path / "out"
    assert write_package(emit_package(compiled, out), out) == []
    script = load(SCENARIO).value
    with package_loader(monkeypatch) as load_package:
        app = load_package(out, "research_planner")
        said, state, models = run(app, script["replies"], script["messages"][0])
    nodes = records(state)
    assert sorted(nodes) == ["planner", "planner_1", "planner_1_1", "planner_1_2",
                             "planner_1_2_1", "planner_1_2_2", "planner_2"]
    assert {n: (r["kind"], r["depth"]) for n, r in nodes.items()} == {
        "planner": ("parallel", 1), "planner_1": ("sequential", 2), "planner_2": ("llm", 2),
        "planner_1_1": ("llm", 3), "planner_1_2": ("parallel", 3),
        "planner_1_2_1": ("llm", 4), "planner_1_2_2": ("llm", 4)}
    # results: leaves from workers, parallel nodes from the synthesizer, sequences from the
    # last step
    assert nodes["planner_1_1"]["result"].startswith("The AI Office and national")
    assert nodes["planner_1_2"]["result"].startswith("The AI Office handles model providers")
    assert nodes["planner_1"]["result"] == nodes["planner_1_2"]["result"]
    assert nodes["planner"]["result"].startswith("The EU regulates")
    assert said[-1] == ("planner_synthesizer", nodes["planner"]["result"])
    for model in models.values():
        assert model.replies == []
    # a sequential step sees the previous one's result; every node sees its ancestors
    compare = _system(models["planner_planner"], "Your task: Compare the duties")
    assert "The previous step's result:\nThe AI Office and national" in compare
    assert "1. How do the EU and the US regulate" in compare
    assert "2. EU rules for general-purpose AI models" in compare
    leaf = _system(models["planner_worker"], "Your task: Duties of the AI Office")
    assert "3. Compare the duties those bodies enforce" in leaf
    assert "Research only the subtask you are given." in leaf  # the spec's worker instruction
    assert models["planner_worker"].requests[0].config.temperature == 0.2  # model `smart`
    # nodes below max_depth (3) are never planned
    assert not any("Your task: Duties of the AI Office" in _text(r)
                   for r in models["planner_planner"].requests)
    assert "past max_depth 3" in nodes["planner_1_2_1"]["notes"][0]


def test_agentspec_run_shows_the_plan_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BRAVE_SEARCH_API_KEY", raising=False)
    done = CliRunner().invoke(cli, ["run", str(ROOT / "specs" / "planner.yaml"),
                                    "--script", str(SCENARIO)])
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert "[planner] splits in parallel: How do the EU and the US regulate" in lines[1]
    assert "  [planner_1] splits in sequence: EU rules for general-purpose AI models" in lines
    assert "      [planner_1_2_1] answers directly: Duties of the AI Office" in lines
    assert lines[-1].startswith("[planner_synthesizer] The EU regulates")


# limits and malformed plans ------------------------------------------------------------------

SPEC = """\
    agentspec: 1
    name: planning
    agents:
      boss:
        kind: planner
        model: gemini-2.5-flash
        max_depth: {depth}
        max_subtasks: {subtasks}
    """


def _app(tmp_path: Path, depth: int = 1, subtasks: int = 2) -> Any:
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(SPEC).format(depth=depth,
                                                                      subtasks=subtasks))
    app, problems = build_objects(compile_spec(tmp_path / "spec.yaml", environ={}))
    assert problems == []
    return app


def test_limits_hold_against_a_model_that_ignores_them(tmp_path: Path) -> None:
    app = _app(tmp_path, depth=1, subtasks=2)
    said, state, models = run(app, {
        "boss_planner": [plan("parallel", "a", "b", "c", "d", "e"),
                         plan("parallel", "never", "asked")],
        "boss_worker": [{"text": "A"}, {"text": "B"}],
        "boss_synthesizer": [{"text": "A and B"}]})
    nodes = records(state)
    assert sorted(nodes) == ["boss", "boss_1", "boss_2"]
    assert nodes["boss"]["subtasks"] == ["a", "b"]
    assert nodes["boss"]["dropped"] == ["c", "d", "e"]
    assert "3 subtasks past max_subtasks 2 dropped" in nodes["boss"]["notes"]
    assert len(models["boss_planner"].requests) == 1  # depth 2 is past max_depth 1
    assert models["boss_planner"].replies == [plan("parallel", "never", "asked")]
    assert nodes["boss"]["result"] == "A and B"


def test_a_malformed_plan_is_asked_again_once(tmp_path: Path) -> None:
    app = _app(tmp_path, depth=2)
    _, state, models = run(app, {
        "boss_planner": [{"text": "not json"}, plan("sequential", "first", "second"),
                         plan("llm"), plan("llm")],
        "boss_worker": [{"text": "one"}, {"text": "two"}]})
    nodes = records(state)
    assert nodes["boss"]["kind"] == "sequential"
    assert nodes["boss"]["notes"] == ["attempt 1: the plan is malformed: 'not json'"]
    assert "was not a valid plan" in _text(models["boss_planner"].requests[1])
    assert nodes["boss"]["result"] == "two"


def test_a_plan_malformed_twice_is_answered_directly(tmp_path: Path) -> None:
    app = _app(tmp_path)
    said, state, _ = run(app, {
        "boss_planner": [{"text": '{"kind": "split"}'}, {"text": '{"kind": "parallel", '
                                                              '"subtasks": "a, b"}'}],
        "boss_worker": [{"text": "Directly."}]})
    record = records(state)["boss"]
    assert record["kind"] == "llm" and record["notes"][-1] == "answered directly"
    assert said == [("boss_worker", "Directly.")]


def test_braces_in_a_task_reach_the_model_verbatim(tmp_path: Path) -> None:
    app = _app(tmp_path)
    _, _, models = run(app, {"boss_planner": [plan("llm")],
                             "boss_worker": [{"text": "ok"}]}, 'Format as {"k": {name}}')
    assert 'Your task: Format as {"k": {name}}' in _text(models["boss_worker"].requests[0])


# where a planner can sit ----------------------------------------------------------------------

PLACES = """\
    agentspec: 1
    name: places
    root: lead
    agents:
      lead:
        model: gemini-2.5-flash
        instruction: Delegate.
        tools: [{agent: quick}]
        sub_agents: [flow]
      flow:
        kind: sequential
        sub_agents: [slow]
      quick: {kind: planner, description: Plans quickly., model: gemini-2.5-flash}
      slow: {kind: planner, model: gemini-2.5-flash}
    """


def test_a_planner_as_a_tool_and_inside_a_workflow(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(PLACES))
    app, problems = build_objects(compile_spec(tmp_path / "spec.yaml", environ={}))
    assert problems == []
    said, state, models = run(app, {
        "lead": [{"call": "quick", "args": {"request": "plan the picnic"}},
                 {"transfer": "flow"}],
        "quick_planner": [plan("llm")], "quick_worker": [{"text": "Picnic planned."}],
        "slow_planner": [plan("llm")], "slow_worker": [{"text": "Slowly done."}]})
    assert ("slow_worker", "Slowly done.") in said
    assert records(state)["quick"]["task"] == "plan the picnic"  # the tool's request
    assert records(state)["quick"]["result"] == "Picnic planned."
    answer = [r for r in models["lead"].requests[1].contents
              for p in r.parts or [] if p.function_response]
    assert answer[0].parts[0].function_response.response == {"result": "Picnic planned."}


def test_an_llm_agent_transfers_to_a_planner(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(textwrap.dedent("""\
        agentspec: 1
        name: handover
        root: lead
        agents:
          lead: {model: gemini-2.5-flash, instruction: Hand over., sub_agents: [boss]}
          boss: {kind: planner, description: Plans., model: gemini-2.5-flash, max_depth: 1}
        """))
    app, problems = build_objects(compile_spec(tmp_path / "spec.yaml", environ={}))
    assert problems == []
    said, state, _ = run(app, {"lead": [{"transfer": "boss"}],
                               "boss_planner": [plan("llm")],
                               "boss_worker": [{"text": "Planned and done."}]}, "Do it")
    assert said == [("boss_worker", "Planned and done.")]
    assert records(state)["boss"]["task"] == "Do it"


def test_the_worker_instruction_reads_state_like_any_instruction(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(textwrap.dedent("""\
        agentspec: 1
        name: planning
        agents:
          boss:
            kind: planner
            model: gemini-2.5-flash
            max_depth: 1
            worker: {instruction: "Write for {audience?}; keep {{literal}} as it is."}
        """))
    app, problems = build_objects(compile_spec(tmp_path / "spec.yaml", environ={}))
    assert problems == []
    from tests.buildkit import scripted_turn

    turn = scripted_turn(app, {"boss_planner": [plan("llm")], "boss_worker": [{"text": "ok"}]},
                         "Task {x}", state={"audience": "engineers"})
    text = _text(turn.models["boss_worker"].requests[0])
    assert "Write for engineers; keep {literal} as it is." in text
    assert "Your task: Task {x}" in text


# the final answer in state: output_key -------------------------------------------------------

HANDOFF = """\
    agentspec: 1
    name: handoff
    agents:
      flow:
        kind: sequential
        sub_agents: [research, writer]
      research:
        kind: planner
        model: gemini-2.5-flash
        max_depth: 2
        output_key: report
      writer:
        model: gemini-2.5-flash
        instruction: "Rewrite for a child: {report}"
    """


@pytest.mark.parametrize("through", ["memory", "package"])
def test_a_planners_output_key_holds_the_synthesized_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, through: str) -> None:
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(HANDOFF))
    compiled = compile_spec(tmp_path / "spec.yaml", environ={})
    assert compiled.ok, compiled.diagnostics
    replies = {"research_planner": [plan("parallel", "part a", "part b"), plan("llm"),
                                    plan("llm")],
               "research_worker": [{"text": "A found."}, {"text": "B found."}],
               "research_synthesizer": [{"text": "A and B, merged."}],
               "writer": [{"text": "Simple words."}]}
    if through == "memory":
        app, problems = build_objects(compiled)
        assert problems == []
        said, state, models = run(app, replies)
    else:
        out = tmp_path / "out"
        files = emit_package(compiled, out)
        assert "output_key='report'" in "\n".join(files.values())
        assert write_package(files, out) == []
        with package_loader(monkeypatch) as load_package:
            said, state, models = run(load_package(out, "handoff"), replies)
    assert state["report"] == "A and B, merged." == records(state)["research"]["result"]
    assert "Rewrite for a child: A and B, merged." in _text(models["writer"].requests[0])
    assert said[-1] == ("writer", "Simple words.")


def test_results_key_gives_later_agents_every_nodes_result(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(HANDOFF).replace(
        "output_key: report", "output_key: report\n    results_key: findings").replace(
        "Rewrite for a child: {report}", "Check every step: {findings}"))
    compiled = compile_spec(tmp_path / "spec.yaml", environ={})
    assert compiled.ok, compiled.diagnostics
    app, problems = build_objects(compiled)
    assert problems == []
    said, state, models = run(app, {
        "research_planner": [plan("parallel", "part a", "part b"), plan("llm"), plan("llm")],
        "research_worker": [{"text": "A found."}, {"text": "B found."}],
        "research_synthesizer": [{"text": "A and B, merged."}],
        "writer": [{"text": "Checked."}]})
    expected = ("## research: Big task\nA and B, merged.\n\n"
                "## research_1: part a\nA found.\n\n## research_2: part b\nB found.")
    assert state["findings"] == expected
    assert state["report"] == "A and B, merged."
    assert f"Check every step: {expected}" in _text(models["writer"].requests[0])


def test_leaf_workers_are_told_to_finish_without_asking(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(HANDOFF))
    app, problems = build_objects(compile_spec(tmp_path / "spec.yaml", environ={}))
    assert problems == []
    _, _, models = run(app, {"research_planner": [plan("llm")],
                             "research_worker": [{"text": "Done."}],
                             "writer": [{"text": "Simple."}]})
    worker = _text(models["research_worker"].requests[0])
    assert "nobody will reply to a question" in worker
    assert "Do not ask the user anything" in worker
    planner = _text(models["research_planner"].requests[0])
    assert '{"kind": "sequential", "subtasks": ["Name the chemical element' in planner
    for kind in ("llm", "parallel", "sequential"):  # the worked examples parse as plans
        line = next(x for x in planner.splitlines() if x.startswith(f'{{"kind": "{kind}"'))
        assert json.loads(line)["kind"] == kind


def test_validate_warns_about_internal_keys_in_instructions(tmp_path: Path) -> None:
    from agentspec.validate.check import check

    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(HANDOFF).replace(
        "{report}", "{agentspec:plan:research} {agentspec:plan:research_1?} "
        "{{agentspec:plan:x}} {report}"))
    found = [(d.code, d.span.start.col if d.span else 0, d.hint)
             for d in check(path, environ={}).diagnostics]
    assert found == [
        ("AS262", 40, "`research` writes its answer to `report`: write `{report}`"),
        ("AS262", 66, "`research` writes its answer to `report`: write `{report}`")]
    path.write_text(textwrap.dedent(HANDOFF).replace("        output_key: report\n", "")
                    .replace("{report}", "{agentspec:todos}"))
    found = [(d.code, d.hint) for d in check(path, environ={}).diagnostics]
    assert found == [("AS262", "Write the value under a state key of your own")]
