"""Each criterion of an eval file as ADK's own evaluator, configured with its threshold, the
case's rubrics and the file's judge model."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Mapping
from typing import Any

from agentspec.evaluation.cases import Case
from agentspec.evaluation.models import JUDGED

__all__ = ["EVALUATORS", "MissingExtra", "adk_criterion", "evaluator", "threshold"]

#: metric name -> (module, class) of ADK's evaluator
EVALUATORS: dict[str, tuple[str, str]] = {
    "tool_trajectory_avg_score": ("trajectory_evaluator", "TrajectoryEvaluator"),
    "response_match_score": ("final_response_match_v1", "RougeEvaluator"),
    "final_response_match_v2": ("final_response_match_v2", "FinalResponseMatchV2Evaluator"),
    "rubric_based_final_response_quality_v1": (
        "rubric_based_final_response_quality_v1", "RubricBasedFinalResponseQualityV1Evaluator"),
    "rubric_based_tool_use_quality_v1": ("rubric_based_tool_use_quality_v1",
                                         "RubricBasedToolUseV1Evaluator"),
    "hallucinations_v1": ("hallucinations_v1", "HallucinationsV1Evaluator"),
}
_MATCH = {"exact": "EXACT", "in_order": "IN_ORDER", "any_order": "ANY_ORDER"}


def threshold(value: Any) -> float:
    """A criterion's threshold: the number, or its mapping's `threshold`."""
    return float(value["threshold"] if isinstance(value, Mapping) else value)


def adk_criterion(name: str, value: Any, case: Case) -> Any:
    """ADK's criterion object of the criterion `name` (its eval file `value`) for `case`."""
    from google.adk.evaluation import eval_metrics as m
    from google.adk.evaluation.eval_rubrics import Rubric, RubricContent

    options = dict(value) if isinstance(value, Mapping) else {}
    limit = threshold(value)
    if name == "tool_trajectory_avg_score":
        return m.ToolTrajectoryCriterion(
            threshold=limit, match_type=_MATCH[options.get("match", "exact")],
            ignore_args=bool(options.get("ignore_args", False)))
    if name not in JUDGED:
        return m.BaseCriterion(threshold=limit)
    assert case.judge is not None, "checked: judged criteria come with a judge"
    judge = m.JudgeModelOptions(judge_model=case.judge.model,
                                num_samples=int(options.get("samples") or case.judge.samples))
    if name == "hallucinations_v1":
        return m.HallucinationsCriterion(threshold=limit, judge_model_options=judge)
    if name.startswith("rubric_based_"):
        rubrics = [Rubric(rubric_id=f"rubric_{index}",
                          rubric_content=RubricContent(text_property=text))
                   for index, text in enumerate(case.rubrics, 1)]
        return m.RubricsBasedCriterion(threshold=limit, judge_model_options=judge,
                                       rubrics=rubrics)
    return m.LlmAsAJudgeCriterion(threshold=limit, judge_model_options=judge)


def evaluator(name: str, value: Any, case: Case) -> Any:
    """ADK's evaluator of the criterion `name` (its eval file `value`) for `case`; raises
    the `contract.extras` error when ADK's evaluator needs a package the install lacks."""
    from google.adk.evaluation.eval_metrics import EvalMetric

    module, cls = EVALUATORS[name]
    try:
        found = getattr(importlib.import_module(f"google.adk.evaluation.{module}"), cls)
    except ModuleNotFoundError as exc:
        from agentspec.contract.extras import install

        raise MissingExtra(f"the criterion `{name}` needs {exc.name}, which this install "
                           f"lacks; {install('eval')}") from None
    with warnings.catch_warnings():  # ADK marks its judged evaluators experimental
        warnings.filterwarnings("ignore", message=r"\[EXPERIMENTAL\]", category=UserWarning)
        return found(eval_metric=EvalMetric(metric_name=name,
                                            criterion=adk_criterion(name, value, case)))


class MissingExtra(Exception):
    """A criterion's evaluator needs an optional package."""
