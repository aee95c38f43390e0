"""What a bundle holds, read from the construction plan: every path the generated code
names (`SpecPath`), every user module it imports and the project modules those import, the
agentspec extras the plan needs and the third-party distributions the modules import.

Nothing here imports the user's modules: modules are found the way Python would find them
on the module directories, and their imports are read with `ast`.
"""

from __future__ import annotations

import ast
import os
import posixpath
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from importlib.machinery import PathFinder
from pathlib import Path, PurePosixPath

from agentspec.bundle.wheel import DISTRIBUTION as DIST
from agentspec.bundle.wheel import distribution as agentspec_distribution
from agentspec.diagnostics import Diagnostic, codes
from agentspec.ir.plan import Call, DictOf, Env, Import, ListOf, Plan, SpecPath, Value

__all__ = ["Contents", "Entry", "contents"]

#: callees whose paths are state the app writes at run time, not files to ship
_STATE = {"sqlite_url"}
_POSTGRES = re.compile(r"postgres(ql)?(\+\w+)?://")
#: what a requirements line may hold of an installed distribution's name and version
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_VERSION = re.compile(r"[A-Za-z0-9.+!_-]+")


@dataclass(frozen=True)
class Entry:
    """A file or directory to copy: `source` on disk (resolved), `target` inside the
    bundle's project copy (the path the generated code names, relative to the project)."""

    source: Path
    target: PurePosixPath


@dataclass
class Contents:
    entries: list[Entry] = field(default_factory=list)
    extras: set[str] = field(default_factory=set)
    #: third-party distributions the user's modules import: name -> installed version
    pins: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)
    #: backend roots (project-relative): their data is the agents', not the app's; only
    #: what an entry or `--include` names inside them is shipped
    roots: set[str] = field(default_factory=set)
    #: every path added, before entries inside others were folded into them
    named: set[str] = field(default_factory=set)
    #: backend roots that the spec also names otherwise (memory, skills): shipped whole
    named_roots: set[str] = field(default_factory=set)
    #: what `--include` names (project-relative)
    included: set[str] = field(default_factory=set)
    #: summarization `history` directories (backend paths such as `/conversation_history`)
    history: set[str] = field(default_factory=set)


def _walk(value: Value, callee: str = "",
          key: str = "") -> Iterator[tuple[Value, str, str]]:
    """Every value inside `value`, with the name of the call it is an argument of and the
    key or keyword it is the value of."""
    yield value, callee, key
    if isinstance(value, ListOf):
        for item in value.items:
            yield from _walk(item, callee, key)
    elif isinstance(value, DictOf):
        for name, item in value.items:
            yield from _walk(item, callee, str(name))
    elif isinstance(value, Call):
        yield value.callee, callee, key
        for item in value.args:
            yield from _walk(item, value.callee.name)
        for name, item in value.kwargs:
            yield from _walk(item, value.callee.name, name)


def _extra(symbol: Import) -> str | None:
    """The agentspec extra that the plan's import of `symbol` needs."""
    if symbol.module == "mcp" or symbol.module.startswith("google.adk.tools.mcp_tool"):
        return "mcp"
    if symbol == Import("agentspec.runtime.models", "litellm"):
        return "litellm"
    return None


