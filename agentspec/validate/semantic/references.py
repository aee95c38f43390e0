"""References between definitions: models, tools, backends, agents."""

from __future__ import annotations

import keyword
import re
import sys
from collections.abc import Sequence

from agentspec.contract import known_models
from agentspec.contract.adk_models import never_resolves
from agentspec.contract.harness_names import FILE_TOOLS, TODO_TOOLS
from agentspec.diagnostics import codes, did_you_mean
from agentspec.kindapi import kind_for_spec
from agentspec.language.agents import LlmAgent, TaskConfig
from agentspec.language.backends import CompositeBackend
from agentspec.language.models import ModelDef
from agentspec.language.tools import BUILTIN_TOOLS, AgentTool
from agentspec.resolve.interpolate import has_env_ref
from agentspec.validate.semantic.context import Context
from agentspec.validate.semantic.pyrefs import python_refs

__all__ = ["agent_reference", "check_references", "model_reference", "tool_references"]

_LITERAL_ID = re.compile(r"[-/.:@]")
#: tools an agent gets from a field of its own, not from `tools`
_GIVEN_BY: dict[str, str] = {
    **dict.fromkeys(FILE_TOOLS, "`filesystem: BACKEND` (or `filesystem: {backend: BACKEND, "
                                "tools: [...]}` for some of them)"),
    **dict.fromkeys(TODO_TOOLS, "`todos: true`"),
    "task": "`task:`",
    **dict.fromkeys(("list_skills", "load_skill", "load_skill_resource"), "`skills:`")}


def _model_id(ctx: Context, model_id: str, *path: str | int) -> None:
    """An id ADK's registry resolves (`provider: adk`): AS250 when it never can, AS251 when
    it does but names no Gemini model known (a misspelling the registry lets through)."""
    if has_env_ref(model_id):
        return
    if never_resolves(model_id):
        ctx.report(codes.UNRESOLVABLE_MODEL_ID(
            f"ADK's model registry resolves no model id `{model_id}`", ctx.at(*path),
            hint="use an id such as `gemini-2.5-flash` or `claude-sonnet-4-5`, or a LiteLLM "
            "id such as `openai/gpt-4o` with `provider: litellm`"))
    elif known_models.is_judged(model_id) and not known_models.is_known(model_id):
        near = known_models.closest(model_id)
        ctx.report(codes.UNKNOWN_MODEL_ID(
            f"`{model_id}` is not a Gemini model agentspec knows (its table is of "
            f"{known_models.TAKEN})", ctx.at(*path),
            hint=("did you mean " + " or ".join(f"`{m}`" for m in near) + "?") if near
            else "check the id against https://ai.google.dev/gemini-api/docs/models"))


def model_reference(ctx: Context, value: str | None, *path: str | int) -> None:
    if value is None or has_env_ref(value) or value in ctx.defined["models"]:
        return
    if _LITERAL_ID.search(value):
        _model_id(ctx, value, *path)
        return  # a literal model id such as gemini-2.5-flash
    ctx.report(codes.UNKNOWN_MODEL(
        f"`{value}` is not a model defined in `models` nor a model id", ctx.at(*path),
        hint=did_you_mean(value, ctx.defined["models"]) or "define it under `models` or use a "
        "full model id such as `gemini-2.5-flash`"))


def agent_reference(ctx: Context, value: str, *path: str | int) -> bool:
    if value in ctx.defined["agents"]:
        return True
    ctx.report(codes.UNKNOWN_AGENT(f"no agent named `{value}`", ctx.at(*path),
                                   hint=did_you_mean(value, ctx.defined["agents"])))
    return False


def _backend(ctx: Context, value: str, *path: str | int) -> None:
    if value not in ctx.defined["backends"]:
        ctx.report(codes.UNKNOWN_BACKEND(f"no backend named `{value}`", ctx.at(*path),
                                         hint=did_you_mean(value, ctx.defined["backends"])))


def tool_references(ctx: Context, entries: Sequence[object] | None, *path: str | int) -> None:
    for index, entry in enumerate(entries or ()):
        if isinstance(entry, str) and entry not in ctx.defined["tools"]:
            ctx.report(codes.UNKNOWN_TOOL(
                f"no tool named `{entry}`", ctx.at(*path, index), hint=_tool_hint(ctx, entry)))
        elif isinstance(entry, AgentTool):
            agent_reference(ctx, entry.agent, *path, index, "agent")


