"""Check an eval file: every key against the models (`agentspec.evaluation.models`), at
file:line:col, with codes and did-you-mean; then what the models cannot say (a criterion
without what it reads, a judged criterion without a judge, names the spec lacks, state the
spec requires). Imports no ADK, so `validate` can run it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from agentspec.diagnostics import Diagnostic, codes, did_you_mean
from agentspec.evaluation.models import JUDGED, NEEDS_REFERENCE, NEEDS_RUBRICS, EvalFile
from agentspec.language.prebuilt import validator
from agentspec.parse import Path as DataPath
from agentspec.parse import PosNode
from agentspec.project_files import Project
from agentspec.testing.datafile import Checked, check_data_file, listed, missing_state
from agentspec.testing.names import SpecNames
from agentspec.validate.structural import Mapper

__all__ = ["check_evals", "effective_criteria"]

_SHAPE = "An eval file is a mapping: `criteria: {...}`, `cases: [...]` and, if a criterion " \
    "needs one, `judge: {model: ...}`"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def effective_criteria(data: Mapping[str, Any], case: Mapping[str, Any]) -> dict[str, Any]:
    """The criteria a case is scored by: the file's, with the case's over them (a null
    entry takes a file criterion off the case)."""
    merged = {**_mapping(data.get("criteria")), **_mapping(case.get("criteria"))}
    return {name: value for name, value in merged.items() if value is not None}


def _criteria(data: Mapping[str, Any], case: Mapping[str, Any], at: DataPath,
              pos: PosNode) -> Iterator[Diagnostic]:
    criteria = effective_criteria(data, case)
    turns = _list(case.get("turns"))
    for name in NEEDS_REFERENCE:
        if name not in criteria:
            continue
        for index, turn in enumerate(turns):
            if isinstance(turn, Mapping) and not turn.get("reference"):
                yield codes.EVAL_MISSING_REFERENCE(
                    f"`{name}` compares each answer with the turn's `reference`; this turn "
                    "has none", pos.value_span((*at, "turns", index)),
                    hint="add `reference: TEXT` to the turn, or take the criterion off the "
                    f"case (`criteria: {{{name}: null}}`)")
    for name in NEEDS_RUBRICS:
        if name in criteria and not _list(case.get("rubrics")):
            yield codes.EVAL_MISSING_RUBRICS(
                f"`{name}` checks the case's `rubrics`; it has none",
                pos.key_span((*at, "name")) if "name" in case else pos.value_span(at),
                hint="add `rubrics: [a property the answer must have, ...]` to the case")


def _judge(data: Mapping[str, Any], pos: PosNode) -> Iterator[Diagnostic]:
    if data.get("judge") is not None:
        return
    used = dict.fromkeys(name for case in _list(data.get("cases")) if isinstance(case, Mapping)
                         for name in effective_criteria(data, case) if name in JUDGED)
    if used:
        where: DataPath = ("criteria", next(iter(used))) if next(iter(used)) in \
            _mapping(data.get("criteria")) else ("cases",)
        yield codes.EVAL_MISSING_JUDGE(
            f"{', '.join(f'`{n}`' for n in used)} need{'s' * (len(used) == 1)} a judge "
            "model, and the file chooses none", pos.key_span(where),
            hint="add `judge: {model: gemini-2.5-flash}` (or another model) to the file")


def _names(case: Mapping[str, Any], at: DataPath, pos: PosNode,
           names: SpecNames) -> Iterator[Diagnostic]:
    used: list[tuple[str, Any, DataPath, bool]] = []
    for index, turn in enumerate(_list(case.get("turns"))):
        for number, tool in enumerate(_list(_mapping(turn).get("tools"))):
            where = (*at, "turns", index, "tools", number)
            used.append(("tool", tool.get("name") if isinstance(tool, Mapping) else tool,
                         (*where, "name") if isinstance(tool, Mapping) else where, False))
    used += [("tool", name, (*at, "stubs", name), True) for name in _mapping(case.get("stubs"))]
    used += [("agent", name, (*at, "replies", name), True)
             for name in _mapping(case.get("replies"))]
    for kind, name, where, is_key in used:
        if not isinstance(name, str):
            continue
        span = pos.key_span(where) if is_key else pos.value_span(where)
        if kind == "tool" and name not in names.tools:
            hint = did_you_mean(name, names.tools)
            if not (names.opaque and hint is None):
                yield codes.EVAL_UNKNOWN_TOOL(
                    f"no agent of the spec has a tool named `{name[:60]}`", span,
                    hint=hint or f"its tools: {listed(names.tools)}")
        if kind == "agent" and name not in names.scripted:
            yield codes.EVAL_UNKNOWN_AGENT(
                f"the spec has no agent with a model named `{name[:60]}`", span,
                hint=did_you_mean(name, names.scripted) or
                f"its agents: {listed(names.scripted)}")


def _semantic(data: Any, pos: PosNode, required: Mapping[str, str | None],
              names: SpecNames | None) -> Iterator[Diagnostic]:
    if not isinstance(data, Mapping):
        return
    yield from _judge(data, pos)
    seen: dict[str, DataPath] = {}
    for index, case in enumerate(_list(data.get("cases"))):
        if not isinstance(case, Mapping):
            continue
        at: DataPath = ("cases", index)
        name = case.get("name")
        if isinstance(name, str):
            if name in seen:
                yield codes.EVAL_DUPLICATE_CASE(
                    f"a case named `{name}` comes earlier in the file",
                    pos.value_span((*at, "name")), hint="give each case its own name")
            seen.setdefault(name, at)
        yield from _criteria(data, case, at, pos)
        yield from missing_state(case, at, pos, required, codes.EVAL_MISSING_STATE, "case")
        if names is not None:
            yield from _names(case, at, pos, names)


def check_evals(path: Path, required: Mapping[str, str | None] | None = None, *,
                project: Project | None = None, names: SpecNames | None = None,
                text: str | None = None) -> Checked:
    """Check the eval file at `path`, as `agentspec.testing.check.check_scenarios` checks a
    scenario file: `required` state keys, the `project` it must be in, the spec's `names`,
    `text` in place of the file on disk (an editor's unsaved buffer)."""
    return check_data_file(
        path, validator("eval_file", EvalFile),
        lambda doc: Mapper(doc, EvalFile, whole="the eval file"),
        lambda data, pos: _semantic(data, pos, required or {}, names),
        what="eval file", shape=_SHAPE, project=project, text=text)
