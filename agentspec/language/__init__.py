"""The language: pydantic models of every key, and the JSON Schema made from them."""

from agentspec.language.agents import AGENT_KINDS, FILE_TOOLS, Agent, Defaults, LlmAgent
from agentspec.language.document import OVERLAY_FORBIDDEN, TOP_LEVEL_KEYS, Spec
from agentspec.language.tools import BUILTIN_TOOLS

__all__ = ["AGENT_KINDS", "BUILTIN_TOOLS", "FILE_TOOLS", "OVERLAY_FORBIDDEN", "TOP_LEVEL_KEYS",
           "Agent", "Defaults", "LlmAgent", "Spec"]
