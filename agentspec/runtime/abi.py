"""The runtime's interface to generated packages: every name a generated `agent.py` imports
from agentspec, and the version of that list.

A package records the ABI it was built against and calls `require` when it is imported, so
an installed agentspec older or newer than the builder fails with what to do instead of an
ImportError (or worse, a wrong call) somewhere inside the package. Change `ABI` whenever a
name below is removed or renamed, or its call changes incompatibly; a test checks that
planning imports nothing from agentspec that is not listed here.
"""

from __future__ import annotations

__all__ = ["ABI", "NAMES", "OLDEST", "AbiMismatch", "require", "upgrade"]

ABI = 3
#: the oldest ABI whose packages this runtime still runs: every name they import is here,
#: called as they call it (2 added `runtime.blame.Blame` and `InitialState(required=)`; 3
#: added `runtime.observing.observer`, `runtime.code_executors.sandbox_executor`,
#: `backend=`/`definitions=` of `memory_callback` and `skill_toolset`, `runtime.tool_auth`,
#: `runtime.prompts.harness.harness_prompt`, `memory_callback(header=)`,
#: `runtime.a2a_serve.a2a_server`, `runtime.remote.remote_agent`,
#: `runtime.openapi.openapi_toolset` and `runtime.mcp_server.mcp_server`)
OLDEST = 1

#: module -> the names generated code imports from it
NAMES: dict[str, frozenset[str]] = {
    "agentspec.runtime.a2a_serve": frozenset({"a2a_server"}),
    "agentspec.runtime.app": frozenset({"compaction", "history_scope", "resumable"}),
    "agentspec.runtime.blame": frozenset({"Blame"}),
    "agentspec.runtime.code_executors": frozenset({"sandbox_executor"}),
    "agentspec.runtime.dangling": frozenset({"PatchDanglingCalls"}),
    "agentspec.runtime.env": frozenset({"expand"}),
    "agentspec.runtime.harness.approvals": frozenset({"approval_gate", "edit_note", "gated"}),
    "agentspec.runtime.harness.callbacks": frozenset({"HarnessTool", "piped"}),
    "agentspec.runtime.harness.filesystem": frozenset({"backend_factory", "file_toolset"}),
    "agentspec.runtime.harness.memory": frozenset({"memory_callback"}),
    "agentspec.runtime.harness.results": frozenset({"result_limit_callback"}),
    "agentspec.runtime.harness.skills": frozenset({"skill_toolset"}),
    "agentspec.runtime.harness.task": frozenset({"task_tool"}),
    "agentspec.runtime.harness.todos": frozenset({"read_todos", "write_todos"}),
    "agentspec.runtime.instructions": frozenset({"template"}),
    "agentspec.runtime.mcp_server": frozenset({"mcp_server"}),
    "agentspec.runtime.jobs.delegation": frozenset({
        "JobDelivery", "OfflineAgentTool", "job_settings", "job_status_tool", "sqlite_url"}),
    "agentspec.runtime.model_routing": frozenset({"ModelCallContext", "fallback", "routed"}),
    "agentspec.runtime.models": frozenset({"litellm", "registry_model"}),
    "agentspec.runtime.observing": frozenset({"observer"}),
    "agentspec.runtime.openapi": frozenset({"openapi_toolset"}),
    "agentspec.runtime.planner": frozenset({"agent_tool", "planner"}),
    "agentspec.runtime.prompts.harness": frozenset({"harness_prompt"}),
    "agentspec.runtime.remote": frozenset({"remote_agent"}),
    "agentspec.runtime.router": frozenset({"router"}),
    "agentspec.runtime.schemas": frozenset({"model_from_json_schema"}),
    "agentspec.runtime.state": frozenset({"InitialState"}),
    "agentspec.runtime.tool_auth": frozenset({"auth_credential", "auth_scheme", "authenticated"}),
    "agentspec.runtime.tool_errors": frozenset({"error_result", "mcp_errors"}),
    "agentspec.runtime.workflows": frozenset({"loop", "parallel", "sequential"}),
    "agentspec.runtime.abi": frozenset({"require"}),
    # not from planning: the shims `agentspec import adk --write-shims` writes import it
    "agentspec.runtime.adk_tools": frozenset({"adk_tool"}),
}


def upgrade() -> str:
    """The command that upgrades agentspec (its distribution's name is not `agentspec`)."""
    from agentspec.contract.extras import DISTRIBUTION

    return f"pip install -U {DISTRIBUTION}"


class AbiMismatch(ImportError):
    """The installed agentspec cannot run a package built against another ABI."""


def require(built: int, package: str = "this package", builder: str = "") -> None:
    """Called by a generated package when it is imported: `built` is the ABI it was built
    against, `builder` the agentspec version that built it."""
    if OLDEST <= built <= ABI:
        return
    by = f"agentspec {builder}" if builder else "another agentspec"
    if built > ABI:
        raise AbiMismatch(
            f"{package} was built by {by} (runtime ABI {built}); the installed agentspec "
            f"has runtime ABI {ABI}, which is older: upgrade agentspec "
            f"({upgrade()}), or rebuild the package with this one "
            "(agentspec build SPEC)")
    raise AbiMismatch(
        f"{package} was built by {by} (runtime ABI {built}); the installed agentspec has "
        f"runtime ABI {ABI}, which is newer: rebuild the package (agentspec build SPEC)")
