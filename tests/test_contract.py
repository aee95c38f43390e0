"""The compiler-to-runtime contract (issue 22 items 2 and 3): one home per default (the spec
models), shared names spelled once (`contract/`), untyped values only where they are user
data, and the backend definitions' plain form round-tripping through their types."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

import pytest

from agentspec.contract import backends, compaction, harness_names
from agentspec.contract.frozen import FrozenMap
from agentspec.ir import tree
from agentspec.language.agents import InterruptConfig
from agentspec.language.backends import SandboxBackend as SandboxSpec
from agentspec.runtime import jobs, planner
from agentspec.runtime.backends import filesystem as directory
from agentspec.runtime.backends import sandbox, shell
from agentspec.runtime.harness import approvals, files, filesystem, todos
from agentspec.runtime.jobs import delegation

# one home per default ---------------------------------------------------------------------

#: dataclasses that carry settings the spec owns: none of their fields has a default
SPEC_OWNED_DATACLASSES: tuple[type, ...] = (
    backends.FilesystemDef, backends.ShellDef, backends.SandboxDef, backends.CompositeDef,
    backends.Mount, compaction.ByTokens, compaction.ByInvocations, tree.Approval,
    tree.JobsNode, sandbox.Limits)

#: fields of other dataclasses that hold a spec-owned setting
SPEC_OWNED_FIELDS: tuple[tuple[type, str], ...] = (
    (tree.LlmFields, "tool_errors"), (tree.PlannerNode, "tool_errors"),
    (tree.OpenApiToolNode, "private_network"),
    (delegation.JobSettings, "max_attempts"), (delegation.JobSettings, "lease_seconds"),
    (delegation.JobSettings, "on_done"), (jobs.JobRequest, "max_attempts"),
    (jobs.JobRequest, "on_done"))

#: runtime factories a generated package calls, and their parameters the spec owns
SPEC_OWNED_PARAMETERS: tuple[tuple[Callable[..., Any], tuple[str, ...]], ...] = (
    (delegation.job_settings, ("store", "max_attempts", "lease_seconds")),
    (planner.planner, ("max_depth", "max_subtasks")),
    (filesystem.file_toolset, ("backend", "definitions", "tools")),
    (filesystem.FileToolset.__init__, ("backend", "definitions", "tools")),
    (filesystem.backend_factory, ("name", "definitions")),
    (approvals.gated, ("approval",)),
    (shell.ShellBackend.__init__, ("timeout", "max_output_bytes")),
    (sandbox.SandboxBackend.__init__, ("timeout", "max_output_bytes", "limits")),
    (sandbox.sandbox_limits, ("definition",)),
)

#: spec-owned parameters that keep a default, and why (each is a debt, not a home)
KEPT_DEFAULTS: dict[tuple[Callable[..., Any], str], str] = {
    (planner.planner, "tool_errors"): "packages of runtime ABI 1 and 2 leave it out for the "
    "spec's default `return`; required once OLDEST moves past 2",
    (delegation.job_settings, "on_done"): "packages of runtime ABI 1 predate `on_done` "
    "(their jobs wait, as every job did then); required once OLDEST moves past 1",
    **{(factory, name): "off (or none) is the backend classes' closed state; a spec's value "
       "always comes through backend_factory, from a definition that has no defaults"
       for factory, names in (
           (directory.FilesystemBackend.__init__, ("hard_links",)),
           (shell.ShellBackend.__init__, ("hard_links", "env")),
           (sandbox.SandboxBackend.__init__, ("hard_links", "env", "network", "mounts",
                                              "allow_sockets")))
       for name in names},
}


def _defaulted(item: dataclasses.Field[Any]) -> bool:
    return item.default is not dataclasses.MISSING or \
        item.default_factory is not dataclasses.MISSING


def test_no_runtime_dataclass_carries_a_default_for_a_spec_owned_setting() -> None:
    found = [f"{cls.__name__}.{item.name}" for cls in SPEC_OWNED_DATACLASSES
             for item in dataclasses.fields(cls) if _defaulted(item)]
    found += [f"{cls.__name__}.{name}" for cls, name in SPEC_OWNED_FIELDS
              if _defaulted(next(f for f in dataclasses.fields(cls) if f.name == name))]
    assert not found, f"defaults outside the spec models: {found}"


def test_no_runtime_factory_carries_a_default_for_a_spec_owned_setting() -> None:
    found = []
    for factory, names in SPEC_OWNED_PARAMETERS:
        parameters = inspect.signature(factory).parameters
        found += [f"{factory.__qualname__}({name})" for name in names
                  if parameters[name].default is not inspect.Parameter.empty]
    assert not found, f"defaults outside the spec models: {found}"
    for (factory, name), why in KEPT_DEFAULTS.items():
        assert inspect.signature(factory).parameters[name].default is not \
            inspect.Parameter.empty, f"{factory.__qualname__}({name}) lost its default: " \
            "move it to SPEC_OWNED_PARAMETERS"
        assert len(why) > 20


def test_a_package_of_abi_1_gets_its_job_settings() -> None:
    """ABI 1 packages call job_settings without `on_done` (it was added after them)."""
    settings = delegation.job_settings(store="memory://", max_attempts=2, lease_seconds=30)
    assert settings.on_done == "wait" and settings.max_attempts == 2


def test_the_table_test_fails_on_a_default(monkeypatch: pytest.MonkeyPatch) -> None:
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Loose(backends.ShellDef):
        grace: float = 5.0
    monkeypatch.setattr(__import__(__name__, fromlist=["_"]), "SPEC_OWNED_DATACLASSES",
                        (*SPEC_OWNED_DATACLASSES, Loose))
    with pytest.raises(AssertionError, match="Loose.grace"):
        test_no_runtime_dataclass_carries_a_default_for_a_spec_owned_setting()


# shared names ------------------------------------------------------------------------------


def test_the_file_tools_made_are_the_ones_validate_accepts() -> None:
    assert tuple(files._TEMPLATES) == harness_names.FILE_TOOLS
    assert tuple(files._IMPLS) == harness_names.FILE_TOOLS
    assert files.FILE_TOOL_NAMES is harness_names.FILE_TOOLS
    assert harness_names.FILE_TOOLS[-1] == "execute"  # offered only where commands run


def test_the_todo_tools_made_are_the_contracts() -> None:
    assert all(getattr(todos, name).__name__ == name for name in harness_names.TODO_TOOLS)
    assert set(harness_names.TODO_TOOLS) <= set(todos.__all__)


def test_decisions_are_spelled_once() -> None:
    assert tuple(InterruptConfig().decisions) == harness_names.DECISIONS
    assert approvals.DECISIONS is harness_names.DECISIONS


# untyped values ------------------------------------------------------------------------------

#: IR fields that hold user data by nature (YAML of the spec), marked `UserData`
USER_DATA = {"PyObject.args", "LiteLlmEndpoint.args", "Schema.json", "LlmFields.generate",
             "LlmFields.thinking", "PlannerRoles.settings", "AppNode.state"}


def test_only_user_data_is_untyped_in_the_tree() -> None:
    marked, untyped = set(), set()
    for name, cls in vars(tree).items():
        if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)) or \
                cls.__module__ != tree.__name__:
            continue
        for field, annotation in vars(cls).get("__annotations__", {}).items():
            text = str(annotation)
            if "UserData" in text:
                marked.add(f"{name}.{field}")
            if "Any" in text.replace("UserData", ""):
                untyped.add(f"{name}.{field}")
    assert marked == USER_DATA
    assert not untyped, f"untyped IR fields that are not user data: {untyped}"


#: the one tuple of tuples left: (role, generate, thinking) triples, not pairs
TRIPLES = {"PlannerRoles.settings"}


def test_no_mapping_in_the_tree_is_a_tuple_of_pairs() -> None:
    nested = {f"{name}.{field}" for name, cls in vars(tree).items()
              if isinstance(cls, type) and dataclasses.is_dataclass(cls)
              for field, annotation in vars(cls).get("__annotations__", {}).items()
              if "tuple[tuple[" in str(annotation)}
    assert nested == TRIPLES, "a mapping is a FrozenMap, not a tuple of pairs"


# backends ------------------------------------------------------------------------------------


def test_a_definition_round_trips_through_its_plain_form() -> None:
    dump = SandboxSpec.model_validate(
        {"type": "sandbox", "root": "./ws", "mounts": [{"source": "./d", "target": "/d"}],
         "env": {"A": "1"}}).model_dump(exclude_none=True)
    typed = backends.from_data(dump)
    assert isinstance(typed, backends.SandboxDef) and typed.mounts == (
        backends.Mount("./d", "/d"),)
    assert backends.to_data(typed) == dump and list(backends.to_data(typed)) == list(dump)
    assert hash(typed) == hash(backends.from_data(dump))
    with pytest.raises(ValueError, match="unknown backend type"):
        backends.from_data({"type": "tape"})
    with pytest.raises(ValueError, match="does not know: deny"):  # never dropped quietly
        backends.from_data({**dump, "deny": ["/**"]})


def test_a_package_of_abi_1_gets_the_spec_defaults_of_settings_it_predates() -> None:
    """A sandbox of an ABI 1 package lacks the limits added after it: they take the spec
    model's defaults (the compatibility table may not drift from them); any other missing
    setting is refused by name."""
    for name, value in backends.ABSENT_IN_ABI_1.items():
        assert SandboxSpec.model_fields[name].default == value, name
    old = backends.from_data({"type": "sandbox", "root": "ws", "timeout": 60,
                              "max_output_bytes": 1000})
    assert isinstance(old, backends.SandboxDef) and old.max_workspace_mb == 10240
    with pytest.raises(ValueError, match="lacks `timeout`"):
        backends.from_data({"type": "shell", "root": "ws", "max_output_bytes": 1000})


def test_the_walker_follows_routes_defaults_and_stops_at_cycles() -> None:
    defs: dict[str, backends.BackendDef] = {
        "top": backends.CompositeDef(default="mid", routes=FrozenMap({"/a/": "disk"}),
                                     conversation_files=None, read=None, write=None),
        "mid": backends.CompositeDef(default="box", routes=FrozenMap({"/b/c/": "disk"}),
                                     conversation_files=None, read=None, write=None),
        "loop": backends.CompositeDef(default="loop", routes=FrozenMap(),
                                      conversation_files=None, read=None, write=None),
        "disk": backends.FilesystemDef(root="d", hard_links=None, conversation_files=None,
                                       read=None, write=None),
        "box": backends.StateDef(read=None, write=None)}
    assert backends.routed("top", "/a/x/../y", defs) == ("disk", "/y")
    assert backends.routed("top", "/b/c/z", defs) == ("disk", "/z")
    assert backends.routed("top", "/q", defs) == ("box", "/q")
    assert backends.routed("loop", "/q", defs) == ("loop", "/q")
    assert backends.executor("top", defs) == "box"
    assert backends.reached("top", defs) == ["top", "disk", "mid", "box"]
    assert backends.keeps_history("filesystem") and not backends.keeps_history("sandbox")
