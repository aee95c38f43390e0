"""Structural validation: the resolved data against the pydantic language models."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from agentspec.diagnostics import Diagnostic, codes, did_you_mean
from agentspec.language import AGENT_KINDS, Spec
from agentspec.language.agents import KIND_MODELS, AgentBase, kinds_taking
from agentspec.language.common import ONE_KEY_UNIONS, UNION_MESSAGES, is_reserved_word
from agentspec.language.prebuilt import validator
from agentspec.parse import Path
from agentspec.parse import type_name as kind_name
from agentspec.resolve.document import SECTIONS, Document
from agentspec.source import Span
from agentspec.validate.locations import Location, locate

__all__ = ["Mapper", "Structure", "structural"]

_AGENT_FIELDS = {name for cls in KIND_MODELS.values() for name in cls.model_fields}
_EXPECTED = {"string_type": "text", "int_type": "a whole number", "float_type": "a number",
             "bool_type": "true or false", "dict_type": "a mapping", "model_type": "a mapping",
             "model_attributes_type": "a mapping", "list_type": "a list",
             "int_from_float": "a whole number", "literal_error": "one of the allowed words"}
_RANGE = {"greater_than": "greater than {gt}", "greater_than_equal": "at least {ge}",
          "less_than": "less than {lt}", "less_than_equal": "at most {le}",
          "too_short": "at least {min_length} long", "too_long": "at most {max_length} long",
          "string_too_short": "at least {min_length} characters",
          "finite_number": "a finite number"}


def _lookup(data: Any, path: Path) -> Any:
    for key in path:
        try:
            data = data[key]
        except (KeyError, IndexError, TypeError):
            return None
    return data


#: how much of an unknown key a message shows: a file that is not what it should be (a
#: secret linked in, a binary) must not be echoed line by line
MAX_KEY_SHOWN = 60


def _bounded(key: object) -> str:
    text = str(key)
    return text if len(text) <= MAX_KEY_SHOWN else text[:MAX_KEY_SHOWN - 1] + "…"


def _name(path: Path, whole: str = "the spec") -> str:
    return ".".join(_bounded(p) for p in path) or whole


class Mapper:
    """Pydantic errors of the data of `doc`, validated as `root`, as diagnostics."""

    def __init__(self, doc: Document, root: Any = Spec, whole: str = "the spec") -> None:
        self.doc = doc
        self.root = root
        self.whole = whole  # what an empty path names

    def diagnostic(self, error: Any) -> Diagnostic:
        location = locate(tuple(error["loc"]), self.root)
        path = location.path
        kind = error["type"]
        if kind == "extra_forbidden":
            return self.unknown_key(location)
        if kind == "missing":
            return codes.MISSING_KEY(
                f"missing required key `{path[-1]}` in `{self._path_name(path[:-1])}`",
                self.doc.pos.key_span(path[:-1]))
        if kind in UNION_MESSAGES:
            return self.union(kind, path, error)
        if location.key_error and len(path) >= 2 and path[-2] == "routes":
            names = [n for n in str(path[-1]).split("/") if n]
            hint = "a prefix names directories, never `.` or `..`" \
                if {".", ".."} & set(names) else \
                f"prefixes start and end with `/`: `{'/'.join(['', *names, ''])}`"
            return codes.INVALID_VALUE(f"`{path[-1]}` is not a route prefix",
                                       self.doc.pos.key_span(path), hint=hint)
        if location.key_error and path[:-1] == ("state",):
            return self.invalid_state_key(str(path[-1]), self.doc.pos.key_span(path))
        if location.key_error:
            return self.invalid_name(path[-1], self.doc.pos.key_span(path))
        if path and path[-1] == "name" and ("pattern" in kind or kind == "value_error"):
            return self.invalid_name(_lookup(self.doc.data, path), self.value_span(path))
        return self.value_error(kind, path, error)

    def _path_name(self, path: Path) -> str:
        return _name(path, self.whole)

    def value_span(self, path: Path) -> Span:
        return self.doc.pos.value_span(path)

    @staticmethod
    def invalid_name(shown: object, span: Span) -> Diagnostic:
        if isinstance(shown, str) and is_reserved_word(shown):
            return codes.INVALID_NAME(f"`{shown}` is a reserved word in Python, so generated "
                                      "code cannot use it as a name", span,
                                      hint="choose another name")
        return codes.INVALID_NAME(f"`{shown}` is not a valid name", span,
                                  hint="use letters, digits and underscores, not starting with "
                                  "a digit")

    @staticmethod
    def invalid_state_key(key: str, span: Span) -> Diagnostic:
        if key.startswith("temp:"):
            return codes.INVALID_STATE_KEY(
                f"`{key}` cannot be initial state: `temp:` state lasts one invocation", span,
                hint="set it from a tool or callback, and read it with `{" + key + "?}`")
        return codes.INVALID_STATE_KEY(
            f"`{key}` is not a state key a placeholder can name", span,
            hint="use letters, digits and underscores, optionally after `app:` or `user:`")

    def unknown_key(self, location: Location) -> Diagnostic:
        path, model = location.path, location.model
        key, span = path[-1], self.doc.pos.key_span(path)
        allowed = list(model.model_fields) if model else []
        if model is not None and issubclass(model, AgentBase) and key in _AGENT_FIELDS:
            kind = _lookup(self.doc.data, path[:-1]).get("kind", "llm")
            return codes.FIELD_NOT_FOR_KIND(f"`{kind}` agents do not take `{key}`", span,
                                            hint=_kind_hint(str(key)))
        where = f" in `{self._path_name(path[:-1])}`" if path[:-1] else ""
        return codes.UNKNOWN_KEY(f"unknown key `{_bounded(key)}`{where}", span,
                                 hint=did_you_mean(key, allowed))

    def union(self, kind: str, path: Path, error: Any) -> Diagnostic:
        message, keys = UNION_MESSAGES[kind]
        value = error["input"]
        span = self.value_span(path)
        if kind == "agent_kind" and isinstance(value, dict):
            return codes.UNKNOWN_KIND(
                f"unknown agent kind `{value.get('kind')}`", self.value_span((*path, "kind")),
                hint=did_you_mean(value.get("kind"), AGENT_KINDS)
                or f"use one of {', '.join(AGENT_KINDS)}")
        if kind == "backend_type" and isinstance(value, dict):
            if "type" not in value:
                return codes.MISSING_KEY(
                    f"missing required key `type` in `{self._path_name(path)}`",
                    self.doc.pos.key_span(path), hint=message)
            return codes.INVALID_VALUE(
                f"unknown backend type `{value['type']}`", self.value_span((*path, "type")),
                hint=did_you_mean(value["type"], keys) or message)
        if kind in ONE_KEY_UNIONS and isinstance(value, dict):
            found = ", ".join(f"`{k}`" for k in keys if k in value) or "none of them"
            close = None if any(k in value for k in keys) else next(
                (hint for k in value if (hint := did_you_mean(k, keys))), None)
            return codes.ONE_OF(f"{message[0].upper()}{message[1:]}; found {found}", span,
                                hint=close)
        return codes.WRONG_TYPE(f"`{self._path_name(path)}`: {message}, not {kind_name(value)}",
                                span)

    def value_error(self, kind: str, path: Path, error: Any) -> Diagnostic:
        span = self.value_span(path)
        value = error["input"]
        ctx = error.get("ctx") or {}
        if path == ("agentspec",):
            return codes.UNSUPPORTED_VERSION(
                f"language version `{value}` is not supported", span,
                hint="this release supports version 1: write `agentspec: 1`")
        if kind == "literal_error":
            expected = ctx.get("expected", "")
            choices = [c.strip().strip("'") for c in expected.replace(" or ", ", ").split(",")]
            return codes.INVALID_VALUE(f"`{value}` is not one of {expected}", span,
                                       hint=did_you_mean(value, choices))
        if kind in _EXPECTED:
            return codes.WRONG_TYPE(f"`{self._path_name(path)}` must be {_EXPECTED[kind]}, "
                                    f"not {kind_name(value)}", span)
        if kind in _RANGE:
            bound = _RANGE[kind].format(**ctx)
            return codes.INVALID_VALUE(f"`{self._path_name(path)}` must be {bound}; got `{value}`",
                                       span)
        if kind == "string_pattern_mismatch":
            return codes.INVALID_VALUE(f"`{value}` does not have the form "
                                       f"`{self._path_name(path)}` takes", span,
                                       hint=f"it must match {ctx.get('pattern')}")
        return codes.INVALID_VALUE(f"`{self._path_name(path)}`: {error['msg'][0].lower()}"
                                   f"{error['msg'][1:]}", span)


def _kind_hint(field: str) -> str:
    kinds = kinds_taking(field)
    listed = ", ".join(f"`{k}`" for k in kinds[:-1]) + f" and `{kinds[-1]}`" if len(kinds) > 1 \
        else f"`{kinds[0]}`"
    return f"only {listed} agents take `{field}`"


def _without(data: Any, path: Path) -> Any:
    """A copy of `data` lacking the value at `path` (copying only along the path)."""
    if not path or not isinstance(data, (dict, list)):
        return data
    head, rest = path[0], path[1:]
    if isinstance(data, dict):
        if head not in data:
            return data
        if not rest:
            return {k: v for k, v in data.items() if k != head}
        return {**data, head: _without(data[head], rest)}
    if not isinstance(head, int) or not 0 <= head < len(data):
        return data
    if not rest:
        return [v for i, v in enumerate(data) if i != head]
    return [*data[:head], _without(data[head], rest), *data[head + 1:]]


def _prune(data: dict[str, Any], paths: list[Path], depth: int) -> dict[str, Any]:
    """Drop what failed so the rest can still be checked: first the failing field of a
    definition (or state entry), then the whole definition, then the top-level key."""
    for path in paths:
        keep = depth if path and path[0] in (*SECTIONS, "state") else 1
        data = _without(data, path[:keep])
    return {"agentspec": 1, "name": "spec", "agents": {}, **data}


@dataclass
class Structure:
    """The valid part of the spec, the diagnostics, and which definitions had errors (later
    checks stay quiet about what is missing from those, since it was cut out)."""

    spec: Spec
    diagnostics: list[Diagnostic] = field(default_factory=list)
    broken: set[Path] = field(default_factory=set)


def _validate(data: Any) -> Spec:
    spec: Spec = validator("spec", Spec).validate_python(data)
    return spec


def structural(doc: Document) -> Structure:
    """Validate `doc` against the language."""
    try:
        return Structure(_validate(doc.data))
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    mapper = Mapper(doc)
    result = Structure(Spec.model_construct(agentspec=1, name="spec", agents={}),
                       [mapper.diagnostic(e) for e in errors])
    data = doc.data
    for depth in (3, 2, 1):
        paths = [locate(tuple(e["loc"])).path for e in errors]
        result.broken.update(p[:2] for p in paths if len(p) >= 2 and p[0] in SECTIONS)
        data = _prune(data, paths, depth)
        try:
            result.spec = _validate(data)
            break
        except ValidationError as exc:
            errors = exc.errors(include_url=False)
    return result
