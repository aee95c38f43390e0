"""An Agent Config file against the installed ADK's own config classes, as `from_config`
checks it, with ADK's errors placed at file:line:col."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from agentspec.contract.extras import install
from agentspec.diagnostics import Diagnostic, codes, did_you_mean
from agentspec.parse import Key

if TYPE_CHECKING:
    from agentspec.adkimport.files import AdkFile

__all__ = ["AGENT_CLASSES", "AGENT_TOOL_NAMES", "MCP_TOOLSET_NAMES", "agent_kind",
           "check_schema"]

#: `agent_class` values of ADK's built-in agents, and the agentspec kind of each
AGENT_CLASSES = {
    f"{prefix}{name}": kind
    for name, kind in (("LlmAgent", "llm"), ("Agent", "llm"), ("SequentialAgent", "sequential"),
                       ("ParallelAgent", "parallel"), ("LoopAgent", "loop"))
    for prefix in ("", "google.adk.agents.")
} | {"google.adk.agents.llm_agent.LlmAgent": "llm", "google.adk.agents.llm_agent.Agent": "llm"}

#: how a tool entry can name ADK's AgentTool
AGENT_TOOL_NAMES = frozenset({"AgentTool", "google.adk.tools.AgentTool",
                              "google.adk.tools.agent_tool.AgentTool"})
#: how a tool entry can name ADK's McpToolset (ADK's own list, config_agent_utils)
MCP_TOOLSET_NAMES = frozenset(
    f"{prefix}{name}" for name in ("MCPToolset", "McpToolset")
    for prefix in ("", "google.adk.tools.", "google.adk.tools.mcp_tool.",
                   "google.adk.tools.mcp_tool.mcp_toolset."))


def agent_kind(data: dict[str, Any]) -> str | None:
    """The agentspec kind of a file's `agent_class` (None for a class agentspec lacks)."""
    return AGENT_CLASSES.get(str(data.get("agent_class") or "LlmAgent"))


def _config_classes() -> dict[str, type[BaseModel]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the Agent Config classes are deprecated in 2.x
        from google.adk.agents.llm_agent_config import LlmAgentConfig
        from google.adk.agents.loop_agent_config import LoopAgentConfig
        from google.adk.agents.parallel_agent_config import ParallelAgentConfig
        from google.adk.agents.sequential_agent_config import SequentialAgentConfig
        from google.adk.tools.agent_tool import AgentToolConfig
    return {"llm": LlmAgentConfig, "sequential": SequentialAgentConfig,
            "parallel": ParallelAgentConfig, "loop": LoopAgentConfig,
            "agent_tool": AgentToolConfig}


def _mcp_config_class() -> type[BaseModel] | None:
    """ADK's `McpToolsetConfig`, None without the `mcp` extra (ADK's module imports `mcp`)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from google.adk.tools.mcp_tool.mcp_toolset import McpToolsetConfig
    except ImportError:
        return None
    return McpToolsetConfig


def _path(data: Any, loc: tuple[Any, ...]) -> tuple[Key, ...]:
    """The YAML path of a pydantic error location: the parts that are keys or indexes of the
    data (pydantic adds union members and validator names in between)."""
    path: list[Key] = []
    for part in loc:
        step = isinstance(data, dict) and part in data or (
            isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data))
        if step:
            data = data[part]
        elif isinstance(part, str) and isinstance(data, dict):
            path.append(part)  # a missing or unknown key: reported at its parent / key
            break
        else:
            continue
        path.append(part)
    return tuple(path)


def _diagnostic(file: AdkFile, prefix: tuple[Key, ...], model: type[BaseModel],
                error: Any, data: Any) -> Diagnostic:
    path = (*prefix, *_path(data, tuple(error["loc"])))
    dotted = ".".join(str(p) for p in path) or "the file"
    kind = error["type"]
    name = model.__name__
    if kind == "extra_forbidden":
        return codes.ADK_SCHEMA(f"ADK's `{name}` has no key `{path[-1]}`",
                                file.at(*path, key=True),
                                hint=did_you_mean(path[-1], model.model_fields))
    if kind == "missing":
        return codes.ADK_SCHEMA(f"ADK's `{name}` requires `{dotted}`",
                                file.at(*path[:-1], key=True))
    return codes.ADK_SCHEMA(f"`{dotted}`: {error['msg']} (ADK's `{name}`)", file.at(*path))


def _validate(file: AdkFile, model: type[BaseModel], data: Any,
              prefix: tuple[Key, ...] = ()) -> list[Diagnostic]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "LlmAgentConfig is deprecated" (ADK 2.x)
            model.model_validate(data)
    except ValidationError as exc:
        found: dict[tuple[str, int, int], Diagnostic] = {}
        for error in exc.errors(include_url=False):
            diagnostic = _diagnostic(file, prefix, model, error, data)
            place = diagnostic.span.sort_key() if diagnostic.span else ("", 0, 0)
            found.setdefault(place, diagnostic)  # one per place: a union fails per member
        return list(found.values())
    except Exception as exc:  # noqa: BLE001 - ADK's classes can fail other ways (an enum
        # given a boolean raises AttributeError): that is ADK refusing the file too
        return [codes.ADK_SCHEMA(f"ADK's `{model.__name__}` fails on this file: "
                                 f"{type(exc).__name__}: {exc}", file.at(*prefix),
                                 hint="ADK could not load it either; a YAML 1.1 reading "
                                 "(AS618) is a common cause")]
    return []


def check_schema(file: AdkFile) -> list[Diagnostic]:
    """What ADK's config classes refuse in `file` (agent classes agentspec does not convert
    are refused later, with their own code)."""
    kind = agent_kind(file.data)
    if kind is None:
        return []
    classes = _config_classes()
    problems = _validate(file, classes[kind], file.data)
    for index, tool in enumerate(file.data.get("tools") or []):
        if not isinstance(tool, dict) or not isinstance(tool.get("args"), dict):
            continue
        where = ("tools", index, "args")
        if tool.get("name") in AGENT_TOOL_NAMES:
            problems += _validate(file, classes["agent_tool"], tool["args"], where)
        elif tool.get("name") in MCP_TOOLSET_NAMES:
            mcp = _mcp_config_class()
            problems += [codes.MISSING_EXTRA(
                "checking an MCP toolset against ADK's `McpToolsetConfig` needs the `mcp` "
                "package", file.at("tools", index, "name"), hint=f"install it: {install('mcp')}"
            )] if mcp is None else _validate(file, mcp, tool["args"], where)
    return problems
