"""The diff rules: every IR field is read by a rule or deliberately ignored, every rule has
a registered code with a risk class, and the held-out edits of issue 13 are each reported
with the right risk."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentspec.cli import cli
from agentspec.contract.backends import SandboxDef
from agentspec.contract.frozen import FrozenMap
from agentspec.diagnostics import REGISTRY
from agentspec.ir import tree
from agentspec.kindapi import kinds
from agentspec.review.diff import absent_side, compare, load_side
from agentspec.review.rules import AGENT_RULES, APP_RULES, IGNORED, RULES, TREE_RULES


def _dataclasses_in(hint: object) -> list[type]:
    """The IR dataclasses a field's type names (through tuples, unions, optionals)."""
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return [hint]
    found: list[type] = []
    for arg in typing.get_args(hint):
        found += _dataclasses_in(arg)
    return found


def _declared_by(node: type, name: str) -> str:
    """The class that declares field `name` of `node` (a base class, for shared fields)."""
    owner = next(c for c in node.__mro__ if name in vars(c).get("__annotations__", {}))
    return owner.__name__


def ir_fields(root: type | None = None) -> set[str]:
    """`Class.field` of every field of every IR node reachable from the app (through the
    tool union, and every agent kind's node in the kinds table), named by the class that
    declares it."""
    fields: set[str] = set()
    todo: list[type] = [root] if root else [tree.AppNode, *(kind.node for kind in kinds())]
    seen: set[type] = set()
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        # each class's own module resolves its names (the contract's backend types); the
        # tree's names resolve a test's own classes put there
        hints = typing.get_type_hints(node, None, vars(tree))
        for item in dataclasses.fields(node):
            fields.add(f"{_declared_by(node, item.name)}.{item.name}")
            todo += _dataclasses_in(hints[item.name])
    return fields


def covered(fields: set[str]) -> set[str]:
    """The fields the rules read; `Class.*` stands for every field of Class."""
    named = {f for rule in RULES for f in rule.fields}
    every = {f.split(".")[0] for f in named if f.endswith(".*")}
    return {f for f in fields if f in named or f.split(".")[0] in every}


def test_every_ir_field_is_read_by_a_rule_or_ignored_with_a_reason() -> None:
    fields = ir_fields()
    # the walk reaches every agent and tool kind, and the nodes inside them
    assert {"LlmFields.tools", "WorkflowNode.max_iterations", "RouterNode.route",
            "PlannerRoles.worker_tools", "McpStdio.env", "McpHttp.headers",
            "AgentToolNode.agent", "JobsNode.webhook"} <= fields
    missing = fields - covered(fields) - IGNORED.keys()
    assert not missing, f"IR fields no diff rule reads (add a rule, or to IGNORED): {missing}"
    both = covered(fields) & IGNORED.keys()
    assert not both, f"fields both read and ignored: {both}"
    assert all(len(reason) > 20 for reason in IGNORED.values())


def test_rules_name_only_fields_that_exist() -> None:
    fields = ir_fields()
    classes = {f.split(".")[0] for f in fields}
    for rule in RULES:
        for name in rule.fields:
            assert name in fields or (name.endswith(".*") and name[:-2] in classes), \
                (rule.code.code, name)
    assert set(IGNORED) <= fields


def test_a_new_field_without_a_rule_fails_the_coverage_test(
        monkeypatch: pytest.MonkeyPatch) -> None:
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Grown(tree.RouterNode):
        surprise: int = 0
    monkeypatch.setattr(tree, "Grown", Grown, raising=False)

    @dataclasses.dataclass(frozen=True)
    class App(tree.AppNode):
        extra: Grown | None = None
    monkeypatch.setattr(tree, "App", App, raising=False)
    fields = ir_fields(App)
    assert {"Grown.surprise", "App.extra"} <= fields - covered(fields) - IGNORED.keys()


