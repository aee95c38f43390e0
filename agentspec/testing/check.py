"""Check a scenario file: every key against the models (`agentspec.testing.models`), at
file:line:col, with codes and did-you-mean; then what the models cannot say (a comma split
by a flow mapping, a pattern that does not compile, an expectation that cannot fail, state
the spec requires). Imports no ADK, so `validate` can run it."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from agentspec.diagnostics import Diagnostic, codes, did_you_mean
from agentspec.language.prebuilt import validator
from agentspec.parse import Path as DataPath
from agentspec.parse import PosNode
from agentspec.project_files import Project
from agentspec.resolve import Document
from agentspec.testing.datafile import Checked, check_data_file, listed, missing_state
from agentspec.testing.models import ScenarioFile
from agentspec.testing.names import SpecNames
from agentspec.validate.locations import locate
from agentspec.validate.structural import Mapper

__all__ = ["Checked", "check_scenarios", "scenario_names", "scenario_paths"]


_SHAPE = "A scenario file is a mapping: `messages: [...]` and the rest of one scenario, or " \
    "`scenarios: [...]`"


def scenario_paths(data: Any) -> Iterator[tuple[DataPath, Mapping[str, Any]]]:
    """Each scenario (a mapping) of a file's data, with its path."""
    if isinstance(data, Mapping) and "scenarios" in data:
        items = data["scenarios"]
        for index, item in enumerate(items if isinstance(items, list) else []):
            if isinstance(item, Mapping):
                yield ("scenarios", index), item
    elif isinstance(data, Mapping):
        yield (), data


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


class _ScenarioMapper(Mapper):
    def diagnostic(self, error: Any) -> Diagnostic:
        if error["type"] == "extra_forbidden":
            path = locate(tuple(error["loc"]), self.root).path
            split = _comma_split(self.doc.data, path)
            if split is not None:
                return codes.SCENARIO_COMMA_SPLIT(
                    f"`{path[-1]}` has no value: YAML ended the text of `{split[0]}` at a "
                    "comma", self.doc.pos.key_span(path),
                    hint=f"quote the text: `{split[0]}: \"{split[1]}, {path[-1]}\"`")
        return super().diagnostic(error)


def _mapper(doc: Document) -> Mapper:
    return _ScenarioMapper(doc, ScenarioFile, whole="the scenario file")


def _lookup(data: Any, path: DataPath) -> Any:
    for key in path:
        data = data[key]
    return data


def _comma_split(data: Any, path: DataPath) -> tuple[str, str] | None:
    """`(key, text)` when the unknown key at `path` looks like the rest of the text of a
    sibling key that a flow mapping's comma cut off: it has no value, the key before it has
    text."""
    parent = _lookup(data, path[:-1])
    keys = list(parent)
    index = keys.index(path[-1])
    if parent[path[-1]] is not None or index == 0:
        return None
    before = keys[index - 1]
    text = parent[before]
    if not isinstance(text, str):
        return None
    return str(before), text


def _final(final: Any, where: DataPath, pos: PosNode) -> Iterator[Diagnostic]:
    if final == "" or isinstance(final, Mapping) and not final:
        yield codes.SCENARIO_EXPECTS_NOTHING(
            "an empty `final` checks nothing: every answer contains the empty text",
            pos.value_span(where), hint="give `contains: TEXT` or `matches: REGEX`")
    if not isinstance(final, Mapping):
        return
    for key, why in (("contains", "every answer contains the empty text"),
                     ("matches", "the empty pattern matches every answer")):
        if final.get(key) == "":
            yield codes.SCENARIO_EXPECTS_NOTHING(
                f"an empty `{key}` checks nothing: {why}", pos.value_span((*where, key)),
                hint="say what the last answer must hold, or remove the entry")
    pattern = final.get("matches")
    if isinstance(pattern, str):
        try:
            re.compile(pattern)
        except re.error as exc:
            yield codes.SCENARIO_INVALID_PATTERN(
                f"`{pattern}` is no regular expression: {exc}",
                pos.value_span((*where, "matches")),
                hint="fix the expression, or use `contains` for plain text")


