"""The harness's sections of the system prompt (issue 23, item 1): one per feature the agent
has, after its own instruction, each switched off or replaced by `prompts:`; in memory and
through the generated package."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentspec.compiler import build_objects, compile_spec, emit_package, write_package
from agentspec.runtime.prompts.harness import section_text
from tests.buildkit import package_loader, scripted_turn

SPEC = """\
    agentspec: 1
    name: prompted
    root: coder
    backends:
      box: {type: shell, root: ./work}
    agents:
      coder:
        kind: deep
        model: gemini-2.5-flash
        instruction: Write code.
        filesystem: box
        memory: [./AGENTS.md]
        skills: [./skills]
        sub_agents: [plain]
        PROMPTS
      plain:
        model: gemini-2.5-flash
        instruction: Chat.
    """
HEADINGS = {"base": "## How you work", "filesystem": "## Files",
            "execute": "## Running commands", "todos": "## Planning with `write_todos`",
            "task": "## Handing work to sub-agents with `task`", "skills": "## Skills",
            "memory": "## Agent memory"}


def _project(tmp_path: Path, prompts: str = "") -> Path:
    (tmp_path / "work").mkdir()
    (tmp_path / "AGENTS.md").write_text("Use tabs.\n")
    skill = tmp_path / "skills" / "lint"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: lint\ndescription: Lints code.\n---\nRun it.\n")
    (tmp_path / "mine.md").write_text("## Our files\nOnly /src may change.\n")
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(SPEC).replace("PROMPTS", prompts))
    return path


def _system(app: Any, agent: str = "coder") -> str:
    replies: dict[str, list[Any]] = {agent: [{"text": "ok"}]}
    if agent != "coder":
        replies["coder"] = [{"transfer": agent}]
    turn = scripted_turn(app, replies, "Go")
    return str(turn.models[agent].requests[0].config.system_instruction)


def _app(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, through: str) -> Any:
    compiled = compile_spec(path, environ={})
    assert compiled.ok, [(d.code, d.message) for d in compiled.diagnostics]
    if through == "memory":
        app, problems = build_objects(compiled)
        assert problems == []
        return app
    out = tmp_path / "out"
    assert write_package(emit_package(compiled, out), out) == []
    with package_loader(monkeypatch) as load:
        return load(out, "prompted")


@pytest.mark.parametrize("through", ["memory", "package"])
def test_each_feature_adds_its_section_in_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, through: str) -> None:
    system = _system(_app(_project(tmp_path), tmp_path, monkeypatch, through))
    at = [system.index(HEADINGS[s]) for s in HEADINGS]
    assert system.index("Write code.") < at[0] and at == sorted(at)
    assert "`read_file` shows 100 lines unless you pass a larger `limit`" in system
    assert "The `general-purpose` sub-agent has your instructions and your tools" in system
    assert section_text("task", general_purpose=True) in system


@pytest.mark.parametrize("through", ["memory", "package"])
def test_prompts_switch_sections_off_and_replace_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, through: str) -> None:
    path = _project(tmp_path, "prompts: {base: false, todos: false, memory: false, "
                              "filesystem: mine.md}")
    app = _app(path, tmp_path, monkeypatch, through)
    system = _system(app)
    for gone in ("base", "todos", "memory"):
        assert HEADINGS[gone] not in system, gone
    assert "## Our files\nOnly /src may change." in system and "## Files\n" not in system
    assert "<agent_memory>" in system and "Use tabs." in system  # the block stays
    for kept in ("execute", "task", "skills"):
        assert HEADINGS[kept] in system, kept


def test_an_agent_without_harness_features_gets_no_section(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    system = _system(_app(_project(tmp_path), tmp_path, monkeypatch, "memory"), "plain")
    assert system.startswith("Chat.\n\nYou are an agent.")  # then only ADK's transfer note
    assert not [h for h in HEADINGS.values() if h in system]


def test_a_missing_replacement_file_is_reported_where_it_is_named(tmp_path: Path) -> None:
    from agentspec.validate.check import check

    path = _project(tmp_path, "prompts: {todos: nowhere.md}")
    found = [(d.code, d.span.start.line if d.span else 0)
             for d in check(path, environ={}).diagnostics]
    assert found == [("AS218", 15)]
