"""agentspec's public Python API: what the commands do, as functions that return values.

Stability: the names in `agentspec.__all__` follow semantic versioning from 1.0; before it, a
minor release may change them and says so in its notes. Everything else in the package is
internal. Problems in a spec come back as `Diagnostic` values (file, line, column, code,
hint), never as tracebacks; the functions that cannot go on without a valid spec raise
`SpecError`, which carries them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, MutableMapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from agentspec.diagnostics import Diagnostic, render

if TYPE_CHECKING:
    from google.adk.apps import App

    from agentspec.review.changes import Change
    from agentspec.runtime.backends.transfer import Transferable
    from agentspec.source import SourceFile
    from agentspec.testing.runner import ScenarioResult, ScenarioRun
    from agentspec.validate.check import CheckResult

__all__ = ["GraphFormat", "PathLike", "SpecError", "build", "build_package", "check",
           "check_text", "diff", "graph", "open_backend", "run_scenarios"]

#: a path as the API takes it
PathLike = str | os.PathLike[str]
GraphFormat = Literal["mermaid", "dot"]


class SpecError(Exception):
    """A spec that cannot be built, compared or drawn: `diagnostics` says why, each with its
    position; `str()` renders them as `agentspec validate` does."""

    def __init__(self, message: str, diagnostics: Sequence[Diagnostic],
                 sources: dict[str, SourceFile] | None = None) -> None:
        self.diagnostics = list(diagnostics)
        self.sources = dict(sources or {})
        shown = render(self.diagnostics, self.sources).rstrip("\n") if self.diagnostics \
            else ""
        super().__init__(f"{message}\n{shown}" if shown else message)


def check(path: PathLike, *, environment: str | None = None) -> CheckResult:
    """Validate the spec at `path` (and, without `environment`, each of its overlays), as
    `agentspec validate` does; never imports the spec's Python code. The result's
    `diagnostics` hold every problem; `ok` is False when one is an error."""
    from agentspec.validate.check import check as validate

    return validate(Path(path), environment=environment)


def check_text(text: str, path: PathLike = "agentspec.yaml", *,
               environment: str | None = None) -> CheckResult:
    """Validate spec `text` as if it were the file `path` (which need not exist): imports,
    instruction files and modules are looked up beside `path`, and diagnostics name it."""
    from agentspec.validate.check import check as validate

    if not isinstance(text, str):  # bytes failed deep in the reader
        raise TypeError(f"text must be str (decode the file's bytes first), not "
                        f"{type(text).__name__}")
    where = Path(path)
    return validate(where, environment=environment, texts={where: text})


def build(path: PathLike, *, environment: str | None = None) -> App:
    """The ADK `App` the spec describes, ready for a `Runner` (this imports google.adk and the
    spec's Python modules); `SpecError` when the spec has errors or cannot be built."""
    from agentspec.compiler import build_objects, compile_spec

    compiled = compile_spec(Path(path), environment=environment)
    if not compiled.ok:
        raise SpecError(f"{path}: the spec has errors", _errors(compiled.diagnostics),
                        compiled.check.sources)
    app, problems = build_objects(compiled)
    if app is None:
        raise SpecError(f"{path}: the agents cannot be built", problems,
                        compiled.check.sources)
    built: App = app
    return built


def build_package(path: PathLike, out: PathLike | None = None, *,
                  environment: str | None = None) -> list[Path]:
    """Write the generated package (`<out>/<app name>/agent.py` with `app` and `root_agent`,
    default `out`: the spec's directory) as `agentspec build` does, and return the files
    written. Files agentspec did not generate are never replaced (`SpecError`). The agents are
    built first, so a module that fails to import fails here."""
    from agentspec.compiler import build_objects, compile_spec, emit_package, write_package

    compiled = compile_spec(Path(path), environment=environment)
    if not compiled.ok or compiled.plan is None:
        raise SpecError(f"{path}: the spec has errors", _errors(compiled.diagnostics),
                        compiled.check.sources)
    _, problems = build_objects(compiled)
    if problems:
        raise SpecError(f"{path}: the agents cannot be built", problems,
                        compiled.check.sources)
    target = Path(out) if out is not None else compiled.spec_dir
    files = emit_package(compiled, target)
    refused = write_package(files, target)
    if refused:
        raise SpecError(f"{path}: the package cannot be written", refused)
    return [target / relative for relative in sorted(files)]


def diff(old: PathLike, new: PathLike, *, environment: str | None = None) -> list[Change]:
    """What changes from the spec `old` to the spec `new` (two files on disk), as `agentspec
    diff` reports it: each `Change` has its code, risk, place and description. A missing
    file is a spec added or removed (both missing: `SpecError`, as nothing can be
    compared); a spec with errors, or a file that cannot be read, raises `SpecError`."""
    from agentspec.diagnostics import codes
    from agentspec.review.diff import absent_side, compare, load_side

    sides, missing = [], []
    for given in (old, new):
        where = Path(given)
        side = load_side(where, str(given), environment=environment)
        if side.app is None and [d.code for d in side.problems] == [codes.FILE_NOT_FOUND.code]:
            missing += side.problems
            sides.append(absent_side(where, str(given)))
            continue
        if side.app is None:
            raise SpecError(f"{given}: cannot be compared; it has errors", side.problems,
                            side.result.sources)
        sides.append(side)
    if len(missing) == 2:  # two mistyped paths are no "nothing changed"
        raise SpecError(f"neither {old} nor {new} exists", missing)
    return compare(sides[0], sides[1])


def graph(path: PathLike, format: GraphFormat = "mermaid", *,  # noqa: A002 - the CLI's word
          environment: str | None = None) -> str:
    """The spec's agent tree as Mermaid or Graphviz DOT text, as `agentspec graph` draws it."""
    from agentspec.compiler import compile_spec
    from agentspec.review.graph import graph as draw
    from agentspec.review.graph import to_dot, to_mermaid

    if format not in ("mermaid", "dot"):
        raise ValueError(f"format must be 'mermaid' or 'dot', not {format!r}")
    compiled = compile_spec(Path(path), environment=environment)
    if not compiled.ok or compiled.app is None:
        raise SpecError(f"{path}: the spec has errors", _errors(compiled.diagnostics),
                        compiled.check.sources)
    drawn = draw(compiled.app)
    return to_dot(drawn) if format == "dot" else to_mermaid(drawn)


def run_scenarios(path: PathLike, scenario_files: PathLike | Sequence[PathLike] = (), *,
                  environment: str | None = None,
                  on_result: Callable[[ScenarioResult], None] | None = None) -> ScenarioRun:
    """Run the spec's scenarios offline with scripted models, as `agentspec test` does: those
    of `scenario_files` (one file, or several), by default `scenarios/<spec stem>.yaml`
    beside it. The result lists each scenario with its failures; a spec or scenario file
    with errors raises `SpecError` before any scenario runs."""
    from agentspec.testing.runner import ScenarioFileError
    from agentspec.testing.runner import run_scenarios as run
    from agentspec.validate.check import check as validate

    # only the environment the scenarios run in: a broken `prod` overlay is validate's to say
    checked = validate(Path(path), environment=environment, all_environments=False)
    if not checked.ok:  # a missing or broken spec is not a failure of each scenario
        raise SpecError(f"{path}: the spec has errors", _errors(checked.diagnostics),
                        checked.sources)
    try:
        files = [scenario_files] if isinstance(scenario_files, (str, os.PathLike)) \
            else list(scenario_files)  # a str is a sequence too: of one-letter file names
        return run(Path(path), [Path(f) for f in files], environment=environment,
                   on_result=on_result)
    except ScenarioFileError as exc:
        if not exc.diagnostics:
            raise SpecError(f"no scenario files given and no {exc.path} beside the spec",
                            []) from None
        raise SpecError(str(exc), exc.diagnostics, exc.sources) from None


def open_backend(path: PathLike, agent: str, *, user_id: str | None = None,
                 state: MutableMapping[str, Any] | None = None,
                 environment: str | None = None) -> Transferable:
    """The backend agent `agent`'s file tools work over, as they see it for user `user_id`:
    its routes, permissions (`read` / `write`) and per-user folders applied. Its
    `upload_files([(path, bytes), ...])` and `download_files([path, ...])` move files in and
    out in batches, one result per file (`Uploaded` / `Downloaded`, with the error of a file
    that failed). A `state` backend keeps its files in `state`: pass the state a session is
    created with (`create_session(state=...)`) to hand it files before its first turn.
    `SpecError` when the spec has errors or the agent has no file tools."""
    from agentspec.compiler import compile_spec, file_backend

    compiled = compile_spec(Path(path), environment=environment)
    if not compiled.ok or compiled.app is None:
        raise SpecError(f"{path}: the spec has errors", _errors(compiled.diagnostics),
                        compiled.check.sources)
    try:
        backend = file_backend(compiled, agent, user_id=user_id,
                               state={} if state is None else state)
    except LookupError as error:
        raise SpecError(f"{path}: {error.args[0]}", []) from None
    return cast("Transferable", backend)


def _errors(diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.is_error]
