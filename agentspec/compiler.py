"""The back end in a few calls: compile a spec to a plan, build objects, emit and write source."""

from __future__ import annotations

import difflib
import os
import posixpath
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from types import SimpleNamespace
from typing import Any

from agentspec import safefs
from agentspec.contract.backends import SandboxDef, from_data, to_data
from agentspec.contract.extras import install
from agentspec.contract.virtual_paths import BackendError
from agentspec.diagnostics import Diagnostic, codes, normalize
from agentspec.emit.source import HEADER, SourceOptions, source
from agentspec.ir.lower import lower
from agentspec.ir.plan import Plan
from agentspec.ir.planning import plan as make_plan
from agentspec.ir.tree import AgentNode, AppNode, LlmFields, agents_called, members_of
from agentspec.project_files import display_name, resolved
from agentspec.source import Span
from agentspec.validate.check import CheckResult, check

__all__ = ["BUNDLED", "Compiled", "agent_tree", "build_objects", "compile_spec", "emit_package",
           "stale_files", "write_package"]

#: the directory of a bundle (`build --bundle`) that holds the copied project files
BUNDLED = "_project"


@dataclass
class Compiled:
    """A spec taken as far as a construction plan."""

    check: CheckResult
    app: AppNode | None = None
    plan: Plan | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.plan is not None and not any(d.is_error for d in self.diagnostics)

    @property
    def spec_dir(self) -> Path:
        return resolved(self.check.path).parent

    @property
    def unset(self) -> list[Diagnostic]:
        """Where the spec reads an `${env.X}` this environment does not set."""
        return [d for d in self.diagnostics if d.code == codes.ENV_UNSET.code]


def compile_spec(path: Path, *, environment: str | None = None,
                 environ: Mapping[str, str] | None = None,
                 unset_allowed: bool = False) -> Compiled:
    """Check `path` for one environment and plan its construction; unset `${env.X}` without
    a default is an error here (the generated code would fail to load), unless
    `unset_allowed` (the generated files hold the reference, never its value)."""
    result = check(path, environment=environment, environ=environ, all_environments=False)
    diagnostics = [d.as_error() if d.code == codes.ENV_UNSET.code and not unset_allowed
                   else d for d in result.diagnostics]
    compiled = Compiled(result, diagnostics=diagnostics)
    if any(d.is_error for d in diagnostics):
        return compiled
    app, problems = lower(result)
    if app is not None:
        problems += _as_shown(result, _sandbox_problems(app))
    compiled.diagnostics = normalize(diagnostics + problems)
    if app is not None:
        compiled.app, compiled.plan = app, make_plan(app)
    return compiled


def _as_shown(result: CheckResult, problems: list[Diagnostic]) -> list[Diagnostic]:
    """Problems placed at an agent node, whose file is relative to the spec's directory (as
    generated code names it), named as validate names the file (its source's name)."""
    spec_dir = resolved(result.path).parent
    names = {resolved(source.path): name for name, source in result.sources.items()}

    def shown(file: str) -> str:
        path = resolved(spec_dir / file)
        return names.get(path, display_name(path))

    return [replace(d, span=replace(d.span, file=shown(d.span.file)))
            if d.span is not None else d for d in problems]


def agent_tree(node: AgentNode) -> list[AgentNode]:
    """Every agent the tree builds: children, agents called as tools, agents `task` starts."""
    found, todo = [], [node]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(agents_called(current))
    return found


def file_backend(compiled: Compiled, agent: str, *, user_id: str | None,
                 state: MutableMapping[str, Any]) -> Any:
    """The backend agent `agent`'s file tools work over, as user `user_id` sees it, a state
    backend's files kept in `state` (`api.open_backend`); LookupError saying why there is
    none."""
    from agentspec.runtime.harness.filesystem import backend_factory
    from agentspec.runtime.harness.scope import register_history

    assert compiled.app is not None
    node = next((n for n in agent_tree(compiled.app.root) if n.name == agent), None)
    if node is None:
        raise LookupError(f"agent `{agent}` is not in the spec's tree")
    filesystem = node.filesystem if isinstance(node, LlmFields) else None
    if filesystem is None:
        raise LookupError(f"agent `{agent}` has no file tools")
    definitions = _located(compiled, filesystem.definitions)
    compaction = compiled.app.compaction
    if compaction is not None and compaction.history is not None and \
            compaction.filesystem is not None:  # private here too, as in the app
        register_history(compaction.history, compaction.filesystem.backend, {
            name: from_data(data) for name, data in
            _located(compiled, compaction.filesystem.definitions).items()})
    context = SimpleNamespace(state=state, user_id=user_id)
    try:
        return backend_factory(filesystem.backend, definitions)(context)  # type: ignore[arg-type]
    except BackendError as error:  # a store kept per user, and no user given
        raise LookupError(str(error)) from None


