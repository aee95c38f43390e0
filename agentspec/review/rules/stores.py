"""The rules about `type: store` backends: the database (and namespace) their files are kept
in, and whose files each user sees."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agentspec.contract.urls import redacted
from agentspec.diagnostics import codes
from agentspec.diagnostics.model import Risk
from agentspec.review.rules.backends import backend_at, definitions
from agentspec.review.ruletypes import AgentPair, Found, Rule

__all__ = ["RULES"]


def _stores(pair: AgentPair) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(name, old data, new data) of each store backend the agent reaches in both versions."""
    old, new = definitions(pair.before), definitions(pair.after)
    for name in sorted(old.keys() & new.keys()):
        if old[name].get("type") == new[name].get("type") == "store":
            yield name, old[name], new[name]


def _database(data: dict[str, Any]) -> str:
    if data.get("sqlite") is not None:
        return f"sqlite:///{data['sqlite']}"
    return redacted(str(data.get("url")))


def _database_changed(pair: AgentPair) -> Iterator[Found]:
    for name, old, new in _stores(pair):
        if _database(old) != _database(new):
            yield Found(Risk.HIGH, f"backend `{name}` keeps its files in {_database(new)} "
                        f"(was {_database(old)}): the files written before are not there",
                        *backend_at(pair, name, "url"))
        elif old.get("app") != new.get("app"):
            yield Found(Risk.HIGH, f"backend `{name}` keeps its files under app "
                        f"`{new.get('app')}` (was `{old.get('app')}`): the files written "
                        "before are not there", *backend_at(pair, name))


def _scope_changed(pair: AgentPair) -> Iterator[Found]:
    for name, old, new in _stores(pair):
        was, now = old.get("scope"), new.get("scope")
        if was != now:
            shared = "one set of files shared by every user" if now == "app" else \
                "each user's own files"
            yield Found(Risk.HIGH, f"backend `{name}` now shows each user {shared} (scope "
                        f"`{was}` -> `{now}`)", *backend_at(pair, name, "scope"))


_FIELDS = ("FilesystemNode.definitions", "StoreDef.url", "StoreDef.sqlite", "StoreDef.app")

RULES: tuple[Rule[AgentPair], ...] = (
    Rule(codes.STORE_DATABASE_CHANGED, _FIELDS, _database_changed),
    Rule(codes.STORE_SCOPE_CHANGED, ("FilesystemNode.definitions", "StoreDef.scope"),
         _scope_changed),
)
