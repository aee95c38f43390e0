"""`kind: llm`: an LLM agent, with the deep-agent harness (todos, file tools, `task`,
skills, memory, approvals, result eviction) when the spec asks for it. `kind: deep` is the
same agent with the harness's defaults (`agentspec.kinds.deep`)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agentspec.contract.backend_sources import backend_path
from agentspec.contract.backends import SandboxDef, StoreDef
from agentspec.contract.frozen import FrozenMap
from agentspec.contract.harness_names import TODO_TOOLS
from agentspec.contract.urls import redacted
from agentspec.diagnostics import codes
from agentspec.ir.harness_prompts import lower_prompts
from agentspec.ir.tree import (
    AgentToolNode,
    CodeExecutorNode,
    DeepNode,
    FallbackChain,
    FilesystemNode,
    LiteLlmEndpoint,
    LlmFields,
    LlmNode,
    McpToolNode,
    ModelNode,
    ModelRoute,
    OpenApiToolNode,
    PlainModel,
    PythonToolNode,
    ToolNode,
    evicts_to_artifacts,
)
from agentspec.kindapi import Kind, Site
from agentspec.language.adk_settings import SandboxExecutor
from agentspec.language.agents import TOOL_ERRORS_DEFAULT, LlmAgent
from agentspec.language.effective import harness
from agentspec.validate.semantic.models import check_thinking

if TYPE_CHECKING:
    from agentspec.ir.lower import Lowering
    from agentspec.ir.plan import Call, Value
    from agentspec.ir.planning import PlanBuilder
    from agentspec.validate.semantic.context import Context

__all__ = ["KIND", "check", "label", "lower_as", "plan"]


def check(ctx: Context, name: str, agent: LlmAgent) -> None:
    check_thinking(ctx, agent.thinking, "agents", name, "thinking")
    if agent.instruction is not None and agent.instruction_file is not None:
        ctx.report(codes.ONE_OF("`instruction` and `instruction_file` exclude each other",
                                ctx.key_at("agents", name, "instruction_file"),
                                hint="keep one of them"))


def lower_as(node_type: type[LlmNode] | type[DeepNode], lowering: Lowering, name: str,
             agent: LlmAgent, site: Site) -> LlmNode | DeepNode:
    """An LLM agent of the spec as `node_type`."""
    common, as_tool, under_llm = site.common, site.as_tool, site.under_llm
    model, generate, thinking = lowering.model(agent.model)
    generate.update(agent.generate.model_dump(exclude_none=True) if agent.generate else {})
    thinking.update(agent.thinking.model_dump(exclude_none=True) if agent.thinking else {})
    skills, discovery = lowering.skills(name, agent)
    kit = harness(agent, lowering.spec.backends or {})  # with the defaults of `kind: deep`
    approvals = lowering.approvals(agent)
    filesystem, memory = lowering.filesystem(kit), lowering.memory(name, agent)
    mode = agent.mode if under_llm or as_tool else None  # else AS229: it does nothing
    if as_tool and mode not in ("single_turn", "task"):
        mode = "single_turn"  # an `{agent: name}` tool is the child called as a tool
    if common["offline"]:
        mode = None  # a worker runs it on its own, as the root of a session
    # an agent called as a tool answers its caller: a transfer would abandon the call
    delegated = mode in ("single_turn", "task")
    node = node_type(
        **common, model=model, generate=FrozenMap(generate),
        thinking=FrozenMap(thinking), adk_planner=agent.planner,
        instruction=lowering.instruction(name, agent),
        instruction_file=None if agent.instruction_file is None else lowering.spec_relative(
            agent.instruction_file, "agents", name, "instruction_file"),
        static_instruction=agent.static_instruction,
        tools=tuple(lowering.tool(name, i, t, approvals)
                    for i, t in enumerate(agent.tools or ())) + tuple(
            AgentToolNode(agent=lowering.agent(child, as_tool=True)) for child in site.queued),
        mode=mode, output_schema=lowering.schema(name, "output_schema", agent.output_schema),
        input_schema=lowering.schema(name, "input_schema", agent.input_schema),
        output_key=agent.output_key, include_contents=agent.include_contents,
        disallow_transfer_to_parent=True if delegated else agent.disallow_transfer_to_parent,
        disallow_transfer_to_peers=True if delegated else agent.disallow_transfer_to_peers,
        todos=kit.todos, memory=memory,
        memory_edit_at=lowering.memory_edit_at(memory, kit, filesystem),
        filesystem=filesystem, skills=skills, skill_discovery=discovery,
        result_limit=kit.result_limit, approvals=FrozenMap(approvals),
        tool_errors=agent.tool_errors or TOOL_ERRORS_DEFAULT,
        code_executor=code_executor_node(lowering, agent),
        prompts=lower_prompts(lowering, name, agent))
    return replace(node, task=lowering.task(kit, node))


def code_executor_node(lowering: Lowering, agent: LlmAgent) -> CodeExecutorNode | None:
    setting = agent.code_executor
    if setting is None:
        return None
    if setting == "builtin":
        return CodeExecutorNode("builtin")
    assert isinstance(setting, SandboxExecutor)
    return CodeExecutorNode("sandbox", FilesystemNode(
        setting.backend, ("execute",), lowering.backend_definitions(setting.backend)))


def lower(lowering: Lowering, name: str, agent: LlmAgent, site: Site) -> LlmNode:
    node = lower_as(LlmNode, lowering, name, agent, site)
    assert isinstance(node, LlmNode)
    return node


def plan(builder: PlanBuilder, node: LlmNode | DeepNode, children: list[Value]) -> Call:
    # deferred: validate imports every kind, and plans nothing
    from agentspec.ir.plan import Call, DictOf, Import, ListOf, SpecPath
    from agentspec.ir.values import (
        DELEGATION,
        JOBS,
        LLM_AGENT,
        adk_planner,
        backend_definitions,
        code_executor_value,
        dispatches_tasks,
        file_toolset,
        instruction_value,
        kwargs,
        lit,
        llm_generate_config,
        model_value,
        schema_value,
    )

    tools = [v for t in node.tools if (v := builder.tool(t, children)) is not None]
    if node.todos:
        tools += [Call(Import("agentspec.runtime.harness.callbacks", "HarnessTool"),
                       args=(Import("agentspec.runtime.harness.todos", name),))
                  for name in TODO_TOOLS]
    if node.filesystem is not None:
        tools.append(file_toolset(node.filesystem))
    if evicts_to_artifacts(node):
        tools.append(Import("google.adk.tools", "load_artifacts"))  # reads evictions
    if node.task:
        agents = DictOf(tuple((kind, builder.agent(child)) for kind, child in node.task.items()))
        queued = [kind for kind, child in node.task.items() if child.offline]
        tools.append(Call(Import("agentspec.runtime.harness.task", "task_tool"),
                          args=(agents,), kwargs=(
                              ("offline", lit(queued)), ("jobs", JOBS)) if queued
                          else ()))
    if any(isinstance(t, AgentToolNode) and t.agent.offline for t in node.tools) or any(
            child.offline for _, child in node.task.items()):
        tools.append(Call(Import(DELEGATION, "job_status_tool"), args=(JOBS,)))
    if node.skills:
        held = node.filesystem if any(backend_path(d) for d in node.skills) else None
        tools.append(Call(Import("agentspec.runtime.harness.skills", "skill_toolset"),
                          args=(ListOf(tuple(d if backend_path(d) else SpecPath(d)
                                             for d in node.skills)), node.skill_discovery),
                          kwargs=(("backend", held.backend),
                                  ("definitions", backend_definitions(held))) if held else ()))
    return Call(LLM_AGENT, kwargs(
        name=node.name, description=lit(node.description),
        model=model_value(node.model),
        instruction=instruction_value(node.instruction,
                                      verbatim=node.instruction_file is not None),
        static_instruction=lit(node.static_instruction),
        tools=ListOf(tuple(tools)) if tools else None,
        sub_agents=ListOf(tuple(children)) if children else None,
        mode=node.mode, generate_content_config=llm_generate_config(node),
        planner=adk_planner(node),
        output_schema=schema_value(node.output_schema, "", model_needed=False),
        input_schema=schema_value(node.input_schema, f"{node.name}_input",
                             model_needed=True),
        output_key=lit(node.output_key), include_contents=node.include_contents,
        disallow_transfer_to_parent=node.disallow_transfer_to_parent,
        disallow_transfer_to_peers=node.disallow_transfer_to_peers,
        rerun_on_resume=dispatches_tasks(node),
        code_executor=code_executor_value(node.code_executor),
        **builder.callbacks(node, _hooks(builder, node))))


def _hooks(builder: PlanBuilder, node: LlmNode | DeepNode) -> dict[str, list[Value]]:
    """The spec's callbacks with the harness's: memory, approvals, tool errors, result
    eviction."""
    from agentspec.ir.harness_prompts import prompt_hook
    from agentspec.ir.plan import Call, DictOf, Import
    from agentspec.ir.values import (
        APPROVALS,
        MCP_ERRORS,
        TOOL_ERROR_RESULT,
        approval_value,
        result_limit_callback,
    )

    hooks = builder.hooks(node)
    if node.tool_errors == "return":  # last: the spec's own decide first
        hooks["on_tool_error"] = [*hooks.get("on_tool_error", []), TOOL_ERROR_RESULT]
    if node.memory:  # first, so the user's own before_model callbacks see the memory too
        memory = memory_callback(node)
        hooks["before_model"] = [memory, *hooks.get("before_model", [])]
    sections = prompt_hook(node)
    if sections is not None:  # before memory: the harness's sections, then the agent's memory
        hooks["before_model"] = [sections, *hooks.get("before_model", [])]
    approvals = [a for _, a in node.approvals.items()] + [
        t.approval for t in node.tools
        if isinstance(t, PythonToolNode | McpToolNode | OpenApiToolNode) and t.approval]
    if approvals:  # first: nothing, not even the user's callbacks, sees an unapproved call
        gate = Call(Import(APPROVALS, "approval_gate"), args=(DictOf(tuple(
            (name, approval_value(approval)) for name, approval in node.approvals.items())),))
        hooks["before_tool"] = [gate, *hooks.get("before_tool", [])]
    editable = any("edit" in a.decisions for a in approvals)
    mcp = any(isinstance(t, McpToolNode) for t in node.tools)
    rewrites = ([Call(MCP_ERRORS, args=(node.tool_errors,))] if mcp else []) + (
        [Call(Import(APPROVALS, "edit_note"))] if editable else []) + (
        [result_limit_callback(node)] if node.result_limit is not None else [])
    if rewrites:  # last: ADK stops at a callback's replacement; piped, so each sees it
        rewrite = rewrites[0] if len(rewrites) == 1 else Call(
            Import("agentspec.runtime.harness.callbacks", "piped"), args=tuple(rewrites))
        hooks["after_tool"] = [*hooks.get("after_tool", []), rewrite]
    return hooks


def memory_callback(node: LlmNode | DeepNode) -> Call:
    """The memory files: host files by their path, `backend:/path` entries read through the
    agent's file-tools backend."""
    from agentspec.ir.harness_prompts import memory_header
    from agentspec.ir.plan import Call, Import, ListOf, SpecPath
    from agentspec.ir.values import backend_definitions, lit

    in_backend = [backend_path(p) for p in node.memory]
    reads = node.filesystem if any(in_backend) else None
    header = memory_header(node)
    return Call(Import("agentspec.runtime.harness.memory", "memory_callback"),
                args=(ListOf(tuple(SpecPath(p) if at is None else p
                                   for p, at in zip(node.memory, in_backend, strict=True))),),
                kwargs=(("names", lit([at or p for p, at in zip(node.memory, in_backend,
                                                                 strict=True)])),
                        ("edit_at", lit(list(node.memory_edit_at))),
                        *((("header", header),) if header is not None else ()),
                        *((("backend", reads.backend),
                           ("definitions", backend_definitions(reads))) if reads else ())))