def _tool_hint(ctx: Context, name: str) -> str:
    if name in _GIVEN_BY:
        return f"`{name}` is a harness tool: it comes from {_GIVEN_BY[name]}, not from `tools`"
    if name in BUILTIN_TOOLS:
        return f"ADK's builtin tools are written `{{builtin: {name}}}`"
    return did_you_mean(name, ctx.defined["tools"]) or "define it under `tools`"


def _llm_agent(ctx: Context, name: str, agent: LlmAgent) -> None:
    base = ("agents", name)
    model_reference(ctx, agent.model, *base, "model")
    tool_references(ctx, agent.tools, *base, "tools")
    fs = agent.filesystem
    if isinstance(fs, str):
        _backend(ctx, fs, *base, "filesystem")
    elif fs:
        _backend(ctx, fs.backend, *base, "filesystem", "backend")
    if isinstance(agent.task, TaskConfig):
        for index, child in enumerate(agent.task.agents):
            agent_reference(ctx, child, *base, "task", "agents", index)


def _backends(ctx: Context) -> None:
    backends = ctx.spec.backends or {}
    for name, backend in backends.items():
        if not isinstance(backend, CompositeBackend):
            continue
        targets = [(backend.default, ("default",))] + [
            (target, ("routes", prefix)) for prefix, target in backend.routes.items()]
        for target, rel in targets:
            path = ("backends", name, *rel)
            if target not in ctx.defined["backends"]:
                _backend(ctx, target, *path)
            elif isinstance(backends.get(target), CompositeBackend):
                ctx.report(codes.INVALID_VALUE(
                    f"`{target}` is a composite backend; composites route to plain backends",
                    ctx.at(*path),
                    hint="point at a state, filesystem, shell, sandbox or store backend"))


def check_references(ctx: Context) -> None:
    spec = ctx.spec
    for name, agent in ctx.agents():
        if isinstance(agent, LlmAgent):
            _llm_agent(ctx, name, agent)
        kind_for_spec(agent).references(ctx, name, agent)
        for index, child in enumerate(getattr(agent, "sub_agents", None) or ()):
            if isinstance(child, str):
                agent_reference(ctx, child, "agents", name, "sub_agents", index)
        if name == "user":
            ctx.report(codes.INVALID_NAME("`user` is reserved by ADK for the person talking",
                                          ctx.key_at("agents", name), hint="rename the agent"))
    for name, tool in (spec.tools or {}).items():
        if isinstance(tool, AgentTool):
            agent_reference(ctx, tool.agent, "tools", name, "agent")
    if spec.summarization:
        model_reference(ctx, spec.summarization.model, "summarization", "model")
    if spec.defaults:
        model_reference(ctx, spec.defaults.model, "defaults", "model")
    for name, entry in (spec.models or {}).items():
        if isinstance(entry, str):
            _model_id(ctx, entry, "models", name)
        elif isinstance(entry, ModelDef) and entry.provider == "adk":
            _model_id(ctx, entry.id, "models", name, "id")
    if spec.root is not None:
        agent_reference(ctx, spec.root, "root")
    _app_name_module(ctx)
    if spec.name == "user" or spec.name.startswith("_"):  # ADK's App refuses both
        ctx.report(codes.INVALID_NAME(
            f"`{spec.name}` cannot name an ADK app: " + (
                "`user` is reserved for the person talking" if spec.name == "user" else
                "an app name starts with a letter"), ctx.at("name"),
            hint=f"use `{spec.name.lstrip('_') or 'app'}_app`"))
    if keyword.iskeyword(spec.name):
        ctx.report(codes.INVALID_NAME(f"`{spec.name}` is a Python keyword, so it cannot name the "
                                      "generated package", ctx.at("name"),
                                      hint=f"use `{spec.name}_app`"))
    _backends(ctx)


#: top-level modules every generated package imports
GENERATED_IMPORTS = ("agentspec", "google", "mcp")


def _app_name_module(ctx: Context) -> None:
    """The generated package is imported by the spec's name (`adk run` puts its directory
    first on sys.path): a name that is also a module it or the spec's code imports hides
    that module, or is hidden by it, and the package cannot load."""
    name = ctx.spec.name
    modules = {ref.split(":", 1)[0].split(".")[0] for _, ref in python_refs(ctx)}
    if name in GENERATED_IMPORTS or name in sys.stdlib_module_names or name in modules:
        whose = "the spec's python code" if name in modules else \
            "the standard library" if name in sys.stdlib_module_names else "generated code"
        ctx.report(codes.INVALID_NAME(
            f"`{name}` cannot name the generated package: it is a module of {whose}, which "
            "the package would hide, or be hidden by", ctx.at("name"),
            hint=f"use `{name}_app`"))
