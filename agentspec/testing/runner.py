"""Running a spec's scenarios offline: each scenario builds the spec's agents with scripted
models, plays its turns and checks its expectations. `agentspec test`, `agentspec run
--script` and the public API (`agentspec.run_scenarios`) share it."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentspec.diagnostics import Diagnostic

if TYPE_CHECKING:
    from agentspec.runtime.usage import Ledger
    from agentspec.source import SourceFile
    from agentspec.testing.names import SpecContext
    from agentspec.testing.scenarios import Scenario

__all__ = ["ScenarioFileError", "ScenarioResult", "ScenarioRun", "Scripter", "environment_set",
           "load_scenarios",
           "run_scenario", "run_scenarios", "scenario_files", "scripted_models",
           "spec_context_of"]


class ScenarioFileError(Exception):
    """A scenario file that cannot run: its diagnostics say why."""

    def __init__(self, path: Path, diagnostics: list[Diagnostic],
                 sources: dict[str, SourceFile]) -> None:
        super().__init__(f"{path} is not a valid scenario file")
        self.path = path
        self.diagnostics = diagnostics
        self.sources = sources


def scenario_files(spec: Path, given: Sequence[Path] = ()) -> list[Path]:
    """The scenario files to run: those given, or `scenarios/<spec stem>.yaml` beside the
    spec; a `ScenarioFileError` when there is none."""
    from agentspec.testing.discover import default_scenarios

    if given:
        return list(given)
    found = default_scenarios(spec)
    if found is None:
        where = spec.parent / "scenarios" / f"{spec.stem}.yaml"
        raise ScenarioFileError(where, [], {})
    return [found]


def spec_context_of(spec: Path, environment: str | None) -> SpecContext:
    """What the spec tells the check of its scenario files (`SpecContext`): the state keys
    a session's creator supplies, the project, the names of its agents and tools (none when
    the spec does not validate: running it reports that)."""
    from agentspec.testing.names import spec_context
    from agentspec.validate.check import check

    return spec_context(check(spec, environment=environment, all_environments=False))


def load_scenarios(path: Path, context: SpecContext | None = None) -> list[Scenario]:
    """The scenarios of a scenario file (its decisions parsed), checked against what its
    spec tells (`SpecContext`: required state, project, names); a `ScenarioFileError`
    carrying its diagnostics when it has errors."""
    from agentspec.testing.check import check_scenarios
    from agentspec.testing.scenarios import parse_scenarios
    from agentspec.testing.scripted import parse_decision

    checked = check_scenarios(path, context.required if context else None,
                              project=context.project if context else None,
                              names=context.names if context else None)
    if not checked.ok:
        raise ScenarioFileError(path, checked.diagnostics, checked.sources)
    scenarios = parse_scenarios(checked.data, path.stem)
    for scenario in scenarios:
        if scenario.decisions is not None:
            scenario.decisions = [parse_decision(d) for d in scenario.decisions]
    return scenarios


async def _play(app: Any, scenario: Any) -> Any:
    from google.adk.artifacts import InMemoryArtifactService
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    from agentspec.runtime.jobs.delegation import app_job_settings
    from agentspec.testing.conversation import turn
    from agentspec.testing.scenarios import Outcome

    outcome = Outcome()
    decisions = None if scenario.decisions is None else list(scenario.decisions)

    def decide(pending: Any) -> Any:
        if not decisions:
            raise AssertionError(f"{pending.agent} asked to approve {pending.tool}, and the "
                                 "scenario has no decision left for it")
        decision = decisions.pop(0)
        if decision.kind == "reject":
            outcome.settled.add(pending.call_id)  # its error result is the person's no
        return decision

    runner = Runner(app=app, session_service=InMemorySessionService(),
                    artifact_service=InMemoryArtifactService())
    try:
        session = await runner.session_service.create_session(
            app_name=app.name, user_id="user", state=dict(scenario.state))
        for message in scenario.messages:
            left = await turn(runner, session.id, message, decide=decide,
                              on_event=outcome.record)
            if left:
                raise AssertionError(f"{left[0].tool} is still waiting for approval")
        stored = await runner.session_service.get_session(app_name=app.name, user_id="user",
                                                          session_id=session.id)
        outcome.after_turns(stored.events if stored else [])
    finally:
        await runner.close()
    outcome.state = dict(stored.state) if stored else {}
    settings = app_job_settings(app)
    if settings is not None:
        outcome.jobs = [job.to_dict() for job in settings.open().recent()]
    return outcome


@contextlib.contextmanager
def environment_set(values: Mapping[str, str]) -> Iterator[None]:
    """`values` set in the process's environment for one run, the old values put back."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


#: gives the agents under an app's root agent their scripted replies; returns what tells the
#: script's own problems (no reply left) once the run is over
Scripter = Callable[[Any, Mapping[str, list[Any]]], Callable[[], list[str]]]


@dataclasses.dataclass
class _ScriptReport:
    """What the scripted models say once the run is over: their problems (called), and
    the replies nobody asked for (`unused`)."""

    models: Mapping[str, Any]

    def __call__(self) -> list[str]:
        return list(dict.fromkeys(p for m in self.models.values() for p in m.problems))

    def unused(self) -> list[str]:
        from agentspec.testing.scripted import unused_replies

        return unused_replies(self.models.values())


