"""The language: pydantic models of every key, and the JSON Schema made from them."""

from agentspec.spec.agents import AGENT_KINDS, FILE_TOOLS, Agent, Defaults, LlmAgent
from agentspec.spec.document import OVERLAY_FORBIDDEN, TOP_LEVEL_KEYS, Spec
from agentspec.spec.tools import BUILTIN_TOOLS

__all__ = ["AGENT_KINDS", "BUILTIN_TOOLS", "FILE_TOOLS", "OVERLAY_FORBIDDEN", "TOP_LEVEL_KEYS",
           "Agent", "Defaults", "LlmAgent", "Spec"]
