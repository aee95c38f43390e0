"""Run evaluation cases on a spec and score them with ADK's evaluators: each case `runs`
times, each criterion's scores kept per run, so a report gives their mean and spread."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import statistics
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentspec.evaluation.app import SpecError, app_factory, case_environment
from agentspec.evaluation.cases import Case, expected_invocations
from agentspec.evaluation.criteria import MissingExtra, evaluator, threshold

__all__ = ["CaseResult", "Score", "evaluate", "run_case"]


@dataclass
class Score:
    """One criterion of one case, over its runs: a score per run (None: not scored, with
    the reason in `errors`)."""

    criterion: str
    threshold: float
    scores: list[float | None] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def mean(self) -> float | None:
        scored = [s for s in self.scores if s is not None]
        return statistics.fmean(scored) if scored else None

    @property
    def spread(self) -> float | None:
        """The population standard deviation of the runs' scores."""
        scored = [s for s in self.scores if s is not None]
        return statistics.pstdev(scored) if len(scored) > 1 else 0.0 if scored else None

    @property
    def passed(self) -> bool:
        mean = self.mean
        return not self.errors and mean is not None and mean >= self.threshold

    def to_dict(self) -> dict[str, Any]:
        return {"criterion": self.criterion, "threshold": self.threshold,
                "scores": self.scores, "mean": self.mean, "spread": self.spread,
                "passed": self.passed, "errors": self.errors}


@dataclass
class CaseResult:
    name: str
    source: str
    scores: dict[str, Score] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(s.passed for s in self.scores.values())

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "passed": self.passed,
                "criteria": [s.to_dict() for s in self.scores.values()]}


#: builds the app a case runs on (a fresh one per run: scripted replies are used up)
AppFactory = Callable[[Case], Any]


async def _play(app: Any, case: Case) -> list[Any]:
    """The case's turns through a Runner; ADK's invocations of what the agents did."""
    from google.adk.artifacts import InMemoryArtifactService
    from google.adk.evaluation.evaluation_generator import EvaluationGenerator
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    from agentspec.testing.conversation import turn

    runner = Runner(app=app, session_service=InMemorySessionService(),
                    artifact_service=InMemoryArtifactService())
    try:
        session = await runner.session_service.create_session(
            app_name=app.name, user_id="user", state=dict(case.state))
        for expected in case.turns:
            left = await turn(runner, session.id, expected.user, decide=lambda pending: None)
            if left:
                raise _Stopped(f"`{left[0].tool}` of `{left[0].agent}` waits for a person's "
                               "approval, which an evaluation cannot give")
        stored = await runner.session_service.get_session(
            app_name=app.name, user_id="user", session_id=session.id)
    finally:
        await runner.close()
    events = list(stored.events) if stored else []
    return EvaluationGenerator.convert_events_to_eval_invocations(events)


class _Stopped(Exception):
    """The run cannot go on for a reason of the case (not of the agents)."""


class _Warnings(logging.Handler):
    """What ADK's evaluators log while scoring: a judge call that failed is logged (with
    its traceback) and left unscored, not raised."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextlib.contextmanager
def _adk_warnings() -> Iterator[_Warnings]:
    logger = logging.getLogger("google_adk.google.adk.evaluation")
    caught = _Warnings()
    logger.addHandler(caught)
    propagate, logger.propagate = logger.propagate, False
    try:
        yield caught
    finally:
        logger.removeHandler(caught)
        logger.propagate = propagate


async def _scored(name: str, value: Any, case: Case, actual: list[Any],
                  expected: list[Any]) -> tuple[float | None, str]:
    """The criterion's score for one run, and why there is none."""
    with _adk_warnings() as caught:
        judge = evaluator(name, value, case)
        result = judge.evaluate_invocations(actual, expected)
        if inspect.isawaitable(result):
            result = await result
    score = result.overall_score
    if score is not None:
        return float(score), ""
    why = "; ".join(dict.fromkeys(caught.messages)) or "ADK's evaluator gave no score"
    return None, f"`{name}` could not score: {why}"


def _describe(exc: BaseException) -> str:
    from agentspec.runtime.blame import describe

    return describe(exc) if isinstance(exc, Exception) else str(exc)


def run_case(case: Case, app_for: AppFactory, runs: int = 1) -> CaseResult:
    """`case` run `runs` times on apps from `app_for`, each run scored by every criterion.
    A run that fails, or a criterion that cannot score (the judge model failing), is
    reported on the case; it never stops the others."""
    result = CaseResult(case.name, case.source, {
        name: Score(name, threshold(value)) for name, value in case.criteria.items()})
    expected = expected_invocations(case)
    for _ in range(runs):
        try:
            with case_environment(case):
                actual = asyncio.run(_play(app_for(case), case))
        except SpecError:
            raise  # the spec itself, not this run: the command reports it once
        except Exception as exc:  # noqa: BLE001 - the agents' failure fails this run only
            for score in result.scores.values():
                score.scores.append(None)
                score.errors.append(f"the run failed: {_describe(exc)}")
            continue
        if len(actual) != len(expected):
            for score in result.scores.values():
                score.scores.append(None)
                score.errors.append(f"the run made {len(actual)} invocation(s) for "
                                    f"{len(expected)} turn(s)")
            continue
        for name, value in case.criteria.items():
            score = result.scores[name]
            try:
                found, reason = asyncio.run(_scored(name, value, case, actual, expected))
            except MissingExtra as exc:
                found, reason = None, str(exc)
            except Exception as exc:  # noqa: BLE001 - e.g. the judge model failed
                found, reason = None, f"`{name}` could not score: {_describe(exc)}"
            score.scores.append(found)
            if reason:
                score.errors.append(reason)
    return result


def evaluate(spec: Path, cases: list[Case], *, environment: str | None = None,
             runs: int = 1) -> list[CaseResult]:
    """Every case on the spec at `spec`, `runs` times."""
    build = app_factory(spec, environment)
    return [run_case(case, build, runs) for case in cases]