def label(node: LlmNode | DeepNode) -> list[str]:
    kind = "deep" if isinstance(node, DeepNode) else "llm"
    lines = [node.name, kind if node.model is None else f"{kind} · {node.model.id}"]
    if isinstance(node.model, FallbackChain | ModelRoute) or \
            isinstance(node.model, LiteLlmEndpoint) and node.model.base_url:
        lines.append(f"model: {_model_line(node.model)}")
    if node.offline:
        lines.append("offline (background job)")
    tools = _tools(node)
    if tools:
        lines.append("tools: " + ", ".join(tools))
    if node.filesystem is not None:
        definition = node.filesystem.definitions[node.filesystem.backend]
        backend: str = definition.type
        sandbox = definition if isinstance(definition, SandboxDef) else None
        if sandbox is not None and sandbox.network:
            backend += " · network"
        if isinstance(definition, StoreDef) and definition.scope == "app":
            backend += " · shared by every user"
        runs = " · runs commands" if "execute" in node.filesystem.tools else ""
        lines.append(f"backend: {node.filesystem.backend} ({backend}){runs}")
        mounts = [mount.target for mount in (sandbox.mounts or () if sandbox else ())]
        if mounts:
            lines.append("read-only mounts: " + ", ".join(mounts))
    if node.skills:
        lines.append("skills: " + ", ".join(node.skills))
    if node.memory:
        lines.append("memory: " + ", ".join(node.memory))
    if node.tool_errors != "return":
        lines.append(f"tool errors: {node.tool_errors}")
    if node.code_executor is not None:
        lines.append(f"code blocks: {node.code_executor.label}")
    return lines


