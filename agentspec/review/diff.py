"""What a spec change changes: the resolved agent trees of two versions, compared per agent
by the rules of `review.rules`.

Both sides are checked and lowered as `build` would (imports, defaults, `extends`,
overlays, instruction files, `kind: deep` defaults, the environment), so a change that
arrives through an import, a default or an environment is seen where it lands. Each change
has its rule's name and code (AS5xx), a risk class with its reason, and the position of what
changed in each version:

* high: a capability gained (a tool, the shell, a backend that reads hard links, a new
  agent's tools, a sandbox's network or host directories, commands leaving their sandbox),
  an approval dropped, any callback or plugin added, removed or changed (they
  can be guards), a memory file made editable, job results posted elsewhere, a model that
  now sends requests (and its key) to another server (`base_url`), or `outside_project`
  widened;
* medium: behaviour changed (model, a model's fallback chain, route or call settings,
  kind, instruction, description, generation and thinking settings, transfer flags,
  history, limits raised, routes, execution mode, sub-agents, memory, skills, schemas, what
  a tool's error does, the initial session state, the global instruction, compaction and
  where summarized conversations are kept, the job store, what a finished job does, where
  conversations are kept);
* low: a capability lost, an approval added, a limit lowered, an agent removed or renamed,
  `outside_project` narrowed.

A spec one version does not have is compared with no spec: `spec-added` (medium, with what
its agents can do) or `spec-removed` (low). App-level changes are reported under `(spec)`.
The text of a file outside the project is never shown, nor the password of a store URL.
"""

from __future__ import annotations

from agentspec.review.rules import AGENT_RULES, APP_RULES, TREE_RULES, Trees, blank
from agentspec.review.ruletypes import AgentPair, AppPair
from agentspec.review.sides import RISKS, SPEC, Change, Side, Where, absent_side, load_side

__all__ = ["RISKS", "SPEC", "Change", "Side", "Where", "absent_side", "compare", "grouped",
           "load_side"]


def compare(old: Side, new: Side) -> list[Change]:
    """Every change from `old` to `new`, per agent, in the new version's order (changes to
    the spec as a whole last); one edit of a definition several agents share (a model, a
    backend, a tool) is one change that names every agent it reaches."""
    trees = Trees(old, new)
    changes = [change for rule in TREE_RULES for change in rule.check(trees)]
    pairs = [AgentPair(old, new, new_name, old_name, trees.before[old_name],
                       trees.after[new_name]) for old_name, new_name in trees.renames]
    pairs += [AgentPair(old, new, name, name, trees.before[name], agent)
              for name, agent in trees.after.items() if name in trees.before]
    for pair in pairs:
        changes += [pair.resolve(found, rule.code) for rule in AGENT_RULES
                    for found in rule.check(pair)]
    for name, agent in trees.added.items():
        pair = AgentPair(old, new, name, name, blank(agent), agent)
        changes += [pair.resolve(found, rule.code) for rule in AGENT_RULES if rule.on_new_agent
                    for found in rule.check(pair)]
    if not new.absent:
        app = AppPair(old, new)
        changes += [app.resolve(found, rule.code) for rule in APP_RULES
                    if rule.on_new_spec or not old.absent for found in rule.check(app)]
    order = {name: index for index, name in enumerate(trees.after)}
    return sorted(grouped(changes), key=lambda c: (order.get(c.agents[0], len(order)),
                                                   RISKS.index(c.risk), c.change))


def grouped(changes: list[Change]) -> list[Change]:
    """Changes that say the same at the same positions (a shared definition's edit, found
    once per agent that uses it) as one change naming every agent, in the order found."""
    merged: dict[tuple[object, ...], Change] = {}
    for change in changes:
        key = (change.code, change.change, change.risk, change.reason, change.old,
               change.new, change.detail)
        first = merged.get(key)
        if first is None:
            merged[key] = change
        elif change.agent not in first.agents:
            merged[key] = first.reaching(change.agent)
    return list(merged.values())
