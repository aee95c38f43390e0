"""AS230's hint shows the spec to write instead, and that spec validates (issue 23, item 6:
seed 004's own example, an offline agent reached by transfer)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from agentspec.validate.check import check

TRANSFER = """\
    agentspec: 1
    name: demo
    root: lead
    agents:
      lead:
        model: gemini-2.5-flash
        instruction: Answer, handing research to the researcher.
        sub_agents: [researcher]
      researcher:
        description: Researches a topic.
        model: gemini-2.5-flash
        instruction: Research the topic.
        execution_mode: offline
    """


def _found(tmp_path: Path, text: str) -> list[tuple[str, str | None]]:
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(text))
    return [(d.code, d.hint) for d in check(path, environ={}).diagnostics]


def test_a_transfer_target_is_shown_both_ways_to_delegate(tmp_path: Path) -> None:
    [(code, hint)] = _found(tmp_path, TRANSFER)
    assert code == "AS230" and hint is not None
    assert "add `mode: task` to `researcher`" in hint
    assert "move it from `lead`'s `sub_agents` to `tools: [{agent: researcher}]`" in hint
    # each way the hint gives validates
    assert _found(tmp_path, TRANSFER.replace(
        "    execution_mode: offline", "    execution_mode: offline\n        mode: task")) == []
    assert _found(tmp_path, TRANSFER.replace(
        "sub_agents: [researcher]", "tools: [{agent: researcher}]")) == []


def test_a_workflow_step_and_a_root_are_shown_an_llm_caller(tmp_path: Path) -> None:
    step = TRANSFER.replace("""      lead:
        model: gemini-2.5-flash
        instruction: Answer, handing research to the researcher.
        sub_agents: [researcher]""", """      lead:
        kind: sequential
        sub_agents: [researcher]""")
    [(code, hint)] = _found(tmp_path, step)
    assert code == "AS230" and hint is not None
    assert "A step of `lead` runs in real time" in hint
    assert "`tools: [{agent: researcher}]`" in hint
    root = TRANSFER.replace("root: lead", "root: researcher").replace(
        "        sub_agents: [researcher]\n", "")
    found = [(c, h) for c, h in _found(tmp_path, root) if c == "AS230"]
    assert len(found) == 1 and found[0][1] is not None
    assert "`root: lead` with `lead: {model: ..., tools: [{agent: researcher}]}`" in found[0][1]
    assert [c for c, _ in _found(tmp_path, root.replace("root: researcher", "root: lead")
                                 .replace("instruction: Answer, handing research to the "
                                          "researcher.", "instruction: Answer.\n        "
                                          "tools: [{agent: researcher}]"))] == []