def test_a_new_backend_setting_without_a_rule_fails_the_coverage_test(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Backend definitions are typed (`contract.backends`), so the walk reaches each backend
    type's settings: a setting no rule reads is named."""
    assert {"SandboxDef.network", "Mount.target", "ShellDef.timeout",
            "CompositeDef.routes", "FilesystemDef.hard_links"} <= ir_fields()

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class GrownBox(SandboxDef):
        max_threads: int
    monkeypatch.setattr(tree, "GrownBox", GrownBox, raising=False)

    @dataclasses.dataclass(frozen=True)
    class Files(tree.FilesystemNode):
        more: FrozenMap[str, GrownBox] = FrozenMap()
    monkeypatch.setattr(tree, "Files", Files, raising=False)
    fields = ir_fields(Files)
    assert fields - covered(fields) - IGNORED.keys() == {"GrownBox.max_threads", "Files.more"}


def test_every_rule_has_a_diff_code_with_a_risk_and_an_explanation() -> None:
    codes = [rule.code for rule in RULES]
    assert len({c.code for c in codes}) >= 50
    for code in codes:
        assert REGISTRY[code.code] is code
        assert code.code.startswith("AS5") and code.risk and len(code.explanation) > 20
    assert {c.code for c in REGISTRY.values() if c.risk} == {c.code for c in codes}
    assert len(TREE_RULES) + len(AGENT_RULES) + len(APP_RULES) == len(RULES)


def test_explain_prints_a_rules_risk() -> None:
    done = CliRunner().invoke(cli, ["explain", "callback-changed"])
    assert done.exit_code == 0
    assert "AS536 callback-changed (a diff change; risk: high; category: security; stable)" \
        in done.output
    listed = CliRunner().invoke(cli, ["explain", "--all"]).output
    assert "AS540  generate-changed" in listed and "(diff, risk: medium, behaviour)" in listed


# the held-out edits of issue 13 ------------------------------------------------------------

BASE = """\
agentspec: 1
name: desk
global_instruction: Be brief.
plugins:
  - {python: "hooks:Audit", args: {level: 1}}
  - {python: "hooks:Count"}
agents:
  lead:
    model: gemini-2.5-flash
    instruction: Route the request.
    sub_agents: [billing]
  billing:
    description: Handles invoices and refunds.
    model: gemini-2.5-flash
    instruction: Handle billing.
    generate: {temperature: 0.1}
    include_contents: default
    disallow_transfer_to_peers: true
    callbacks:
      before_tool: ["hooks:deny_refunds"]
"""

#: the guards and plugins the golden pairs `callback_*` and `plugin_*` use too
HOOKS = (Path(__file__).parent / "diff_cases" / "callback_added" / "hooks.py").read_text()

EDITS = {
    "swap the before_tool guard": ('"hooks:deny_refunds"', '"hooks:allow_all"',
                                   "callback-changed", "high"),
    "temperature 0.1 -> 1.5": ("temperature: 0.1", "temperature: 1.5", "generate-changed",
                               "medium"),
    "rewrite a description": ("Handles invoices and refunds.", "Handles everything.",
                              "description-changed", "medium"),
    "drop a plugin": ('  - {python: "hooks:Count"}\n', "", "plugin-removed", "high"),
    "change a plugin's args": ("level: 1", "level: 2", "plugin-changed", "high"),
    "change global_instruction": ("Be brief.", "Be thorough.", "global-instruction-changed",
                                  "medium"),
    "change include_contents": ("include_contents: default", "include_contents: none",
                                "include-contents-changed", "medium"),
    "change a transfer flag": ("disallow_transfer_to_peers: true",
                               "disallow_transfer_to_peers: false", "transfer-changed",
                               "medium"),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_the_held_out_edits_are_reported_with_their_risk(edit: str, tmp_path: Path) -> None:
    before, after, change, risk = EDITS[edit]
    assert before in BASE
    (tmp_path / "hooks.py").write_text(HOOKS)
    (tmp_path / "old.yaml").write_text(BASE)
    (tmp_path / "new.yaml").write_text(BASE.replace(before, after))
    old = load_side(tmp_path / "old.yaml", "old.yaml", environ={})
    new = load_side(tmp_path / "new.yaml", "new.yaml", environ={})
    assert old.app is not None and new.app is not None, old.problems + new.problems
    changes = compare(old, new)
    assert [(c.change, c.risk) for c in changes] == [(change, risk)]
    assert changes[0].new is not None or changes[0].old is not None
    done = CliRunner().invoke(cli, ["diff", str(tmp_path / "old.yaml"),
                                    str(tmp_path / "new.yaml"), "--fail-on", "high"])
    assert f"{risk.upper():<6} {change}" in done.output
    assert done.exit_code == (1 if risk == "high" else 0), done.output
    medium = CliRunner().invoke(cli, ["diff", str(tmp_path / "old.yaml"),
                                      str(tmp_path / "new.yaml"), "--fail-on", "medium"])
    assert medium.exit_code == 1



def test_jobs_that_resume_and_the_conversation_store_are_app_rules(tmp_path: Path) -> None:
    """AS576 on-done-changed, AS577 sessions-changed; a password in a store URL is never
    shown, and the default store that `resume` brings is a change of its own."""
    base = ("agentspec: 1\nname: desk\nroot: lead\nagents:\n  lead:\n    model: gemini-2.5-flash\n"
            "    instruction: Delegate.\n    sub_agents: [scorer]\n  scorer:\n"
            "    model: gemini-2.5-flash\n    instruction: Score.\n    mode: single_turn\n"
            "    execution_mode: offline\n")
    (tmp_path / "old.yaml").write_text(base + "sessions: sqlite:///conversations.db\n")
    (tmp_path / "new.yaml").write_text(
        base + "jobs: {on_done: resume}\nsessions: postgresql://desk:hunter2@db/desk\n")
    changes = compare(load_side(tmp_path / "old.yaml", "old.yaml", environ={}),
                      load_side(tmp_path / "new.yaml", "new.yaml", environ={}))
    found = {(c.change, c.code, c.risk, c.agent) for c in changes}
    assert ("on-done-changed", "AS576", "medium", "(spec)") in found
    assert ("sessions-changed", "AS577", "medium", "(spec)") in found
    shown = " ".join(c.reason + c.detail for c in changes)
    assert "hunter2" not in shown and "postgresql://desk:***@db/desk" in shown
    (tmp_path / "old.yaml").write_text(base)
    (tmp_path / "new.yaml").write_text(base + "jobs: {on_done: resume}\n")
    changes = compare(load_side(tmp_path / "old.yaml", "old.yaml", environ={}),
                      load_side(tmp_path / "new.yaml", "new.yaml", environ={}))
    assert {c.change for c in changes} >= {"on-done-changed", "sessions-changed"}


# a new agent is judged by what it can do -------------------------------------------------

#: high-risk rules that need an old version of the agent or spec: a new one has nothing to
#: drop, remove or change (what it has is judged by the rules that run on it)
NEEDS_AN_OLD_VERSION = {
    "tool-changed": "a tool of the old version runs other code; a new agent's tools are "
                    "tool-added",
    "approval-dropped": "an approval the old version had; a new agent's tools without one "
                        "are tool-added",
    "callback-removed": "a callback the old version had",
    "callback-changed": "a callback the old version had; a new agent's are callback-added",
    "plugin-removed": "a plugin the old version had",
    "plugin-changed": "a plugin the old version had; a new spec's are plugin-added",
    "tool-auth-changed": "how a tool of the old version authenticates; a new agent's tools "
                         "are tool-added, their auth with them",
    "openapi-server-changed": "where an OpenAPI tool of the old version sent its calls; a new "
                              "agent's OpenAPI tools are tool-added",
    "openapi-operations-changed": "the operations an OpenAPI tool of the old version offered; "
                                  "a new agent's OpenAPI tools are tool-added, whole",
    "remote-target-changed": "the server an old version's agent called; a new remote agent "
                             "is agent-added, naming its URL",
    "summarization-turned-off": "a summarization the old version had; a new spec without one "
                                "loses nothing",
    "store-database-changed": "the database the old version's store kept files in; a new "
                              "agent's file tools are tool-added",
    "store-scope-changed": "whose files the old version's store showed; a new agent's file "
                           "tools are tool-added",
}


def _can_be_high(risk: str | None) -> bool:
    return risk is not None and risk.startswith("high")


def test_every_high_risk_gain_runs_on_a_new_agent_and_a_new_spec() -> None:
    """A rule that can report a high risk runs on a new agent (or spec), unless it needs an
    old version: a new rule must choose, or a new agent's gain passes `--fail-on high`."""
    high = {rule.code.name for rule in (*AGENT_RULES, *APP_RULES) if _can_be_high(rule.code.risk)}
    on_new = {rule.code.name for rule in AGENT_RULES if rule.on_new_agent} | \
        {rule.code.name for rule in APP_RULES if rule.on_new_spec}
    assert high - on_new == NEEDS_AN_OLD_VERSION.keys()
    assert all(len(reason) > 20 for reason in NEEDS_AN_OLD_VERSION.values())


RISKY = Path(__file__).parent / "diff_cases" / "agent_added_with_risks"


@pytest.mark.parametrize("old", ["no spec", "no agent", "an agent that could do nothing"])
def test_a_new_agent_carrying_every_risk_reports_each(old: str, tmp_path: Path) -> None:
    """`helper` has a tool, callbacks, a model with its own `base_url`, an editable memory
    file and commands in a sandbox that reaches the network, a mount, sockets and the
    project's files, with a route that reads hard links and shares conversation files: each
    high-risk rule that runs on new agents reports it, whatever the old version was."""
    new = load_side(RISKY / "new.yaml", "new.yaml", environ={})
    if old == "no spec":
        before = absent_side(tmp_path / "old.yaml", "old.yaml")
    else:
        text = (RISKY / "old.yaml").read_text()
        if old != "no agent":
            text += ("    sub_agents: [helper]\n  helper:\n    model: gemini-2.5-flash\n"
                     "    description: Helps.\n    instruction: Help.\n")
        (tmp_path / "old.yaml").write_text(text)
        before = load_side(tmp_path / "old.yaml", "old.yaml", environ={})
    assert new.app is not None and (before.app is not None or before.absent), before.problems
    found = {c.change for c in compare(before, new) if c.risk == "high" and "helper" in c.agents}
    expected = {rule.code.name for rule in AGENT_RULES if _can_be_high(rule.code.risk)} - \
        NEEDS_AN_OLD_VERSION.keys()
    assert found == expected
    done = CliRunner().invoke(cli, ["diff", str(RISKY / "old.yaml"), str(RISKY / "new.yaml"),
                                    "--fail-on", "high"])
    assert done.exit_code == 1, done.output


def test_another_backend_that_reads_hard_links_or_shares_conversations_is_high(
        tmp_path: Path) -> None:
    """A gain is judged against the backends the agent reached, not only the same one set
    up differently: moving to another backend that allows them is a gain too."""
    spec = ("agentspec: 1\nname: desk\nbackends:\n  plain: {type: filesystem, root: ./a}\n"
            "  open: {type: filesystem, root: ./b, hard_links: allow, "
            "conversation_files: shared}\nagents:\n  lead:\n    model: gemini-2.5-flash\n"
            "    instruction: Read.\n    filesystem: BACKEND\n")
    (tmp_path / "old.yaml").write_text(spec.replace("BACKEND", "plain"))
    (tmp_path / "new.yaml").write_text(spec.replace("BACKEND", "open"))
    changes = compare(load_side(tmp_path / "old.yaml", "old.yaml", environ={}),
                      load_side(tmp_path / "new.yaml", "new.yaml", environ={}))
    assert {(c.change, c.risk) for c in changes} == {
        ("backend-changed", "medium"), ("hard-links-allowed", "high"),
        ("conversation-files-shared", "high")}


def test_every_diff_code_has_a_golden_pair() -> None:
    """Each change a rule can report is shown by a pair in tests/diff_cases/, so its
    positions and risk are pinned; the message lists the codes without one."""
    cases = Path(__file__).parent / "diff_cases"
    reported = {line.split()[0] for expected in cases.glob("*/expected.txt")
                for line in expected.read_text().splitlines() if line.strip()}
    missing = sorted(f"{c.code} {c.name}" for c in REGISTRY.values()
                     if c.category is not None and c.name not in reported)
    assert not missing, f"diff codes without a golden pair in tests/diff_cases/: {missing}"


def test_every_diff_code_has_a_category_and_its_risks() -> None:
    for code in REGISTRY.values():
        assert (code.category is None) == (code.risk is None), code.code
        if code.risk is not None:
            assert code.risks and code.code.startswith("AS5"), code.code
