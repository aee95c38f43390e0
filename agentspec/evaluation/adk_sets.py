"""ADK's eval sets: written from eval files and scenarios (`eval --export-adk DIR`), so `adk
eval` runs them on the generated package, and read as cases (`agentspec eval SPEC
x.evalset.json`, with `test_config.json` beside it, as `adk eval` reads it).

Each folder written holds one `.evalset.json` and its `test_config.json`: ADK's config is per
set, so the cases of a file whose criteria, judge or rubrics differ go to folders of their
own. A scenario becomes a case whose turns are its messages; its `expect.tools` are expected
in its last turn, compared by name in any order (a scenario expects calls with at least the
given arguments, which ADK's exact argument match cannot say); its `final`, a text test
rather than a reference answer, is not exported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentspec.diagnostics import Diagnostic, codes
from agentspec.evaluation.cases import Case, ExpectedTurn, Judge
from agentspec.evaluation.criteria import EVALUATORS, adk_criterion
from agentspec.parse import load

__all__ = ["export", "read_adk_set", "scenario_cases"]

#: what `adk eval` uses when no test_config.json is beside the set
ADK_DEFAULT_CRITERIA = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}
_MATCH = {"EXACT": "exact", "IN_ORDER": "in_order", "ANY_ORDER": "any_order", "0": "exact",
          "1": "in_order", "2": "any_order"}


def scenario_cases(scenarios: list[Any], source: str) -> list[Case]:
    """Scenarios (`agentspec.testing.scenarios.Scenario`) as cases scored by the tools they
    expect (by name, any order), with their scripted replies."""
    found = []
    for scenario in scenarios:
        tools: list[tuple[str, dict[str, Any]]] = [
            (t if isinstance(t, str) else str(t.get("name")), {})
            for t in scenario.expect.get("tools") or []]
        turns = [ExpectedTurn(m, [] if i < len(scenario.messages) - 1 else tools)
                 for i, m in enumerate(scenario.messages)]
        found.append(Case(name=scenario.name, turns=turns, criteria={
            "tool_trajectory_avg_score": {"threshold": 1.0, "match": "any_order",
                                          "ignore_args": True}},
            state=dict(scenario.state), replies=scenario.replies, stubs=dict(scenario.stubs),
            env=dict(scenario.env), source=source))
    return found


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_") or "case"


def _eval_case(case: Case, app_name: str) -> Any:
    from google.adk.evaluation.eval_case import EvalCase, SessionInput

    from agentspec.evaluation.cases import expected_invocations

    return EvalCase(eval_id=_slug(case.name), conversation=expected_invocations(case),
                    session_input=SessionInput(app_name=app_name, user_id="user",
                                               state=dict(case.state)))


def _config(case: Case) -> Any:
    from google.adk.evaluation.eval_config import EvalConfig

    return EvalConfig(criteria={name: adk_criterion(name, value, case)
                                for name, value in case.criteria.items()})


def export(cases: list[Case], app_name: str, directory: Path, stem: str) -> list[Path]:
    """Writes the cases' eval sets and configs under `directory` (never through a link,
    replacing older ones); the folders written."""
    from google.adk.evaluation.eval_set import EvalSet

    from agentspec import safefs

    groups: dict[str, list[Case]] = {}
    for case in cases:
        key = json.dumps([case.criteria, case.judge and vars(case.judge), case.rubrics],
                         sort_keys=True, default=str)
        groups.setdefault(key, []).append(case)
    written = []
    with safefs.directory(directory, create=True) as root:
        for index, group in enumerate(groups.values()):
            name = _slug(stem) + (f"_{index + 1}" if len(groups) > 1 else "")
            eval_set = EvalSet(eval_set_id=name, name=name,
                               eval_cases=[_eval_case(case, app_name) for case in group])
            files = {f"{name}.evalset.json": eval_set.model_dump_json(
                         indent=2, exclude_none=True),
                     "test_config.json": _config(group[0]).model_dump_json(
                         indent=2, exclude_none=True, by_alias=True)}
            with safefs.subdirectory(root, name, create=True,
                                     shown=str(directory / name)) as folder:
                for file, text in files.items():
                    safefs.write_file(folder, file, (text + "\n").encode("utf-8"),
                                      shown=str(directory / name / file), replace=True)
            written.append(directory / name)
    return written


def _text(content: Any) -> str:
    parts = getattr(content, "parts", None) or []
    return "".join(p.text or "" for p in parts if getattr(p, "text", None))


def _criteria_of(config: Mapping[str, Any], path: Path) -> tuple[dict[str, Any],
                                                                  Judge | None, list[str],
                                                                  list[Diagnostic]]:
    criteria: dict[str, Any] = {}
    judge: Judge | None = None
    rubrics: list[str] = []
    problems = []
    for name, value in (config.get("criteria") or {}).items():
        if name not in EVALUATORS:
            problems.append(codes.EVAL_INVALID_ADK_SET(
                f"`{path.name}` asks for the criterion `{name}`, which `agentspec eval` "
                "does not run", None, hint=f"it runs {', '.join(f'`{n}`' for n in EVALUATORS)}"
                "; run this set with `adk eval`"))
            continue
        if not isinstance(value, Mapping):
            criteria[name] = float(value)
            continue
        entry: dict[str, Any] = {"threshold": float(value["threshold"])}
        match = value.get("match_type", value.get("matchType"))
        if match is not None:
            entry["match"] = _MATCH.get(str(match).upper(), "exact")
        if value.get("ignore_args", value.get("ignoreArgs")):
            entry["ignore_args"] = True
        options = value.get("judge_model_options", value.get("judgeModelOptions")) or {}
        model = options.get("judge_model", options.get("judgeModel"))
        if name in ("final_response_match_v2", "hallucinations_v1") or "rubric" in name:
            judge = Judge(str(model or "gemini-2.5-flash"),
                          int(options.get("num_samples", options.get("numSamples", 5))))
        for rubric in value.get("rubrics") or []:
            content = rubric.get("rubric_content", rubric.get("rubricContent")) or {}
            text = content.get("text_property", content.get("textProperty"))
            if text:
                rubrics.append(str(text))
        criteria[name] = entry
    return criteria, judge, rubrics, problems


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower()


def _located(data: Any, loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """The longest part of pydantic's `loc` (camelCase aliases or the fields' names) that is
    in `data`, as keys of `data`."""
    found: list[Any] = []
    for part in loc:
        if isinstance(data, Mapping):
            key = part if part in data else _snake(str(part))
            if key not in data:
                break
        elif isinstance(data, list) and isinstance(part, int) and part < len(data):
            key = part
        else:
            break
        found.append(key)
        data = data[key]
    return tuple(found)


def read_adk_set(path: Path) -> tuple[list[Case], list[Diagnostic]]:
    """The cases of an ADK eval set, scored by the `test_config.json` beside it (ADK's
    default criteria without one)."""
    from google.adk.evaluation.eval_case import get_all_tool_calls
    from google.adk.evaluation.eval_set import EvalSet
    from pydantic import ValidationError

    parsed = load(path)  # JSON is YAML: the positions of what ADK's model refuses
    if not parsed.ok or parsed.positions is None:
        return [], list(parsed.diagnostics)
    try:
        eval_set = EvalSet.model_validate(parsed.value)
    except ValidationError as exc:
        found = []
        for error in exc.errors(include_url=False)[:20]:
            where = _located(parsed.value, error["loc"])
            found.append(codes.EVAL_INVALID_ADK_SET(
                f"`{'.'.join(map(str, where)) or 'the file'}`"
                + (f" (`{error['loc'][-1]}`)" if len(where) < len(error["loc"]) else "")
                + f": {error['msg']}", parsed.positions.value_span(where),
                hint="fix it as ADK's `EvalSet` model says, or write it again with "
                "`adk web`"))
        return [], found
    config_path = path.parent / "test_config.json"
    try:
        config = json.loads(config_path.read_text(encoding="utf-8")) \
            if config_path.is_file() else {"criteria": ADK_DEFAULT_CRITERIA}
    except (OSError, ValueError) as exc:
        return [], [codes.EVAL_INVALID_ADK_SET(f"cannot read `{config_path}`: {exc}", None)]
    criteria, judge, rubrics, problems = _criteria_of(config, config_path)
    cases = []
    for case in eval_set.eval_cases:
        if case.conversation is None:
            problems.append(codes.EVAL_INVALID_ADK_SET(
                f"the case `{case.eval_id}` of `{path}` is a user-simulated conversation, "
                "which `agentspec eval` does not run", None,
                hint="run it with `adk eval`, or give the case a `conversation`"))
            continue
        turns = [ExpectedTurn(_text(i.user_content), [
            (c.name or "", dict(c.args or {})) for c in get_all_tool_calls(i.intermediate_data)],
            _text(i.final_response) if i.final_response else None)
            for i in case.conversation]
        cases.append(Case(name=case.eval_id, turns=turns, criteria=dict(criteria),
                          judge=judge, rubrics=rubrics + [r.rubric_content.text_property or ""
                                                          for r in case.rubrics or []],
                          state=dict(case.session_input.state) if case.session_input else {},
                          source=str(path)))
    return cases, problems
