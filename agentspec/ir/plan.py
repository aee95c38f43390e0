"""The construction plan: ordered constructor calls that both emitters read.

A value is a literal (None, bool, int, float, str), a list or mapping of values, an `Import`
(a symbol from a module), a `Ref` to an earlier binding, a `Call`, or an `Env` string whose
`${env.X}` are read when the agent is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

__all__ = ["Binding", "Call", "DictOf", "Env", "Import", "ListOf", "Plan", "Ref", "SpecPath",
           "Value"]


@dataclass(frozen=True)
class Import:
    module: str
    name: str  # may be dotted: an attribute of an attribute

    @property
    def top(self) -> str:
        return self.name.split(".")[0]


@dataclass(frozen=True)
class Ref:
    var: str


@dataclass(frozen=True)
class Env:
    template: str


@dataclass(frozen=True)
class SpecPath:
    """A path relative to the spec's directory, made absolute where the app is loaded."""

    relative: str


@dataclass(frozen=True)
class ListOf:
    items: tuple[Value, ...]


@dataclass(frozen=True)
class DictOf:
    items: tuple[tuple[str, Value], ...]


@dataclass(frozen=True)
class Call:
    callee: Import
    kwargs: tuple[tuple[str, Value], ...] = ()
    args: tuple[Value, ...] = ()


Value = Union[None, bool, int, float, str, ListOf, DictOf, Import, Ref, Env, SpecPath,  # noqa: UP007
              Call]


@dataclass(frozen=True)
class Binding:
    """`var = value`, generated from the spec line `line` of `file`."""

    var: str
    value: Value
    file: str = ""
    line: int = 0


@dataclass(frozen=True)
class Plan:
    """Everything needed to build the app: bindings in dependency order, `root_agent` and
    `app` last."""

    app_name: str
    description: str | None
    spec_file: str
    bindings: tuple[Binding, ...]
    #: directories (relative to the spec) put on sys.path so user modules import
    module_dirs: tuple[str, ...] = field(default=())
