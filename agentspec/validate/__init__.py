"""Validate: structural checks against the language models, then semantic checks."""

from agentspec.validate.semantic import semantic
from agentspec.validate.structural import Structure, structural

__all__ = ["Structure", "semantic", "structural"]
