"""Tools built the way ADK's Agent Config builds a `{name, args}` tool entry (for the shim
modules `agentspec import adk --write-shims` writes)."""

from __future__ import annotations

import inspect
from typing import Any

__all__ = ["adk_tool"]


def adk_tool(target: Any, args: dict[str, Any], config_path: str) -> Any:
    """A tool or toolset class: `from_config(ToolArgsConfig(args), config_path)`; a factory:
    called with the `ToolArgsConfig` (as `config_agent_utils._resolve_tools` does)."""
    from google.adk.tools.base_tool import BaseTool
    from google.adk.tools.base_toolset import BaseToolset
    from google.adk.tools.tool_configs import ToolArgsConfig

    config = ToolArgsConfig(**args)
    if inspect.isclass(target) and issubclass(target, (BaseTool, BaseToolset)):
        return target.from_config(config, config_path)
    if isinstance(target, (BaseTool, BaseToolset)):
        return target
    if not callable(target):
        raise TypeError(f"{target!r} is neither a tool, a toolset nor a factory")
    return target(config)
