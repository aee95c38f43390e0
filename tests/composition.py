"""The composition matrix: every parent kind, placed as the root or under another agent, x
every way to reach a child x every child kind that can sit there, as a spec plus a script.

Everything is derived from the language's models and the kinds table: the kinds from
`KIND_MODELS`, which kinds can hold sub-agents, tools or the `task` tool from their fields,
the `mode` values and the `execution_mode` values from their `Literal`s, the smallest agent of
each kind and the replies with which it answers from its kind module (`example`, `answers`).
A new kind or a new mode joins the matrix without an edit here; a new way of delegating (a
new field) needs a `Way`.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from typing import Any

from agentspec.kindapi import kind_named
from agentspec.language.agents import KIND_MODELS, AgentBase, LlmAgent, kinds_taking

__all__ = ["CELLS", "REMOTE_CARD", "Cell", "Way"]

MODEL = "gemini-2.5-flash"
CHILD_ANSWER = "CHILD-ANSWER"
#: a remote child's agent card, written beside the spec (tests/a2aserver.py serves the agent)
REMOTE_CARD = "child_card.json"
PARENT_ANSWER = "PARENT-ANSWER"
REQUEST = "Do the part you are asked to do."


def _literal(model: type[AgentBase], name: str) -> tuple[str, ...]:
    annotation = model.model_fields[name].annotation
    for arg in typing.get_args(annotation) or (annotation,):
        if typing.get_origin(arg) is typing.Literal:
            return tuple(typing.get_args(arg))
    raise AssertionError(f"{model.__name__}.{name} is no Literal")


KINDS: tuple[str, ...] = tuple(KIND_MODELS)
LLM_KINDS = tuple(k for k, model in KIND_MODELS.items() if issubclass(model, LlmAgent))
MODES = _literal(LlmAgent, "mode")
OFFLINE = [m for m in _literal(AgentBase, "execution_mode") if m != "realtime"]


@dataclass(frozen=True)
class Way:
    """A way for a parent to reach a child: the kinds that can be parents that way (others
    are tried too, and must be refused), and the child kinds that can sit there."""

    name: str
    field: str  # the parent's field it goes through
    children: tuple[str, ...]
    mode: str | None = None  # the child's `mode`
    calls: bool = True  # the parent calls the child like a tool (else: transfer / runs it)

    @property
    def parents(self) -> tuple[str, ...]:
        """The kinds with the field; for a `mode`, those that honour it (the kinds that take
        `mode` themselves: elsewhere it does nothing, AS229, and is not built)."""
        kinds = kinds_taking(self.field)
        return tuple(k for k in kinds if self.mode is None or k in kinds_taking("mode"))

    def delegates(self, parent: str) -> bool:
        """Whether `parent` calls the child like a tool this way (a sub-agent's `mode` says
        how an LLM parent calls it; any other parent runs it)."""
        return self.calls and (self.field != "sub_agents" or parent in LLM_KINDS)


WAYS: tuple[Way, ...] = (
    Way("sub_agents", "sub_agents", KINDS, calls=False),
    *(Way(f"mode: {mode}", "sub_agents", tuple(kinds_taking("mode")), mode=mode)
      for mode in MODES if mode != "chat"),  # `chat` is the default: the sub_agents way
    Way("{agent: x}", "tools", KINDS),
    Way("task tool", "task", KINDS),
    Way("worker {agent: x}", "worker", KINDS),
)


@dataclass
class Cell:
    """One spec and the script of one conversation through it."""

    placement: str  # "root", or the kind of the agent the parent sits under
    parent: str
    way: Way
    child: str
    offline: str | None = None
    agents: dict[str, Any] = field(default_factory=dict)
    replies: dict[str, list[Any]] = field(default_factory=dict)
    root: str = "parent"
    final: str = CHILD_ANSWER  # the last answer of the (first) turn

    @property
    def id(self) -> str:
        where = "root" if self.placement == "root" else f"under-{self.placement}"
        offline = f"+{self.offline}" if self.offline else ""
        return f"{where}/{self.parent}/{self.way.name}{offline}/{self.child}"

    @property
    def spec(self) -> dict[str, Any]:
        return {"agentspec": 1, "name": "matrix", "root": self.root, "agents": self.agents}

    @property
    def script(self) -> dict[str, Any]:
        return {"messages": [REQUEST], "replies": self.replies}

    def answering(self, text: str) -> dict[str, list[Any]]:
        """Replies with which the parent answers `text` directly (a later turn)."""
        return kind_named(self.parent).answers("parent", text)


# the child -------------------------------------------------------------------------------------


def _agent(kind: str, children: tuple[str, ...] = (), **fields: Any) -> dict[str, Any]:
    """The smallest agent of `kind`, running `children`."""
    return {**kind_named(kind).example(kind, MODEL, children), **fields}


def _child(cell: Cell) -> None:
    """The child, which answers CHILD_ANSWER however it is reached."""
    kind, agents, replies = cell.child, cell.agents, cell.replies
    about = {"description": "Does the part it is asked to do."}
    if cell.offline:
        about["execution_mode"] = cell.offline
    if kind in LLM_KINDS:
        agents["child"] = _agent(kind, **about, **({"mode": cell.way.mode} if cell.way.mode
                                                    else {}))
        replies["child"] = [{"call": "finish_task", "args": {"result": CHILD_ANSWER}}
                            if cell.way.mode == "task" and not cell.offline
                            and cell.way.delegates(cell.parent) else {"text": CHILD_ANSWER}]
    elif kind == "remote":  # served by the test (tests/a2aserver.py), answering CHILD_ANSWER
        agents["child"] = _agent(kind, card=REMOTE_CARD, **about)
    elif answers := kind_named(kind).answers("child", CHILD_ANSWER):
        agents["child"] = _agent(kind, **about)
        replies.update(answers)
    else:  # it runs its children (a workflow, a router): one leaf
        agents["child"] = _agent(kind, ("leaf",), **about)
        agents["leaf"] = _agent("llm", description="A leaf.")
        replies["leaf"] = [{"text": CHILD_ANSWER}]


# the parent ------------------------------------------------------------------------------------


def _parent(cell: Cell) -> None:
    """The parent, reaching the child its way; it answers PARENT_ANSWER when it called the
    child like a tool and the child's answer came back (`when:`)."""
    kind, way = cell.parent, cell.way
    about = {"description": "Delegates."}
    parent = _agent(kind, ("child",) if way.field == "sub_agents" else (), **about)
    if way.field == "tools":
        parent["tools"] = [{"agent": "child"}]
    elif way.field == "task":
        parent["task"] = {"agents": ["child"]}
    elif way.field == "worker":
        parent["worker"] = {"tools": [{"agent": "child"}]}
    cell.agents["parent"] = parent
    speakers = kind_named(kind).answers("parent", PARENT_ANSWER)
    speaker = [*speakers][-1] if speakers else "parent"  # who calls the child: the last
    cell.replies.update({name: said for name, said in speakers.items() if name != speaker})
    if way.delegates(kind):
        call = {"call": "task", "args": {"description": REQUEST, "subagent_type": "child"}} \
            if way.field == "task" else {"call": "child", "args": {"request": REQUEST}}
        back = "job_id" if cell.offline else CHILD_ANSWER  # what the tool's result holds
        cell.replies[speaker] = [call, {"when": back, "text": PARENT_ANSWER}]
        cell.final = PARENT_ANSWER
    elif kind in LLM_KINDS:
        cell.replies["parent"] = [{"transfer": "child"}]
    # a workflow or router runs the child: its answer is the last one


