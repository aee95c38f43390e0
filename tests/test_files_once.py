"""Files the spec points at are read once, by validate, and lowering uses that text; the
spec model's defaults are the only defaults."""

from __future__ import annotations

from pathlib import Path

from agentspec.ir.lower import lower
from agentspec.language.document import Jobs
from agentspec.validate.check import check

SPEC = """\
agentspec: 1
name: desk
agents:
  lead:
    model: gemini-2.5-flash
    instruction_file: prompts/lead.md
"""


def _project(tmp_path: Path, instruction: bytes) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "lead.md").write_bytes(instruction)
    (tmp_path / "desk.yaml").write_text(SPEC)
    return tmp_path / "desk.yaml"


def test_lowering_uses_the_text_validate_read(tmp_path: Path) -> None:
    spec = _project(tmp_path, b"Answer in French.\n")
    result = check(spec)
    assert result.ok, result.diagnostics
    (tmp_path / "prompts" / "lead.md").write_text("Changed after validate.\n")
    app, problems = lower(result)
    assert app is not None and not problems
    assert getattr(app.root, "instruction", None) == "Answer in French.\n"
    [source] = [s for s in result.sources.values() if s.path.name == "lead.md"]
    assert source.path == (tmp_path / "prompts" / "lead.md").resolve()  # its origin


def test_an_unreadable_instruction_file_is_a_validate_error(tmp_path: Path) -> None:
    spec = _project(tmp_path, b"caf\xe9\n")
    result = check(spec)
    assert [d.code for d in result.diagnostics if d.is_error] == ["AS003"]
    [problem] = result.diagnostics
    assert problem.span is not None and problem.span.file.endswith("lead.md")


def test_job_defaults_come_from_the_spec_model(tmp_path: Path) -> None:
    (tmp_path / "desk.yaml").write_text("""\
agentspec: 1
name: desk
root: lead
agents:
  lead:
    model: gemini-2.5-flash
    instruction: Delegate.
    sub_agents: [scorer]
  scorer:
    description: Scores.
    model: gemini-2.5-flash
    instruction: Score.
    mode: single_turn
    execution_mode: offline
""")
    app, _ = lower(check(tmp_path / "desk.yaml"))
    assert app is not None and app.jobs is not None
    defaults = Jobs()
    assert (app.jobs.store, app.jobs.max_attempts, app.jobs.lease_seconds) == (
        defaults.store, defaults.max_attempts, defaults.lease_seconds)
