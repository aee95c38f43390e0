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

from agentspec.evaluation.app import SpecError, app_factory
from agentspec.evaluation.cases import Case, expected_invocations
from agentspec.evaluation.criteria import MissingExtra, evaluator, threshold
from agentspec.testing.turns import isolated, play

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


def _play(app: Any, case: Case) -> list[Any]:
    """The case's turns played on `app`; ADK's invocations of what the agents did. A run
    in which an agent failed (raised, or its route broke) stops with that failure: what
    the other agents made of it is no run of the case to score."""
    from google.adk.evaluation.evaluation_generator import EvaluationGenerator

    def decide(pending: Any) -> None:
        raise _Stopped(f"`{pending.tool}` of `{pending.agent}` waits for a person's "
                       "approval, which an evaluation cannot give")

    played = play(app, [expected.user for expected in case.turns], state=case.state,
                  decide=decide)
    failed = [failure for failure in played.outcome.failures if failure.tool is None]
    if failed:
        raise _Stopped("; ".join(dict.fromkeys(map(str, failed))))
    return EvaluationGenerator.convert_events_to_eval_invocations(played.events)


class _Stopped(Exception):
    """The run cannot go on, or cannot be scored, for a reason of the case or the agents
    (not of agentspec)."""


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

    if isinstance(exc, _Stopped) or not isinstance(exc, Exception):
        return str(exc)
    return describe(exc)


def run_case(case: Case, app_for: AppFactory, runs: int = 1) -> CaseResult:
    """`case` run `runs` times on apps from `app_for`, each run scored by every criterion.
    A run that fails, or a criterion that cannot score (the judge model failing), is
    reported on the case; it never stops the others."""
    result = CaseResult(case.name, case.source, {
        name: Score(name, threshold(value)) for name, value in case.criteria.items()})
    expected = expected_invocations(case)
    for _ in range(runs):
        try:
            with isolated(case.env, "eval"):  # a job store and files database of its own
                actual = _play(app_for(case), case)
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
