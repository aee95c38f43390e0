"""Running a spec's scenarios offline: each scenario builds the spec's agents with scripted
models, plays its turns and checks its expectations. `agentspec test`, `agentspec run
--script` and the public API (`agentspec.run_scenarios`) share it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
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

__all__ = ["ScenarioFileError", "ScenarioResult", "ScenarioRun", "Scripter", "load_scenarios",
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


def _played(app: Any, scenario: Any, usage: Ledger) -> Any:
    """The scenario's messages played on `app`, its approvals answered by its decisions;
    what the run did (an `Outcome`), with the jobs it queued."""
    from agentspec.runtime.jobs.delegation import app_job_settings
    from agentspec.testing.turns import play

    decisions = list(scenario.decisions or [])

    def decide(pending: Any) -> Any:
        if not decisions:
            raise AssertionError(f"{pending.agent} asked to approve {pending.tool}, and the "
                                 "scenario has no decision left for it")
        return decisions.pop(0)

    outcome = play(app, scenario.messages, state=scenario.state, decide=decide,
                   usage=usage).outcome
    settings = app_job_settings(app)
    if settings is not None:
        outcome.jobs = [job.to_dict() for job in settings.open().recent()]
    return outcome


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
    from agentspec.runtime.usage import Ledger
    from agentspec.testing.scenarios import StubTools, offline_mcp
    from agentspec.testing.scripted import ScriptError
    from agentspec.testing.turns import isolated, spec_app

    with isolated(scenario.env, f"scenario-{index}"):
        app, stopped = spec_app(spec, environment, scripted=True)
        if app is None:
            return stopped
        try:
            offline_mcp(app.root_agent)
            script_problems = (script or partial(
                scripted_models, compaction=app.events_compaction_config))(
                app.root_agent, scenario.replies)
        except ScriptError as exc:
            return [str(exc)]
        if scenario.stubs:
            app.plugins.append(StubTools(scenario.stubs))
        failed = _judged(app, scenario, usage if usage is not None else Ledger())
        # the script's own problems first, however the run went on after them; then what
        # went wrong, and replies the run never asked for (it went otherwise than scripted)
        unused = script_problems.unused() if isinstance(script_problems, _ScriptReport) \
            else []
        return script_problems() or failed + unused


def _judged(app: Any, scenario: Any, usage: Ledger) -> list[str]:
    """What went wrong in the scenario's run: the run failing, or its expectations."""
    from agentspec.testing.scenarios import check

    try:
        return check(scenario.expect, _played(app, scenario, usage))
    except Exception as exc:  # noqa: BLE001 - an agent's failure fails the scenario
        from agentspec.runtime.blame import describe

        return [str(exc) if isinstance(exc, AssertionError)
                else f"the run failed: {describe(exc)}"]


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