def _located(compiled: Compiled, backends: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Backend definitions as plain data, their paths relative to the spec's directory (as a
    build has them)."""
    definitions = {}
    for name, definition in backends.items():
        data = to_data(definition)
        for key in ("root", "sqlite"):
            if key in data:
                data[key] = str(compiled.spec_dir / data[key])
        for mount in data.get("mounts", ()):
            mount["source"] = str(compiled.spec_dir / mount["source"])
        definitions[name] = data
    return definitions


def _sandbox_problems(app: AppNode) -> list[Diagnostic]:
    """A sandbox backend needs bubblewrap where the app is built and run."""
    from agentspec.runtime.backends import sandbox

    for node in agent_tree(app.root):
        definitions = dict(node.filesystem.definitions) \
            if isinstance(node, LlmFields) and node.filesystem else {}
        executor = node.code_executor if isinstance(node, LlmFields) else None
        if executor is not None and executor.filesystem is not None:
            definitions.update(executor.filesystem.definitions)
        boxes = [name for name, definition in definitions.items()
                 if isinstance(definition, SandboxDef)]
        if boxes:
            try:
                sandbox.bubblewrap()
            except sandbox.SandboxUnavailable as missing:
                return [codes.SANDBOX_UNAVAILABLE(
                    f"the backend `{boxes[0]}` runs commands in a sandbox: {missing}",
                    Span.at(node.file, node.line, 1), hint=f"run `{sandbox.INSTALL_HINT}`")]
            break
    return []


def _model_problems(app: AppNode) -> list[Diagnostic]:
    from google.adk.models import LLMRegistry

    problems = []
    for node in agent_tree(app.root):
        model = node.model if isinstance(node, LlmFields) else None
        todo = [model] if model is not None else []
        while todo:
            model = todo.pop()
            todo.extend(members_of(model).values())
            if model.provider != "adk" or "${" in model.id:
                continue
            try:
                LLMRegistry.resolve(model.id)
            except ValueError:
                problems.append(codes.MODEL_UNRESOLVABLE(
                    f"ADK's model registry does not know the model `{model.id}`",
                    Span.at(node.file, node.line, 1),
                    hint="use an id such as `gemini-2.5-flash`, or `provider: litellm`"))
    return problems


def _construction_problem(error: Any) -> Diagnostic:
    from agentspec.emit.objects import StdlibObject
    from agentspec.runtime.models import MissingExtra
    from agentspec.runtime.schemas import UnsupportedSchema

    binding, cause = error.binding, error.cause
    span = Span.at(binding.file, binding.line or 1, 1) if binding.file else None
    if isinstance(cause, StdlibObject):
        return codes.PYTHON_OBJECT_STDLIB(
            f"building `{binding.var}`: {cause}", span,
            hint="wrap what you need in a function of your own module")
    if isinstance(cause, UnsupportedSchema):  # validate reports these first (AS406)
        return codes.SCHEMA_UNSUPPORTED(f"building `{binding.var}`: {cause}", span)
    if isinstance(cause, MissingExtra):
        return codes.MISSING_EXTRA(str(cause), span)
    if isinstance(cause, ModuleNotFoundError) and (cause.name or "").split(".")[0] == "mcp":
        return codes.MISSING_EXTRA("MCP tools need the `mcp` package", span,
                                   hint=f"install it: {install('mcp')}")
    return codes.PYTHON_IMPORT_FAILED(
        f"building `{binding.var}` failed: {type(cause).__name__}: {cause}", span)


def build_objects(compiled: Compiled) -> tuple[Any, list[Diagnostic]]:
    """The ADK App of a compiled spec (this imports google.adk and the user's modules)."""
    from agentspec.emit.objects import ConstructionError, objects

    assert compiled.plan is not None and compiled.app is not None
    problems = _as_shown(compiled.check, _model_problems(compiled.app))
    if problems:
        return None, problems
    try:
        app = objects(compiled.plan, spec_dir=compiled.spec_dir)
    except ConstructionError as error:
        return None, _as_shown(compiled.check, [_construction_problem(error)])
    from agentspec.emit.callbacks import callback_problems

    problems = callback_problems(compiled.app, compiled.check.document)
    return (None, problems) if problems else (app, [])


def emit_package(compiled: Compiled, out_dir: Path, *, version: str | None = None,
                 bundle: PurePosixPath | None = None) -> dict[PurePosixPath, str]:
    """The generated files, relative to `out_dir`; `bundle`: where the spec's directory is
    copied inside the package (the bundle's modules and files are there)."""
    assert compiled.plan is not None
    if bundle is not None:
        spec_dir = bundle.as_posix()
    else:
        package_dir = resolved(out_dir) / compiled.plan.app_name
        spec_dir = Path(os.path.relpath(compiled.spec_dir, package_dir)).as_posix()
    module_paths = tuple(posixpath.normpath(f"{spec_dir}/{d}")
                         for d in compiled.plan.module_dirs)
    return source(compiled.plan, SourceOptions(module_paths=module_paths, spec_dir=spec_dir,
                                               version=version))


def _generated(package: int, name: str, shown: str) -> bool:
    """Whether the regular file `name` carries agentspec's header (links, FIFOs and other
    files that are not regular raise UnsafePath)."""
    head = safefs.read_file(package, name, shown=shown, limit=len(HEADER) + 200)
    return head.decode("utf-8", "replace").startswith(HEADER.split("{spec}")[0])


def _package(files: Mapping[PurePosixPath, str]) -> str:
    (package,) = {relative.parts[0] for relative in files}  # one directory, named like the app
    return package


def stale_files(files: Mapping[PurePosixPath, str], out_dir: Path) -> list[str]:
    """A unified diff per generated file that differs from disk (empty when up to date);
    what is not a regular file (a link, a FIFO) counts as stale and is never read."""
    diffs = []
    for relative, text in sorted(files.items()):
        target = out_dir / relative
        try:
            with safefs.directory(out_dir, create=False) as out, safefs.subdirectory(
                    out, relative.parts[0], create=False, shown=str(target.parent)) as package:
                current = safefs.read_file(package, relative.name, shown=str(target)).decode(
                    "utf-8", "replace")
        except OSError:
            current = ""
        if current != text:
            diffs.append("".join(difflib.unified_diff(
                current.splitlines(keepends=True), text.splitlines(keepends=True),
                fromfile=f"{target} (on disk)", tofile=f"{target} (from the spec)")))
    return diffs


def write_package(files: Mapping[PurePosixPath, str], out_dir: Path) -> list[Diagnostic]:
    """Write the package; only files agentspec generated before are ever replaced, and
    nothing is written or removed through a link or opened unless it is a regular file."""
    try:
        return _write(files, out_dir, _package(files))
    except OSError as exc:
        reason = str(exc) if isinstance(exc, safefs.UnsafePath) else \
            f"{exc.strerror or exc}: `{exc.filename or out_dir}`"
        return [codes.OUTPUT_UNUSABLE(f"cannot write the package: {reason}", None,
                                      hint="build into another directory with `-o`")]


def _write(files: Mapping[PurePosixPath, str], out_dir: Path, name: str) -> list[Diagnostic]:
    shown = out_dir / name
    with safefs.directory(out_dir, create=True) as out, \
            safefs.subdirectory(out, name, create=True, shown=str(shown)) as package:
        refused = [codes.OUTPUT_NOT_GENERATED(
            f"`{shown / relative.name}` exists and was not generated by agentspec", None,
            hint="move it, or build into another directory with `-o`")
            for relative in files if safefs.kind(package, relative.name) != "missing"
            and not _generated(package, relative.name, str(shown / relative.name))]
        if safefs.kind(package, BUNDLED) != "missing":
            refused.append(codes.OUTPUT_NOT_GENERATED(
                f"`{shown}` holds a bundle (`build --bundle`)", None,
                hint="rebuild it with `--bundle`, or build into another directory with `-o`"))
        if refused:
            return refused
        produced = {relative.name for relative in files}
        for leftover in safefs.names(package):
            if leftover.endswith(".py") and leftover not in produced and \
                    safefs.kind(package, leftover) == "file" and \
                    _generated(package, leftover, str(shown / leftover)):
                safefs.remove_file(package, leftover)  # generated earlier, no longer produced
        for relative, text in files.items():
            safefs.write_file(package, relative.name, text.encode("utf-8"),
                              shown=str(shown / relative.name), replace=True)
    return []