def _placement(cell: Cell) -> None:
    """Under another agent, the parent is reached as that agent's sub-agent."""
    if cell.placement == "root":
        return
    kind = cell.placement
    top = _agent(kind, ("parent",))
    if kind in LLM_KINDS:
        cell.replies["top"] = [{"transfer": "parent"}]
    cell.agents = {"top": top, **cell.agents}
    cell.root = "top"


def cell(placement: str, parent: str, way: Way, child: str,
         offline: str | None = None) -> Cell:
    made = Cell(placement, parent, way, child, offline)
    _child(made)
    _parent(made)
    _placement(made)
    return made


PLACEMENTS = ("root", *kinds_taking("sub_agents"))


def _cells() -> list[Cell]:
    """Every parent kind at the root reaches every child kind, in real time and offline.
    Under another agent (which changes how ADK runs the parent: reached by a transfer, or
    run by a workflow or router), a parent that calls or transfers to its child (an LLM
    agent, standing for `deep` too, which is one with the harness's tools; a planner's
    workers) reaches an LLM child in real time: a child's kind does not change how its
    parent runs, an offline child runs in a worker, as the root of a session of its own,
    wherever its parent is, and a workflow or router under another agent runs its children
    as it does at the root (as nodes)."""
    found = []
    for placement in PLACEMENTS:
        nested = placement != "root"
        for way in WAYS:
            for parent in way.parents:
                calls = parent == LLM_KINDS[0] or (parent not in LLM_KINDS
                                                   and way.delegates(parent))
                if nested and not calls:
                    continue
                for child in way.children[:1] if nested else way.children:
                    for offline in (None, *(() if nested else OFFLINE)):
                        found.append(cell(placement, parent, way, child, offline))
    return found


CELLS = _cells()
