"""Emit: the construction plan as live ADK objects, or as Python source."""
