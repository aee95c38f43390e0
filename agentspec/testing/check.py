"""Check a scenario file: every key against the models (`agentspec.testing.models`), at
file:line:col, with codes and did-you-mean; then what the models cannot say (a comma split
by a flow mapping, a pattern that does not compile, an expectation that cannot fail, state
the spec requires). Imports no ADK, so `validate` can run it."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from agentspec.diagnostics import Diagnostic, codes
from agentspec.parse import Path as DataPath
from agentspec.parse import PosNode, load
from agentspec.resolve import Document
from agentspec.source import SourceFile
from agentspec.testing.models import ScenarioFile
from agentspec.validate.locations import locate
from agentspec.validate.structural import Mapper

__all__ = ["Checked", "check_scenarios", "scenario_paths"]


#: the reader's codes for a file that holds no mapping: its hint is for spec files
_NOT_A_FILE = {"AS007", "AS008"}
_SHAPE = "A scenario file is a mapping: `messages: [...]` and the rest of one scenario, or " \
    "`scenarios: [...]`"


@cache
def _adapter() -> TypeAdapter[Any]:
    return TypeAdapter(ScenarioFile)


@dataclass
class Checked:
    """A scenario file: its data (None when it could not be read), its source, its problems."""

    path: Path
    data: Any = None
    sources: dict[str, SourceFile] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    readable: bool = True  # False when the file itself could not be read

    @property
    def ok(self) -> bool:
        return self.data is not None and not any(d.is_error for d in self.diagnostics)


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


def _semantic(data: Any, pos: PosNode, required: Mapping[str, str | None]
              ) -> Iterator[Diagnostic]:
    for at, scenario in scenario_paths(data):
        expect = _mapping(scenario.get("expect"))
        final = expect.get("final")
        if isinstance(final, Mapping):
            where = (*at, "expect", "final")
            if not final:
                yield codes.SCENARIO_EXPECTS_NOTHING(
                    "`final: {}` checks nothing", pos.value_span(where),
                    hint="give `contains: TEXT` or `matches: REGEX`")
            pattern = final.get("matches")
            if isinstance(pattern, str):
                try:
                    re.compile(pattern)
                except re.error as exc:
                    yield codes.SCENARIO_INVALID_PATTERN(
                        f"`{pattern}` is no regular expression: {exc}",
                        pos.value_span((*where, "matches")),
                        hint="fix the expression, or use `contains` for plain text")
        errors = expect.get("errors")
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
        state = _mapping(scenario.get("state"))
        for key, description in required.items():
            if key not in state:
                about = f" ({description})" if description else ""
                yield codes.SCENARIO_MISSING_STATE(
                    f"the scenario does not give `{key}`{about}, which the spec's `state:` "
                    "says the session's creator supplies",
                    pos.key_span((*at, "state")) if "state" in scenario
                    else pos.value_span(at), hint=f"add `{key}: VALUE` to the scenario's "
                    "`state:`")


def check_scenarios(path: Path, required: Mapping[str, str | None] | None = None) -> Checked:
    """Check the scenario file at `path`; `required`: the state keys the spec says the
    session's creator supplies (each scenario's `state:` must give them)."""
    parsed = load(path)
    checked = Checked(path, sources={parsed.source.name: parsed.source},
                      diagnostics=list(parsed.diagnostics), readable=parsed.readable)
    if not parsed.ok or parsed.positions is None:
        checked.diagnostics = [dataclasses.replace(d, hint=_SHAPE) if d.code in _NOT_A_FILE
                               else d for d in checked.diagnostics]
        return checked
    doc = Document(parsed.value, parsed.positions)
    try:
        _adapter().validate_python(parsed.value)
    except ValidationError as exc:
        mapper = _ScenarioMapper(doc, ScenarioFile, whole="the scenario file")
        checked.diagnostics += [mapper.diagnostic(e) for e in exc.errors(include_url=False)]
    checked.diagnostics += _semantic(parsed.value, parsed.positions, required or {})
    checked.data = parsed.value
    return checked
