"""The composition matrix (`tests/composition.py`): each cell is refused by validate with the
code that explains why, or runs its scripted conversation to the expected answer in memory,
through the generated package loaded by ADK's `AgentLoader`, and through `agentspec run`
(an offline child's job is then run by a worker and delivered into the conversation)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from agentspec.cli import cli
from agentspec.compiler import Compiled, build_objects, compile_spec, emit_package, write_package
from agentspec.diagnostics import codes
from agentspec.validate.check import check
from tests.buildkit import package_loader
from tests.composition import CELLS, CHILD_ANSWER, REMOTE_CARD, REQUEST, Cell

pytestmark = pytest.mark.slow  # about 300 cells, each run on three surfaces

NOTED = "NOTED"  # the parent's answer in the turn that receives an offline child's answer


def refusal(cell: Cell) -> str | None:
    """The code validate must refuse the cell with (None: it must run)."""
    if cell.offline and not cell.way.delegates(cell.parent):
        return codes.OFFLINE_NOT_DELEGATED.code  # a transfer or a workflow step: real time
    return None


RUN = [pytest.param(c, id=c.id) for c in CELLS if refusal(c) is None]


def _write(cell: Cell, directory: Path, card: str = "{}") -> tuple[Path, Path]:
    spec, script = directory / "spec.yaml", directory / "script.yaml"
    (directory / REMOTE_CARD).write_text(card)  # a remote child's
    spec.write_text(yaml.safe_dump(cell.spec, sort_keys=False))
    script.write_text(yaml.safe_dump(cell.script, sort_keys=False))
    return spec, script


def test_every_cell_is_run_or_refused_with_its_code(tmp_path: Path) -> None:
    counts: Counter[str] = Counter()
    wrong = []
    for cell in CELLS:
        spec, _ = _write(cell, tmp_path)
        errors = sorted({d.code for d in check(spec, environ={}).diagnostics if d.is_error})
        expected = refusal(cell)
        if errors != ([expected] if expected else []):
            wrong.append((cell.id, errors, expected))
        counts[f"refused {expected}" if expected else "run"] += 1
    assert wrong == []
    print(f"\ncomposition matrix: {len(CELLS)} cells, {counts['run']} run on three surfaces, "
          + ", ".join(f"{n} {what}" for what, n in sorted(counts.items()) if what != "run"))
    assert counts["run"] == len(RUN)


# one conversation -----------------------------------------------------------------------------


async def _conversation(app: Any, cell: Cell) -> tuple[str | None, str | None]:
    """The last answer of the cell's turn and, for an offline child, the text delivered
    after a worker ran its job; no error on the way."""
    from google.adk.artifacts import InMemoryArtifactService
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    from agentspec.testing.conversation import turn
    from agentspec.testing.scenarios import Outcome
    from agentspec.testing.scripted import install_script

    install_script(app.root_agent, cell.replies)
    runner = Runner(app=app, session_service=InMemorySessionService(),
                    artifact_service=InMemoryArtifactService())
    outcome = Outcome()
    try:
        session = await runner.session_service.create_session(app_name=app.name,
                                                              user_id="user")
        await turn(runner, session.id, REQUEST, decide=lambda pending: None,
                   on_event=outcome.record)
        assert outcome.failures == []
        delivered = await _offline_job(app, runner, session.id) if cell.offline else None
        return outcome.final, delivered
    finally:
        await runner.close()


async def _offline_job(app: Any, runner: Any, session_id: str) -> str:
    """A worker runs the job the turn queued; the text delivered into the conversation."""
    from agentspec.runtime.jobs.delegation import app_job_settings, deliver, offline_agents
    from agentspec.runtime.jobs.worker import Worker

    settings = app_job_settings(app)
    assert settings is not None
    worker = Worker(offline_agents(app.root_agent), settings, poll_seconds=0.01)
    await worker.serve(asyncio.Event(), until_idle=True)
    stored = await runner.session_service.get_session(app_name=app.name, user_id="user",
                                                      session_id=session_id)
    delivered = await deliver(settings, runner.session_service, stored, "delivery")
    return "\n".join(p.text or "" for e in delivered for p in (e.content.parts or []))


def _expect(cell: Cell, answered: tuple[str | None, str | None], surface: str) -> None:
    final, delivered = answered
    assert final == cell.final, f"{surface}: the last answer is {final!r}"
    if cell.offline:
        assert delivered is not None and CHILD_ANSWER in delivered, \
            f"{surface}: delivered {delivered!r}"


def _in_memory(compiled: Compiled, cell: Cell) -> None:
    app, problems = build_objects(compiled)
    assert problems == []
    _expect(cell, asyncio.run(_conversation(app, cell)), "in memory")


def _package(compiled: Compiled, cell: Cell, out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert write_package(emit_package(compiled, out), out) == []
    with package_loader(monkeypatch) as load:
        app = load(out, "matrix")
        _expect(cell, asyncio.run(_conversation(app, cell)), "the generated package")


def _agentspec_run(cell: Cell, spec: Path, script: Path, tmp_path: Path) -> None:
    session = ["--session", f"sqlite:///{tmp_path / 'sessions.db'}"] if cell.offline else []
    done = CliRunner().invoke(cli, ["run", str(spec), "--script", str(script), *session])
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines()[-1].endswith(f"] {cell.final}"), done.output
    if not cell.offline:
        return
    worked = CliRunner().invoke(cli, ["worker", str(spec), "--until-idle", "--quiet",
                                      "--script", str(script)])
    assert worked.exit_code == 0, worked.output
    later = tmp_path / "later.yaml"
    later.write_text(yaml.safe_dump({"replies": cell.answering(NOTED)}))
    done = CliRunner().invoke(cli, ["run", str(spec), "Any news?", "--script", str(later),
                                    *session])
    assert done.exit_code == 0, done.output
    assert CHILD_ANSWER in done.stdout and done.stdout.splitlines()[-1].endswith(NOTED), \
        done.output


@pytest.fixture(scope="module")
def remote_card() -> Iterator[str]:
    """The card of an A2A agent on loopback that answers CHILD_ANSWER (a remote child)."""
    pytest.importorskip("a2a", reason="the a2a extra (a2a-sdk) is not installed")
    from tests.a2aserver import answering

    with answering(CHILD_ANSWER, name="remote_child") as served:
        yield served.card


@pytest.mark.parametrize("cell", RUN)
def test_the_cell_runs_everywhere(cell: Cell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  request: pytest.FixtureRequest) -> None:
    monkeypatch.setenv("AGENTSPEC_JOBS_STORE", f"memory://matrix-{tmp_path.name}")
    card = request.getfixturevalue("remote_card") if cell.child == "remote" else "{}"
    spec, script = _write(cell, tmp_path, card)
    compiled = compile_spec(spec, environ={})
    assert compiled.ok, [(d.code, d.message) for d in compiled.diagnostics]
    _in_memory(compiled, cell)
    _package(compiled, cell, tmp_path / "out", monkeypatch)
    _agentspec_run(cell, spec, script, tmp_path)