def _errors(errors: Any, at: DataPath, pos: PosNode) -> Iterator[Diagnostic]:
    for index, entry in enumerate(errors if isinstance(errors, list) else []):
        if not isinstance(entry, Mapping):
            continue
        named = [k for k in ("agent", "tool") if k in entry]
        where = (*at, "expect", "errors", index)
        if not named:
            yield codes.SCENARIO_EXPECTS_NOTHING(
                "an expected error that names neither `agent` nor `tool` matches no "
                "error", pos.value_span(where), hint="name the agent that fails (`agent: "
                "NAME`) or the tool whose result is an error (`tool: NAME`)")
        elif len(named) == 2:
            yield codes.ONE_OF("an expected error names exactly one of `agent` and "
                               "`tool`; found both", pos.value_span(where))


def _semantic(data: Any, pos: PosNode, required: Mapping[str, str | None],
              names: SpecNames | None) -> Iterator[Diagnostic]:
    for at, scenario in scenario_paths(data):
        expect = _mapping(scenario.get("expect"))
        if "final" in expect:
            yield from _final(expect["final"], (*at, "expect", "final"), pos)
        yield from _errors(expect.get("errors"), at, pos)
        yield from missing_state(scenario, at, pos, required, codes.SCENARIO_MISSING_STATE,
                                 "scenario")
        if names is not None:
            yield from _names(scenario, at, pos, names)


def scenario_names(scenario: Mapping[str, Any], at: DataPath
                   ) -> Iterator[tuple[str, Any, DataPath, bool]]:
    """Each name a scenario uses: (`agent`, `scripted` or `tool`; the name; where; whether
    the span is the key)."""
    for agent in _mapping(scenario.get("replies")):
        yield "scripted", agent, (*at, "replies", agent), True
    for tool in _mapping(scenario.get("stubs")):
        yield "tool", tool, (*at, "stubs", tool), True
    expect = _mapping(scenario.get("expect"))
    for field_name, kind in (("tools", "tool"), ("not_tools", "tool"), ("agents", "agent")):
        entries = expect.get(field_name)
        for index, entry in enumerate(entries if isinstance(entries, list) else []):
            if isinstance(entry, Mapping):
                yield kind, entry.get("name"), (*at, "expect", field_name, index, "name"), False
            else:
                yield kind, entry, (*at, "expect", field_name, index), False
    for field_name in ("errors", "jobs"):
        entries = expect.get(field_name)
        for index, entry in enumerate(entries if isinstance(entries, list) else []):
            for key in ("agent", "tool"):
                if isinstance(entry, Mapping) and key in entry:
                    yield key, entry[key], (*at, "expect", field_name, index, key), False


def _names(scenario: Mapping[str, Any], at: DataPath, pos: PosNode, names: SpecNames
           ) -> Iterator[Diagnostic]:
    """Every agent and tool a scenario names is one the spec has: a misspelt name in
    `not_tools` or `stubs` would make a scenario that cannot fail, or run the real tool."""
    for kind, name, where, is_key in scenario_names(scenario, at):
        if not isinstance(name, str):
            continue  # the models reported it
        span = pos.key_span(where) if is_key else pos.value_span(where)
        if kind == "tool":
            if name in names.tools:
                continue
            hint = did_you_mean(name, names.tools)
            if names.opaque and hint is None:
                continue  # a toolset or an unfiltered MCP server may provide it
            yield codes.SCENARIO_UNKNOWN_TOOL(
                f"no agent of the spec has a tool named `{_shown(name)}`", span,
                hint=hint or f"its tools: {listed(names.tools)}")
            continue
        known = names.scripted if kind == "scripted" else names.agents
        if name in known or kind != "scripted" and names.is_agent(name):
            continue
        what = "no agent with a model" if kind == "scripted" else "no agent"
        yield codes.SCENARIO_UNKNOWN_AGENT(
            f"the spec has {what} named `{_shown(name)}`", span,
            hint=did_you_mean(name, known) or f"its agents: {listed(known)}")


def _shown(name: str) -> str:
    return name if len(name) <= 60 else name[:59] + "…"


def check_scenarios(path: Path, required: Mapping[str, str | None] | None = None, *,
                    project: Project | None = None, names: SpecNames | None = None,
                    text: str | None = None) -> Checked:
    """Check the scenario file at `path`; `required`: the state keys the spec says the
    session's creator supplies (each scenario's `state:` must give them); `project`: where
    the file may be (one outside, through a link or otherwise, is never read); `names`: the
    spec's agents and tools, which the scenarios' names must be; `text`: the file's content
    in place of the file on disk (an editor's unsaved buffer)."""
    return check_data_file(
        path, validator("scenario_file", ScenarioFile), _mapper,
        lambda data, pos: _semantic(data, pos, required or {}, names),
        what="scenario file", shape=_SHAPE, project=project, text=text)
