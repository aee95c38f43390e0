"""The skeleton of checking a data file beside a spec (a scenario file, an eval file): read it
with positions, validate it with its pydantic models (errors mapped to file:line:col), then
run its semantic pass. Imports no ADK, so `validate` can run it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from agentspec.diagnostics import Code, Diagnostic, codes
from agentspec.parse import Path as DataPath
from agentspec.parse import PosNode, load, load_text
from agentspec.project_files import Project, display_name, resolved
from agentspec.resolve import Document
from agentspec.source import SourceFile
from agentspec.validate.structural import Mapper

if TYPE_CHECKING:
    from agentspec.language.prebuilt import Validator

__all__ = ["Checked", "check_data_file", "listed", "missing_state"]

#: the reader's codes for a file that holds no mapping: their own hints are for spec files
_NOT_A_MAPPING = {codes.EMPTY_FILE.code, codes.NOT_A_MAPPING.code}


@dataclass
class Checked:
    """A checked data file: its data (None when it could not be read), its source, its
    problems."""

    path: Path
    data: Any = None
    sources: dict[str, SourceFile] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    readable: bool = True  # False when the file itself could not be read

    @property
    def ok(self) -> bool:
        return self.data is not None and not any(d.is_error for d in self.diagnostics)


def check_data_file(path: Path, adapter: Validator, mapper: Callable[[Document], Mapper],
                    semantic: Callable[[Any, PosNode], Iterable[Diagnostic]], *, what: str,
                    shape: str, project: Project | None, text: str | None = None) -> Checked:
    """Check the data file at `path` (`what` it is, e.g. "scenario file"): refused unread
    when it is outside `project`; read from `text` in place of the disk when given (an
    editor's unsaved buffer); validated by `adapter`, its errors mapped by `mapper` of the
    document; then `semantic(data, positions)`. `shape` is the hint of a file that holds no
    mapping (the reader's own hint is for spec files)."""
    if project is not None and project.judge(path) == "outside":
        return Checked(path, diagnostics=[codes.PATH_OUTSIDE_PROJECT(
            f"the {what} `{display_name(path)}` is outside the project `{project.root}` "
            "(its content is not read)", None,
            hint=f"keep {what}s in the project; a symbolic link out of it is not followed")])
    parsed = load(resolved(path), display=str(path)) if text is None \
        else load_text(text, path=resolved(path), display=str(path))  # what was judged
    checked = Checked(path, sources={parsed.source.name: parsed.source},
                      diagnostics=list(parsed.diagnostics), readable=parsed.readable)
    if not parsed.ok or parsed.positions is None:
        checked.diagnostics = [dataclasses.replace(d, hint=shape) if d.code in _NOT_A_MAPPING
                               else d for d in checked.diagnostics]
        return checked
    try:
        adapter.validate_python(parsed.value)
    except ValidationError as exc:
        map_error = mapper(Document(parsed.value, parsed.positions))
        checked.diagnostics += [map_error.diagnostic(e) for e in exc.errors(include_url=False)]
    checked.diagnostics += semantic(parsed.value, parsed.positions)
    checked.data = parsed.value
    return checked


def missing_state(entry: Mapping[str, Any], at: DataPath, pos: PosNode,
                  required: Mapping[str, str | None], code: Code,
                  noun: str) -> Iterator[Diagnostic]:
    """`code` for each `required` state key that the `state:` of `entry` (a scenario, a
    case: its `noun`) at `at` does not give."""
    state = entry.get("state")
    for key, description in required.items():
        if not isinstance(state, Mapping) or key not in state:
            about = f" ({description})" if description else ""
            yield code(f"the {noun} does not give `{key}`{about}, which the spec's `state:` "
                       "says the session's creator supplies",
                       pos.key_span((*at, "state")) if "state" in entry else pos.value_span(at),
                       hint=f"add `{key}: VALUE` to the {noun}'s `state:`")


def listed(names: Iterable[str]) -> str:
    """The first 20 of `names`, sorted, for a hint."""
    shown = sorted(names)
    return ", ".join(f"`{n}`" for n in shown[:20]) + (" and more" if len(shown) > 20 else "") \
        or "none"