def _model_line(model: ModelNode) -> str:
    """A model as one line: its id and server, or what a chain or route calls."""
    if isinstance(model, PlainModel):
        return model.id
    if isinstance(model, LiteLlmEndpoint):
        return model.id + (f" @ {redacted(model.base_url)}" if model.base_url else "")
    shown = {name: f"{name} ({_model_line(member)})" for name, member in model.members.items()}
    if isinstance(model, FallbackChain):
        return " -> ".join(shown[name] for name in model.order)
    how = f"python {model.python.ref}" if model.python else f"state {model.state}"
    return f"route by {how} over {', '.join(shown[n] for n in model.choices)}" + (
        f", then {' -> '.join(shown[n] for n in model.fallback)}" if model.fallback else "")


def _tools(node: LlmFields) -> list[str]:
    """The tools the graph lists (agents called as tools are edges)."""
    gated = {name for name, _ in node.approvals.items()} | {
        t.name for t in node.tools
        if isinstance(t, PythonToolNode | McpToolNode | OpenApiToolNode) and t.approval}
    names = [t.name or t.python.attr if isinstance(t, PythonToolNode) else
             _openapi_label(t, gated) if isinstance(t, OpenApiToolNode) else t.name
             for t in node.tools if not isinstance(t, AgentToolNode)]
    names += list(node.filesystem.tools) if node.filesystem else []
    names += list(TODO_TOOLS) if node.todos else []
    names += ["task"] if node.task else []
    return [f"{n} (approval)" if n in gated else n for n in names]