def scripted_models(root: Any, replies: Mapping[str, list[Any]],
                    compaction: Any = None) -> Callable[[], list[str]]:
    """Every LLM agent gets a ScriptedModel with its replies (the offline default), and the
    summarizer of `compaction` (the App's) one under `summarizer`."""
    from agentspec.testing.scripted import install_script

    return _ScriptReport(install_script(root, replies, compaction))


def run_scenario(spec: Path, environment: str | None, scenario: Any, index: int,
                 script: Scripter | None = None, usage: Ledger | None = None) -> list[str]:
    """The scenario's failures (none: it passed); `script` chooses how the models answer
    (default: `scripted_models`); `usage` sums the tokens its model calls reported."""
    from agentspec.compiler import build_objects, compile_spec
    from agentspec.runtime.models import SCRIPTED
    from agentspec.runtime.observing import collecting, observer_of
    from agentspec.runtime.usage import Ledger
    from agentspec.testing.scenarios import StubTools, offline_mcp
    from agentspec.testing.scripted import ScriptError

    # jobs go to a store of the scenario's own, and `type: store` files to a database of its
    # own (never the project's), gone with the scenario
    store = f"memory://scenario-{index}-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="agentspec-files-") as scratch, \
            _scenario_files(f"sqlite:///{Path(scratch) / 'files.db'}") as files, \
            environment_set({**scenario.env, "AGENTSPEC_JOBS_STORE": store,
                          "AGENTSPEC_FILES_STORE": files}):
        compiled = compile_spec(spec, environment=environment)
        if not compiled.ok:
            return [f"{d.code} {d.message}" for d in compiled.diagnostics if d.is_error]
        token = SCRIPTED.set(True)  # models are scripted: a missing provider is no problem
        try:
            app, problems = build_objects(compiled)
        finally:
            SCRIPTED.reset(token)
        if problems:
            return [f"cannot build: {p.code} {p.message}" + (f" ({p.hint})" if p.hint else "")
                    for p in problems]
        try:
            offline_mcp(app.root_agent)
            script_problems = (script or partial(
                scripted_models, compaction=app.events_compaction_config))(
                app.root_agent, scenario.replies)
        except ScriptError as exc:
            return [str(exc)]
        if scenario.stubs:
            app.plugins.append(StubTools(scenario.stubs))
        observer_of(app)
        with collecting(usage if usage is not None else Ledger()):
            failed = _judged(app, scenario)
        # the script's own problems first, however the run went on after them; then what
        # went wrong, and replies the run never asked for (it went otherwise than scripted)
        unused = script_problems.unused() if isinstance(script_problems, _ScriptReport) \
            else []
        return script_problems() or failed + unused


@contextlib.contextmanager
def _scenario_files(url: str) -> Iterator[str]:
    """`url`, its database closed when the scenario is done."""
    from agentspec.runtime.backends.store import close_files

    try:
        yield url
    finally:
        close_files(url)


def _judged(app: Any, scenario: Any) -> list[str]:
    """What went wrong in the scenario's run: the run failing, or its expectations."""
    from agentspec.runtime.nodes import FAILURES_REPORTED
    from agentspec.testing.scenarios import check

    reported = FAILURES_REPORTED.set(True)  # the scenario's report names each failure
    try:
        return check(scenario.expect, asyncio.run(_play(app, scenario)))
    except Exception as exc:  # noqa: BLE001 - an agent's failure fails the scenario
        from agentspec.runtime.blame import describe

        return [str(exc) if isinstance(exc, AssertionError)
                else f"the run failed: {describe(exc)}"]
    finally:
        FAILURES_REPORTED.reset(reported)




@dataclass(frozen=True)
class ScenarioResult:
    """One scenario's run: no failures means it passed."""

    file: Path
    name: str
    failures: tuple[str, ...]
    #: the tokens (and cost) its model calls reported
    usage: Ledger

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass
class ScenarioRun:
    """Every scenario of the files run, in order."""

    results: list[ScenarioResult] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.results)

    @property
    def failed(self) -> int:
        return len(self.results) - self.passed

    @property
    def ok(self) -> bool:
        return self.failed == 0

    @property
    def usage(self) -> Ledger:
        """Every scenario's usage, summed."""
        from agentspec.runtime.usage import Ledger

        total = Ledger()
        for result in self.results:
            total.add(result.usage)
        return total


def run_scenarios(spec: Path, files: Sequence[Path] = (), *, environment: str | None = None,
                  on_result: Callable[[ScenarioResult], None] | None = None) -> ScenarioRun:
    """Run the scenarios of `files` (default: the spec's own scenario file) against `spec`,
    every file checked before any scenario runs; `on_result` hears each result as it
    comes."""
    paths = scenario_files(spec, files)
    context = spec_context_of(spec, environment)
    loaded = [(path, load_scenarios(path, context)) for path in paths]
    from agentspec.runtime.usage import Ledger

    run = ScenarioRun()
    for path, scenarios in loaded:
        for scenario in scenarios:
            usage = Ledger()
            failures = run_scenario(spec, environment, scenario, len(run.results),
                                    usage=usage)
            result = ScenarioResult(path, scenario.name, tuple(failures), usage)
            run.results.append(result)
            if on_result is not None:
                on_result(result)
    return run