_ENV = re.compile(r"\$\{env\.([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def _postgres(value: Value | None) -> bool:
    """Whether a store URL is PostgreSQL; `${env.X}` as it is where the bundle is built
    (build refuses an unset one), the deployment's value being the same kind of store."""
    text = value if isinstance(value, str) else value.template if isinstance(value, Env) \
        else None
    if text is not None and isinstance(value, Env):
        text = _ENV.sub(lambda m: os.environ.get(m[1], m[2] or ""), text)
    return text is not None and _POSTGRES.search(text) is not None


class _Collector:
    def __init__(self, plan: Plan, spec_dir: Path, root: Path) -> None:
        self.plan, self.spec_dir, self.root = plan, spec_dir, root
        self.found = Contents()
        # sys.path order: the generated `_paths` puts each directory first in turn
        self.module_dirs = [Path(posixpath.normpath((spec_dir / d).as_posix()))
                            for d in reversed(plan.module_dirs)]

    def target(self, path: Path, shown: str) -> PurePosixPath | None:
        """Where `path` (absolute, normalised, not resolved) goes in the project copy."""
        if not path.is_relative_to(self.root):
            self.found.problems.append(codes.BUNDLE_REFUSED(
                f"`{shown}` is outside the project: a bundle holds only the project's files",
                None, hint="move it into the project (outside_project lets the spec read it "
                           "where it is, which a deployed copy cannot)"))
            return None
        return PurePosixPath(path.relative_to(self.root).as_posix())

    def add(self, path: Path, shown: str) -> None:
        target = self.target(path, shown)
        source = Path(os.path.realpath(path))
        if target is None:
            return
        if not source.is_relative_to(self.root):
            self.found.problems.append(codes.BUNDLE_REFUSED(
                f"`{shown}` leads outside the project through a link (to `{source}`)", None,
                hint="copy what it points to into the project"))
            return
        self.found.entries.append(Entry(source, target))
        self.found.named.add(target.as_posix())

    # paths the generated code names ----------------------------------------------------

    def spec_path(self, value: SpecPath, callee: str, key: str) -> None:
        if callee in _STATE:
            return  # created where the app runs (the job store makes its directory)
        if key == "root":
            self.root_dir(value)
            return
        if os.path.isabs(value.relative):
            self.found.notes.append(f"not copied: `{value.relative}` is an absolute path, "
                                    "read where the app runs")
            return
        named = Path(posixpath.normpath((self.spec_dir / value.relative).as_posix()))
        if not os.path.lexists(named):
            self.found.notes.append(f"not copied: `{value.relative}` does not exist (yet)")
            return
        if named.is_relative_to(self.root):
            self.found.named_roots.add(named.relative_to(self.root).as_posix())
        self.add(named, value.relative)

    def root_dir(self, value: SpecPath) -> None:
        """A backend root: made (empty) in the bundle, its contents left to `--include`."""
        if os.path.isabs(value.relative):
            self.found.notes.append(f"not copied: `{value.relative}` is an absolute path, "
                                    "read where the app runs")
            return
        named = Path(posixpath.normpath((self.spec_dir / value.relative).as_posix()))
        target = self.target(named, value.relative)
        if target is not None:
            self.found.roots.add(target.as_posix())
            if os.path.lexists(named):
                self.add(named, value.relative)

    def include(self, path: Path, shown: str) -> None:
        """A path `--include` names: shipped even where a backend root's data or a name
        that may hold secrets would leave it out."""
        named = Path(os.path.normpath(os.path.abspath(path)))
        if not os.path.lexists(named):
            self.found.problems.append(codes.BUNDLE_REFUSED(
                f"`{shown}` given to `--include` does not exist", None,
                hint="name a file or directory of the project"))
            return
        target = self.target(named, shown)
        if target is not None:
            self.found.included.add(target.as_posix())
            self.add(named, shown)

    # modules ---------------------------------------------------------------------------

    def locate(self, top: str) -> list[Path]:
        """The files or package directories of the top-level module `top` when it lies in
        a module directory (an installed module is not the project's: [])."""
        if not self.module_dirs:
            return []
        spec = PathFinder.find_spec(top, [str(d) for d in self.module_dirs])
        if spec is None:
            return []
        if spec.submodule_search_locations:
            return [Path(p) for p in spec.submodule_search_locations]
        return [Path(spec.origin)] if spec.origin else []

    def modules(self, tops: set[str]) -> None:
        """Copy the project's modules among `tops` and, through their imports, the project
        modules they need; what else they import is a distribution to pin."""
        done: set[str] = set()
        outside: set[str] = set()
        todo = sorted(tops)
        while todo:
            top = todo.pop()
            if top in done:
                continue
            done.add(top)
            places = self.locate(top)
            if not places:
                outside.add(top)
                continue
            for place in places:
                named = Path(os.path.normpath(place))
                self.add(named, str(named))
                todo += sorted(_imported(named) - done)
        self.third_party(outside - tops)

    def third_party(self, tops: set[str]) -> None:
        """Pin the installed version of each distribution the modules import, unless
        agentspec already requires it."""
        provided = _required_by(DIST, self.found.extras)
        by_module = metadata.packages_distributions()
        for top in sorted(tops - set(sys.stdlib_module_names) - {"__future__"}):
            dists = by_module.get(top)
            if not dists:
                self.found.notes.append(f"not pinned: the modules import `{top}`, which is "
                                        "not installed here")
                continue
            if any(_canonical(d) in provided for d in dists):
                continue
            for dist in sorted(set(dists)):
                pinned = metadata.version(dist)
                if _NAME.fullmatch(dist) and _VERSION.fullmatch(pinned):
                    self.found.pins[dist] = pinned
                else:
                    self.found.notes.append(f"not pinned: {dist!r} {pinned!r} is no "
                                            "distribution name and version pip reads")

    def collect(self) -> Contents:
        user: set[str] = set()
        for binding in self.plan.bindings:
            for value, callee, key in _walk(binding.value):
                if isinstance(value, SpecPath):
                    self.spec_path(value, callee, key)
                elif key == "history" and callee == "compaction" and isinstance(value, str):
                    self.found.history.add(value)
                elif isinstance(value, Import):
                    extra = _extra(value)
                    if extra is not None:
                        self.found.extras.add(extra)
                    if self.locate(value.module.split(".")[0]):
                        user.add(value.module.split(".")[0])
                elif callee == "job_settings" and _postgres(value):
                    self.found.extras.add("postgres")
                elif callee == "observer" and key == "exporter" and value == "otlp":
                    self.found.extras.add("telemetry")  # its OTLP exporter
        self.modules(user)
        self.found.entries = _outermost(self.found.entries)
        return self.found


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _required_by(dist: str, extras: set[str]) -> set[str]:
    """`dist` and every distribution it requires, with `extras`, recursively (canonical
    names; what is not installed is left out)."""
    from packaging.requirements import Requirement

    seen: set[str] = set()
    todo = [(dist, frozenset(extras))]
    while todo:
        name, wanted = todo.pop()
        canonical = _canonical(name)
        if canonical in seen:
            continue
        seen.add(canonical)
        try:
            requires = (agentspec_distribution() if canonical == DIST
                        else metadata.distribution(name)).requires or []
        except metadata.PackageNotFoundError:
            continue
        for line in requires:
            requirement = Requirement(line)
            marker = requirement.marker
            if marker is None or any(marker.evaluate({"extra": e}) for e in (wanted or {""})):
                todo.append((requirement.name, frozenset(requirement.extras)))
    return seen


def _imported(place: Path) -> set[str]:
    """The top-level modules the Python files at `place` import absolutely."""
    files = [place] if place.suffix == ".py" else sorted(
        p for p in place.rglob("*.py") if "__pycache__" not in p.parts)
    found: set[str] = set()
    for file in files:
        try:
            tree = ast.parse(file.read_bytes(), filename=str(file))
        except (OSError, SyntaxError, ValueError):
            continue  # build imported it already; what cannot be read is not followed
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found


def _outermost(entries: list[Entry]) -> list[Entry]:
    """One entry per place: an entry inside another entry's directory is copied with it."""
    kept: list[Entry] = []
    for entry in sorted(entries, key=lambda e: (len(e.target.parts), e.target.as_posix())):
        if not any(entry.target == k.target or entry.target.is_relative_to(k.target)
                   for k in kept):
            kept.append(entry)
    return sorted(kept, key=lambda e: e.target.as_posix())


def contents(plan: Plan, spec_dir: Path, root: Path, include: tuple[Path, ...] = (),
             spec_files: tuple[Path, ...] = (), sessions: str | None = None) -> Contents:
    """What the bundle of `plan` holds; `spec_dir` and the project `root` are resolved;
    `include` are the paths `--include` names; `spec_files` the spec and the files it
    imports (with its environments), shipped so that `agentspec worker` and `agentspec jobs`
    run from the bundle."""
    collector = _Collector(plan, spec_dir, root)
    if sessions is not None and _postgres(Env(sessions)):  # the worker's conversation store
        collector.found.extras.add("postgres")
    for path in spec_files:
        collector.add(Path(os.path.normpath(path)), str(path))
    for path in include:
        collector.include(path, str(path))
    return collector.collect()