def _openapi_label(tool: OpenApiToolNode, gated: set[str]) -> str:
    """`name (openapi: operation, ...)`, each operation as the model sees it."""
    shown = [f"{tool.prefix}_{o}" if tool.prefix else o for o in tool.called]
    return f"{tool.name or tool.document} (openapi: " + ", ".join(
        f"{n} (approval)" if n in gated else n for n in shown) + ")"


def models(node: LlmFields) -> tuple[ModelNode | None]:
    return (node.model,)


def tools(node: LlmFields) -> tuple[ToolNode, ...]:
    return node.tools


def as_llm(node: LlmFields) -> LlmFields:
    return node


def example(name: str, model: str, children: tuple[str, ...]) -> dict[str, Any]:
    return {"kind": name, "model": model, "instruction": "Answer.",
            **({"sub_agents": list(children)} if children else {})}


def answers(name: str, text: str) -> dict[str, list[dict[str, Any]]]:
    return {name: [{"text": text}]}


KIND: Kind[LlmAgent, LlmNode] = Kind(
    names=("llm",), spec=(LlmAgent,), node=LlmNode, name_of=lambda node: "llm", check=check,
    lower=lower, plan=plan, models=models, tools=tools, as_llm=as_llm, label=label,
    edge=lambda node: "sub-agent", example=example, answers=answers, references=Kind.none,
    python_refs=Kind.nothing, instructions=Kind.nothing, plan_state=None, tools_at=("tools",),
    model_agents=Kind.nothing, runs_agents=Kind.none, marks=Kind.nothing)
