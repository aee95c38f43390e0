"""The kinds table: every agent kind of the language and every agent node of the tree has
exactly one kind module, which provides every entry a kind needs; the table refuses a kind
that contradicts another; the stages dispatch through it alone."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import subprocess
import sys
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentspec import kinds as kinds_package
from agentspec.cli import cli
from agentspec.diagnostics import codes
from agentspec.ir import tree
from agentspec.kindapi import Kind, kind_for, kind_for_spec, kind_named, kinds, table
from agentspec.kinds import KINDS, llm, planner
from agentspec.language import agents
from agentspec.review.rules import AGENT_RULES
from agentspec.review.ruletypes import Rule


def test_the_table_is_the_kinds_package() -> None:
    assert kinds() == KINDS


def test_every_module_of_the_kinds_package_is_a_registered_kind() -> None:
    modules = [importlib.import_module(f"{kinds_package.__name__}.{module.name}")
               for module in pkgutil.iter_modules(kinds_package.__path__)]
    assert [module.KIND for module in modules if module.KIND in KINDS] == [
        module.KIND for module in modules]
    assert len(modules) == len(KINDS)


def test_every_spec_kind_has_one_module() -> None:
    names = [name for kind in KINDS for name in kind.names]
    assert names == list(agents.AGENT_KINDS)  # the language's order
    models = [model for kind in KINDS for model in kind.spec]
    assert models == list(agents.KIND_MODELS.values())
    assert [kind_named(name).spec[kind_named(name).names.index(name)]
            for name in agents.AGENT_KINDS] == list(agents.KIND_MODELS.values())


def _leaves(cls: type) -> set[type]:
    below = cls.__subclasses__()
    return {leaf for sub in below for leaf in _leaves(sub)} if below else {cls}


def test_every_node_class_has_one_module() -> None:
    assert {kind.node for kind in KINDS} == _leaves(tree.AgentFields)
    assert len(KINDS) == len({kind.node for kind in KINDS})


def test_dispatch_by_node_and_by_spec_model() -> None:
    node = tree.RouterNode(name="r", file="s.yaml", line=1, route=tree.RouteNode(state="x"))
    assert kind_for(node).names == ("router",)
    assert kind_for(node).label(node)[:2] == ["r", "router"]
    assert tree.kind_of(node) == "router" and tree.tools_of(node) == ()
    loop = agents.LoopAgent(kind="loop", sub_agents=["a"], max_iterations=2)
    assert kind_for_spec(loop).names == ("sequential", "parallel", "loop")
    workflow = tree.WorkflowNode(name="w", file="s.yaml", line=1, kind="parallel")
    assert tree.kind_of(workflow) == "parallel" and kind_for(workflow).edge(workflow) == "branch"


def test_each_kinds_diff_rules_run_with_the_others() -> None:
    for kind in KINDS:
        assert all(rule in AGENT_RULES for rule in kind.rules)


def test_a_kind_owns_its_codes() -> None:
    owned = [code for kind in KINDS for code in kind.codes]
    assert len(owned) == len(set(owned))
    assert codes.ROUTE_CHANGED in kind_named("router").codes
    assert codes.PLANNER_BOUNDS in kind_named("planner").codes
    assert codes.LOOP_UNBOUNDED in kind_named("loop").codes


_REQUIRED = ("names", "spec", "node", "name_of", "check", "lower", "plan", "models", "tools",
             "as_llm", "label", "edge", "example", "answers", "references", "python_refs",
             "instructions", "plan_state", "tools_at", "model_agents", "runs_agents", "marks")


def test_every_entry_but_rules_and_codes_is_required() -> None:
    """A kind that forgets an entry fails where it is written, not in `build`: a kind
    without what an entry gives says so (`Kind.nothing`, `Kind.none`)."""
    required = {f.name for f in dataclasses.fields(Kind)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    assert required == set(_REQUIRED)
    assert {f.name for f in dataclasses.fields(Kind)} - required == {"rules", "codes"}


@pytest.mark.parametrize("forgotten", _REQUIRED)
def test_a_kind_that_forgets_an_entry_fails_where_it_is_written(forgotten: str) -> None:
    entries = {name: getattr(planner.KIND, name) for name in _REQUIRED if name != forgotten}
    with pytest.raises(TypeError, match=forgotten):
        Kind(**entries)


@pytest.fixture()
def scratch_table(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Kind[typing.Any, typing.Any]]]:
    """The table as it is, in a copy the test may register into."""
    copy = list(kinds())
    monkeypatch.setattr(table, "_TABLE", copy)
    yield copy


def test_the_table_refuses_a_kind_that_claims_anothers_parts(
        scratch_table: list[Kind[typing.Any, typing.Any]]) -> None:
    router = kind_named("router")
    with pytest.raises(table.KindTableError, match="both claim.*router"):
        table.register(dataclasses.replace(llm.KIND, names=("scratch", "router"), spec=(),
                                           node=object))
    with pytest.raises(table.KindTableError, match="both claim.*AS526"):
        table.register(dataclasses.replace(router, names=("scratch",), spec=(), node=object,
                                           codes=(codes.ROUTE_CHANGED,), rules=()))
    with pytest.raises(table.KindTableError, match="another kind's codes.*AS526"):
        table.register(dataclasses.replace(router, names=("scratch",), spec=(), node=object,
                                           codes=()))
    assert len(scratch_table) == len(KINDS)


def test_the_table_refuses_codes_out_of_order_or_unregistered(
        scratch_table: list[Kind[typing.Any, typing.Any]]) -> None:
    echo = dataclasses.replace(llm.KIND, names=("scratch",), spec=(), node=object, rules=())
    with pytest.raises(table.KindTableError, match="unique and ascending"):
        table.register(dataclasses.replace(echo, codes=(codes.AGENT_REMOVED,
                                                        codes.AGENT_ADDED)))
    stranger = codes.Code("AS999", "stranger", codes.Severity.ERROR, "s", "e")
    with pytest.raises(table.KindTableError, match="registry lacks.*AS999"):
        table.register(dataclasses.replace(echo, codes=(stranger,)))
    table.register(dataclasses.replace(echo, codes=(codes.AGENT_ADDED,)))
    assert kind_named("scratch").codes == (codes.AGENT_ADDED,)


def test_an_unknown_node_names_its_class(
        scratch_table: list[Kind[typing.Any, typing.Any]]) -> None:
    with pytest.raises(table.KindTableError, match="no kind is registered for str"):
        kind_for_spec("llm")


def test_the_kinds_table_of_the_docs_has_a_row_per_kind() -> None:
    page = (Path(__file__).resolve().parent.parent / "docs" / "language" / "agents.md")
    head = page.read_text(encoding="utf-8").split("| kind | built as | what it does |", 1)[1]
    rows = [line for line in head.split("\n\n", 1)[0].splitlines() if line.startswith("| `")]
    documented = [row.split("`")[1] for row in rows]
    assert documented == [name for kind in kinds() for name in kind.names]


def test_the_builtin_kinds_load_once_for_every_thread() -> None:
    """Threads that ask first at once all see the whole table, never a part of it."""
    script = (
        "import threading\n"
        "from agentspec.kindapi import kinds\n"
        "seen = []\n"
        "start = threading.Barrier(8)\n"
        "def ask():\n"
        "    start.wait()\n"
        "    seen.append(len(kinds()))\n"
        "threads = [threading.Thread(target=ask) for _ in range(8)]\n"
        "[t.start() for t in threads]\n"
        "[t.join() for t in threads]\n"
        "print(sorted(seen))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == str([len(KINDS)] * 8)


@pytest.fixture()
def scratch_registry() -> Iterator[None]:
    """The code registry as it is, restored after the test."""
    before = dict(codes.REGISTRY)
    yield
    codes.REGISTRY.clear()
    codes.REGISTRY.update(before)


def test_a_kind_defines_its_own_codes(
        scratch_table: list[Kind[typing.Any, typing.Any]], scratch_registry: None) -> None:
    """A kind's diff code lives in its module; explain and the table find it in its place."""
    changed = codes.define("AS599", "scratch-changed", "A scratch agent changed", """
        The scratch kind of the kinds tests changed.""", risk="low",
        category=codes.Category.COSMETIC)
    assert list(codes.REGISTRY) == sorted(codes.REGISTRY)
    rule = Rule(changed, (), lambda pair: ())
    table.register(dataclasses.replace(llm.KIND, names=("scratch",), spec=(), node=object,
                                       rules=(rule,), codes=(changed,)))
    assert kind_named("scratch").codes == (changed,)
    shown = CliRunner().invoke(cli, ["explain", "scratch-changed"])
    assert shown.exit_code == 0 and "AS599 scratch-changed" in shown.output
    with pytest.raises(AssertionError, match="AS599"):  # a number is never taken twice
        codes.define("AS599", "scratch-again", "s", "e")
