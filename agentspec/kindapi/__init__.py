"""The agent kind protocol and the table of kinds: below every stage, so the stages call the
kinds without importing them (`agentspec.kinds` fills the table)."""

from agentspec.kindapi.kind import Common, Kind, Site
from agentspec.kindapi.table import kind_for, kind_for_spec, kind_named, kinds, register

__all__ = ["Common", "Kind", "Site", "kind_for", "kind_for_spec", "kind_named", "kinds", "register"]
