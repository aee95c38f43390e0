"""Building blocks of the language models: the base model, names, references, keyed unions."""

from __future__ import annotations

import keyword
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Union, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    GetCoreSchemaHandler,
    StringConstraints,
    Tag,
    WithJsonSchema,
)
from pydantic_core import CoreSchema

__all__ = ["BY_TYPE_TAGS", "IDENTIFIER", "ONE_KEY_UNIONS", "PYTHON_REF", "TAGS", "UNION_MESSAGES",
           "Arguments", "ByType", "CodeName", "DirectoryPath", "FilePath", "Identifier", "Model",
           "PathField", "PythonRef", "is_reserved_word", "keyed_union", "one_key_union",
           "present_keys", "tag"]

IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]*$"
_DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*"
PYTHON_REF = rf"^{_DOTTED}:{_DOTTED}$"

#: every keyed union's tag -> the type it selects, for walking validation error locations
TAGS: dict[str, Any] = {}
#: the tags of the unions chosen by value type: their members are known from the annotated
#: union only (`ByType.tags`), never from its built schema, which a cached validator skips
BY_TYPE_TAGS: set[str] = set()
#: custom error type of each keyed union -> (message, keys it chooses between)
UNION_MESSAGES: dict[str, tuple[str, tuple[str, ...]]] = {}
#: unions told apart by which one of their member names is a key of the mapping
ONE_KEY_UNIONS: set[str] = set()


class Model(BaseModel):
    """Base of every language model: unknown keys are errors, no silent type coercion."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True,
                              allow_inf_nan=False)


Identifier = Annotated[str, StringConstraints(pattern=IDENTIFIER)]


@dataclass(frozen=True)
class PathField:
    """Marks a string field (or the strings of a list field) as a path on disk, relative to
    the file that names it; every such path must be inside the project (`outside_project`
    lists exceptions). `kind`: `file`, `directory`, or `sqlite` (the path of a
    `sqlite:///path` URL)."""

    kind: str


FilePath = Annotated[str, PathField("file")]
DirectoryPath = Annotated[str, PathField("directory")]


def is_reserved_word(name: str) -> bool:
    """A word Python refuses as a keyword argument or an imported name (`class`, `None`,
    `__debug__`, ...)."""
    return keyword.iskeyword(name) or name == "__debug__"


def _not_reserved(name: str) -> str:
    if is_reserved_word(name):
        raise ValueError(f"`{name}` is a reserved word in Python")
    return name


_RESERVED_SCHEMA = {"pattern": IDENTIFIER, "not": {"enum": [*keyword.kwlist, "__debug__"]}}
#: a name generated code uses as such (a package, a keyword argument): an identifier that
#: Python does not reserve
CodeName = Annotated[str, StringConstraints(pattern=IDENTIFIER), AfterValidator(_not_reserved),
                     WithJsonSchema({"type": "string", **_RESERVED_SCHEMA})]
#: keyword arguments of a call in generated code
Arguments = Annotated[dict[CodeName, Any], WithJsonSchema(
    {"type": "object", "propertyNames": _RESERVED_SCHEMA})]
PythonRef = Annotated[str, Field(
    description="A Python reference `package.module:attribute`, resolved beside the spec file.",
    json_schema_extra={"pattern": PYTHON_REF}, examples=["my_tools.search:web_search"])]


def tag(union: str, name: str) -> str:
    """Union tags are bracketed so they can never be mistaken for data keys in error paths,
    and carry their union's name so the same member name in two unions stays distinct."""
    return f"<{union}.{name}>"


def present_keys(value: object, keys: tuple[str, ...]) -> list[str]:
    return [k for k in keys if isinstance(value, dict) and k in value]


class _Choose:
    """A keyed union's discriminator: the tag of the member `pick(value)` names. A class, not
    a closure, so that a built validator can be pickled (see `language/prebuilt.py`)."""

    def __init__(self, error: str, pick: Callable[[Any], str | None]) -> None:
        self.error, self.pick = error, pick
        self.__name__ = f"choose_{error}"  # pydantic-core names the discriminator by it

    def __call__(self, value: Any) -> str | None:
        picked = self.pick(value)
        return tag(self.error, picked) if picked is not None else None


class _OneKey:
    """Picks the member whose name is the one key of `keys` the mapping has."""

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.keys = keys

    def __call__(self, value: Any) -> str | None:
        found = present_keys(value, self.keys)
        return found[0] if len(found) == 1 else None


def keyed_union(error: str, message: str, members: Mapping[str, Any],
                pick: Callable[[Any], str | None]) -> Any:
    """A union whose member is chosen by `pick(value)` (a module-level function or a
    picklable object), reported as `error` when none fits."""
    for name, member in members.items():
        TAGS[tag(error, name)] = member
    UNION_MESSAGES[error] = (message, tuple(members))
    return _union(error, message, members, pick)


def _union(error: str, message: str, members: Mapping[str, Any],
           pick: Callable[[Any], str | None]) -> Any:
    options = tuple(Annotated[member, Tag(tag(error, name))] for name, member in members.items())
    return Annotated[Union[options], Discriminator(  # noqa: UP007 - built from a tuple
        _Choose(error, pick), custom_error_type=error, custom_error_message=message)]


def one_key_union(error: str, noun: str, members: Mapping[str, Any]) -> Any:
    """A union of mappings told apart by which one of the member names is a key."""
    keys = tuple(members)
    ONE_KEY_UNIONS.add(error)
    listed = ", ".join(f"`{k}`" for k in keys)
    return keyed_union(error, f"{noun} takes exactly one of {listed}", members, _OneKey(keys))


class ByType:
    """Makes the union it annotates a keyed union chosen by the Python type of the value:
    `Annotated[str | Settings, ByType("error", "message", name=str, settings=dict)]` names
    the members in order, each with the type of value that chooses it (the value's own type
    first, so `true` is a flag even beside an integer member); a value of no member's type
    is reported as `error` with `message`. The annotation is the type checker's type too."""

    def __init__(self, error: str, message: str, **kinds: type) -> None:
        self.error, self.message, self.kinds = error, message, kinds
        UNION_MESSAGES[error] = (message, tuple(kinds))
        BY_TYPE_TAGS.update(tag(error, name) for name in kinds)

    def tags(self, source: Any) -> dict[str, Any]:
        """Each tag of the union `source` this annotates -> its member."""
        return {tag(self.error, name): member
                for name, member in zip(self.kinds, get_args(source), strict=True)}

    def _pick(self, value: Any) -> str | None:
        return next((name for name, kind in self.kinds.items() if type(value) is kind),
                    next((name for name, kind in self.kinds.items()
                          if isinstance(value, kind)), None))

    def __get_pydantic_core_schema__(self, source: Any,
                                     handler: GetCoreSchemaHandler) -> CoreSchema:
        members = dict(zip(self.kinds, get_args(source), strict=True))
        return handler.generate_schema(_union(self.error, self.message, members, self._pick))
