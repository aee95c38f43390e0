"""The diff rules: each has a registered code (AS5xx, `agentspec explain` prints it with its
risk class), the IR fields it reads, and a handler that yields what changed.

Three scopes: `tree` rules pair the agents of the two versions (added, removed, renamed),
`agent` rules compare one agent's two versions, `app` rules the spec as a whole (reported
under `(spec)`). `IGNORED` names the IR fields no rule reads, each with the reason; a test
asserts every field of every IR node is read by a rule or listed there, so a new field
without a rule fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentspec.kindapi import kinds
from agentspec.review.rules import (
    agent,
    app,
    approvals,
    backends,
    jobs,
    models,
    observing,
    openapi,
    stores,
    tools,
)
from agentspec.review.rules.tree import TREE_RULES, TreeRule, Trees, blank
from agentspec.review.rules.views import capabilities
from agentspec.review.ruletypes import AgentPair, AppPair, Found, Rule

__all__ = ["AGENT_RULES", "APP_RULES", "IGNORED", "RULES", "TREE_RULES", "AgentPair", "Found",
           "Rule", "TreeRule", "Trees", "blank", "capabilities"]

#: the rules of every kind, then each kind's own (a router's route, a planner's roles, ...)
AGENT_RULES: tuple[Rule[AgentPair], ...] = (
    *agent.RULES, *models.RULES, *tools.RULES, *openapi.RULES, *approvals.RULES,
    *backends.RULES, *stores.RULES,
    *(rule for kind in kinds() for rule in kind.rules))

APP_RULES: tuple[Rule[AppPair], ...] = (*app.RULES, *jobs.RULES, *observing.RULES)

RULES: tuple[TreeRule | Rule[Any], ...] = (*TREE_RULES, *AGENT_RULES, *APP_RULES)

#: IR fields no rule reads, and why
IGNORED: Mapping[str, str] = {
    "AgentFields.file": "where the agent is defined: a position for messages, not behaviour",
    "AgentFields.line": "where the agent is defined: a position for messages, not behaviour",
    "AppNode.spec_file": "the spec's file name: where the spec is, not what it does",
    "AppNode.description": "the generated package's docstring; nothing reads it at run time",
    "AppNode.resumable": "derived from the approvals (AS509-AS511), which rules compare",
    "AppNode.module_dirs": "derived from the python objects' directories, which the rules "
                           "comparing tools, callbacks, plugins, routes and schemas compare",
    "Compaction.filesystem": "the root agent's file tools the history is written with, "
                             "which the rules comparing the root agent's backend compare",
    "Approval.hint": "the question shown to the person who approves; its wording changes "
                     "no decision the run can take",
}
