"""Planning: the agent tree -> constructor calls in dependency order (children first)."""

from __future__ import annotations

import builtins
import keyword
from dataclasses import dataclass, field
from pathlib import PurePath as FsPath
from typing import Any

from agentspec.ir.plan import (
    Binding,
    Call,
    DictOf,
    Env,
    Import,
    ListOf,
    Plan,
    Ref,
    SpecPath,
    Value,
)
from agentspec.ir.tree import (
    AgentNode,
    AppNode,
    Approval,
    Compaction,
    FilesystemNode,
    JobsNode,
    ModelNode,
    PyObject,
    Schema,
    ToolNode,
)
from agentspec.runtime.placeholders import needs_template

__all__ = ["plan"]

LLM_AGENT = Import("google.adk.agents", "LlmAgent")
APP = Import("google.adk.apps", "App")
WORKFLOWS = {kind: Import("agentspec.runtime.workflows", kind)
             for kind in ("sequential", "parallel", "loop")}
EXPAND = Import("agentspec.runtime.env", "expand")
MODEL_ROUTING = "agentspec.runtime.model_routing"
TEMPLATE = Import("agentspec.runtime.instructions", "template")
GENERATE = Import("google.genai", "types.GenerateContentConfig")
THINKING = Import("google.genai", "types.ThinkingConfig")
PLANNERS = {"plan_react": Import("google.adk.planners", "PlanReActPlanner"),
            "builtin": Import("google.adk.planners", "BuiltInPlanner")}
_THINKING_FIELDS = {"budget": "thinking_budget", "include_thoughts": "include_thoughts",
                    "level": "thinking_level"}
_RESERVED = {"app", "root_agent", "annotations", *dir(builtins)}


def lit(value: Any) -> Value:
    """Spec data as a plan value; strings with `${env.X}` (or `$${`) are read at load time."""
    if isinstance(value, str):
        return Env(value) if "${env." in value or "$${" in value else value
    if isinstance(value, (list, tuple)):
        return ListOf(tuple(lit(v) for v in value))
    if isinstance(value, dict):
        return DictOf(tuple((str(k), lit(v)) for k, v in value.items()))
    return value  # type: ignore[no-any-return]


def _kwargs(**values: Value) -> tuple[tuple[str, Value], ...]:
    """Keyword arguments, leaving out the ones that are unset."""
    return tuple((k, v) for k, v in values.items() if v is not None)


def python_object(obj: PyObject) -> Value:
    symbol = Import(obj.module, obj.attr)
    if obj.args is None:
        return symbol
    return Call(symbol, tuple((k, lit(v)) for k, v in obj.args))


def model_value(model: ModelNode | None) -> Value:
    """An agent's `model=`: an id for ADK's registry, else a model object."""
    if model is None:
        return None
    if model.provider == "adk":
        return lit(model.id)
    return model_object(model)


def model_object(model: ModelNode) -> Value:
    """A model object (chains and routes hold objects, not ids)."""
    if model.provider == "adk":
        return Call(Import("agentspec.runtime.models", "registry_model"), args=(lit(model.id),))
    if model.provider == "litellm":
        return Call(Import("agentspec.runtime.models", "litellm"), args=(lit(model.id),),
                    kwargs=_kwargs(base_url=lit(model.base_url), api_key=lit(model.api_key),
                                   **{k: lit(v) for k, v in model.args}))
    members = DictOf(tuple((name, model_object(member)) for name, member in model.members))
    if model.provider == "fallback":
        return Call(Import(MODEL_ROUTING, "fallback"), _kwargs(
            name=model.id, models=members, order=lit(list(model.fallback))))
    return Call(Import(MODEL_ROUTING, "routed"), _kwargs(
        name=model.id, models=members, choices=lit(list(model.choices)),
        fallback=lit(list(model.fallback)) if model.fallback else None,
        state=lit(model.route_state),
        map=lit(dict(model.route_map)) if model.route_map is not None else None,
        function=python_object(model.route_python) if model.route_python else None))


def routes_models(model: ModelNode | None) -> bool:
    """Whether calls through `model` pick by route (they need each call's context)."""
    return model is not None and (model.provider == "route" or any(
        routes_models(member) for _, member in model.members))


def instruction_value(text: str | None, *, verbatim: bool = False) -> Value:
    """An instruction; `verbatim` text (from a file) is not an `${env.X}` template."""
    if text is None:
        return None
    value = text if verbatim else lit(text)
    return Call(TEMPLATE, args=(value,)) if needs_template(text) else value


def _generate_config(node: AgentNode) -> Value:
    return generate_config(node.generate, node.thinking,
                           with_thinking=node.planner != "builtin")


def generate_config(generate: tuple[tuple[str, Any], ...],
                    thinking_settings: tuple[tuple[str, Any], ...], *,
                    with_thinking: bool = True) -> Value:
    """A GenerateContentConfig call for a model's settings (None when there are none)."""
    settings = dict(generate)
    thinking = {_THINKING_FIELDS[k]: (v.upper() if k == "level" else v)
                for k, v in thinking_settings}
    if with_thinking and thinking:
        settings["thinking_config"] = Call(THINKING, _kwargs(**{k: lit(v)
                                                                for k, v in thinking.items()}))
    if not settings:
        return None
    return Call(GENERATE, tuple((k, v if isinstance(v, Call) else lit(v))
                                for k, v in settings.items()))


def _planner(node: AgentNode) -> Value:
    if node.planner is None:
        return None
    if node.planner == "plan_react":
        return Call(PLANNERS["plan_react"])
    thinking = {_THINKING_FIELDS[k]: (v.upper() if k == "level" else v) for k, v in node.thinking}
    return Call(PLANNERS["builtin"], _kwargs(thinking_config=Call(
        THINKING, tuple((k, lit(v)) for k, v in thinking.items()))))


def _schema(schema: Schema | None, name: str, *, model_needed: bool) -> Value:
    if schema is None:
        return None
    if schema.python is not None:
        return python_object(schema.python)
    if model_needed:
        factory = Import("agentspec.runtime.schemas", "model_from_json_schema")
        return Call(factory, args=(name, lit(schema.json)))
    return lit(schema.json)


def _mcp_tool(tool: ToolNode) -> Value:
    spec = tool.mcp
    server = spec.mcp
    # the defining modules: the package hides these names when `mcp` is not installed
    module = "google.adk.tools.mcp_tool.mcp_session_manager"
    if hasattr(server, "command"):
        cwd = tool.mcp_cwd
        params = Call(Import("mcp", "StdioServerParameters"), _kwargs(
            command=lit(server.command), args=lit(server.args), env=lit(server.env),
            cwd=None if cwd is None else SpecPath(cwd)))
        connection = Call(Import(module, "StdioConnectionParams"), _kwargs(
            server_params=params, timeout=server.timeout))
    else:
        kind = "SseConnectionParams" if server.transport == "sse" else \
            "StreamableHTTPConnectionParams"
        connection = Call(Import(module, kind), _kwargs(
            url=lit(server.url), headers=lit(server.headers), timeout=server.timeout))
    return Call(Import("google.adk.tools.mcp_tool.mcp_toolset", "McpToolset"), _kwargs(
        connection_params=connection, tool_filter=lit(spec.filter),
        tool_name_prefix=lit(spec.prefix)))


APPROVALS = "agentspec.runtime.harness.approvals"
TOOL_ERROR_RESULT = Import("agentspec.runtime.tool_errors", "error_result")
MCP_ERRORS = Import("agentspec.runtime.tool_errors", "mcp_errors")
DELEGATION = "agentspec.runtime.jobs.delegation"
JOBS = Ref("offline_jobs")  # the one JobSettings of an app with offline agents


def _approval(approval: Approval) -> DictOf:
    return DictOf(tuple((k, lit(v)) for k, v in _kwargs(
        decisions=ListOf(approval.decisions), hint=approval.hint)))


def _gated(value: Value, approval: Approval | None) -> Value:
    if approval is None:
        return value
    return Call(Import(APPROVALS, "gated"), args=(value, _approval(approval)))


def _definitions(filesystem: FilesystemNode) -> DictOf:
    return DictOf(tuple(
        (name, DictOf(tuple((key, SpecPath(value) if key == "root" else lit(value))
                            for key, value in definition.items())))
        for name, definition in filesystem.definitions))


def _file_toolset(filesystem: FilesystemNode) -> Call:
    return Call(Import("agentspec.runtime.harness.filesystem", "file_toolset"), _kwargs(
        backend=filesystem.backend, definitions=_definitions(filesystem),
        tools=lit(list(filesystem.tools))))


def _evicts_to_artifacts(node: AgentNode) -> bool:
    """Large results go to artifacts when the agent cannot `read_file` them back; it then
    needs `load_artifacts` (unless it lists it already)."""
    if node.result_limit is None:
        return False
    if node.filesystem is not None and "read_file" in node.filesystem.tools:
        return False
    return not any(t.kind == "builtin" and t.name == "load_artifacts" for t in node.tools)


def _result_limit(node: AgentNode) -> Call:
    """Eviction of large results: to the agent's backend, else to session artifacts."""
    readable = node.filesystem is not None and "read_file" in node.filesystem.tools
    backend = None if not readable or node.filesystem is None else Call(
        Import("agentspec.runtime.harness.filesystem", "backend_factory"),
        args=(node.filesystem.backend, _definitions(node.filesystem)))
    return Call(Import("agentspec.runtime.harness.results", "result_limit_callback"),
                args=(node.result_limit,), kwargs=_kwargs(backend=backend))


def _dispatches_tasks(node: AgentNode) -> bool | None:
    """ADK runs `mode: task` sub-agents from the parent's node, which must be re-runnable;
    ADK marks an agent so when it builds it as a node, but not the agent a transfer
    reaches, whose delegations then fail."""
    return True if any(child.mode == "task" for child in node.children) else None


@dataclass
class _Planner:
    bindings: list[Binding] = field(default_factory=list)
    taken: set[str] = field(default_factory=lambda: set(_RESERVED))

    def variable(self, name: str) -> str:
        """A Python variable for agent `name`: its own name when free, else a suffix."""
        candidate = name if not keyword.iskeyword(name) else f"{name}_agent"
        base, number = candidate, 2
        while candidate in self.taken or keyword.iskeyword(candidate):
            candidate, number = f"{base}_{number}", number + 1
        self.taken.add(candidate)
        return candidate

    def tool(self, tool: ToolNode, sub_agents: list[Value]) -> Value:
        if tool.kind == "python":
            assert tool.python is not None
            return _gated(python_object(tool.python), tool.approval)
        if tool.kind == "builtin":
            return Import("google.adk.tools", tool.name)
        if tool.kind == "mcp":
            return _gated(_mcp_tool(tool), tool.approval)
        assert tool.agent is not None  # called as a tool: a single_turn / task sub-agent
        if tool.agent.offline:  # the call queues a job; workers run the agent
            return Call(Import(DELEGATION, "OfflineAgentTool"),
                        args=(self.agent(tool.agent), JOBS))
        sub_agents.append(self.agent(tool.agent))
        return None

    def callbacks(self, node: AgentNode, *, tools: bool = False) -> dict[str, Value]:
        """The agent's callbacks; `tools`: an LLM agent's, with the harness's tool hooks."""
        hooks: dict[str, list[Value]] = {
            hook: [python_object(o) for o in objects] for hook, objects in node.callbacks}
        if tools and node.tool_errors == "return":  # last: the spec's own decide first
            hooks["on_tool_error"] = [*hooks.get("on_tool_error", []), TOOL_ERROR_RESULT]
        if node.memory:  # first, so the user's own before_model callbacks see the memory too
            memory = Call(Import("agentspec.runtime.harness.memory", "memory_callback"),
                          args=(ListOf(tuple(SpecPath(p) for p in node.memory)),),
                          kwargs=(("names", lit(list(node.memory))),
                                  ("edit_at", lit(list(node.memory_edit_at)))))
            hooks["before_model"] = [memory, *hooks.get("before_model", [])]
        approvals = [a for _, a in node.approvals] + [t.approval for t in node.tools if t.approval]
        if approvals:  # first: nothing, not even the user's callbacks, sees an unapproved call
            gate = Call(Import(APPROVALS, "approval_gate"), args=(DictOf(tuple(
                (name, _approval(approval)) for name, approval in node.approvals)),))
            hooks["before_tool"] = [gate, *hooks.get("before_tool", [])]
        editable = any("edit" in a.decisions for a in approvals)
        mcp = tools and any(t.kind == "mcp" for t in node.tools)
        rewrites = ([Call(MCP_ERRORS, args=(node.tool_errors,))] if mcp else []) + (
            [Call(Import(APPROVALS, "edit_note"))] if editable else []) + (
            [_result_limit(node)] if node.result_limit is not None else [])
        if rewrites:  # last: ADK stops at a callback's replacement; piped, so each sees it
            rewrite = rewrites[0] if len(rewrites) == 1 else Call(
                Import("agentspec.runtime.harness.callbacks", "piped"), args=tuple(rewrites))
            hooks["after_tool"] = [*hooks.get("after_tool", []), rewrite]
        return {f"{hook}_callback": ListOf(tuple(values)) for hook, values in hooks.items()}

    def router(self, node: AgentNode, children: list[Value]) -> Call:
        route = node.route
        assert route is not None
        return Call(Import("agentspec.runtime.router", "router"), _kwargs(
            name=node.name, description=lit(node.description),
            sub_agents=ListOf(tuple(children)), state=lit(route.state),
            map=None if route.map is None else lit(dict(route.map)),
            function=None if route.python is None else python_object(route.python),
            model=model_value(route.model), instruction=lit(route.instruction),
            default=route.default, fallback=lit(list(route.fallback)) if route.fallback else None,
            mode=node.mode, **self.callbacks(node)))

    def planner(self, node: AgentNode) -> Call:
        plan = node.plan
        assert plan is not None
        called: list[Value] = []  # agents the workers call as tools
        tools = [v for t in plan.worker_tools if (v := self.tool(t, called)) is not None]
        tools += [Call(Import("agentspec.runtime.planner", "agent_tool"), args=(agent,))
                  for agent in called]
        return Call(Import("agentspec.runtime.planner", "planner"), _kwargs(
            name=node.name, description=lit(node.description), model=model_value(plan.model),
            instruction=lit(plan.instruction), max_depth=plan.max_depth,
            max_subtasks=plan.max_subtasks, worker_model=model_value(plan.worker_model),
            worker_instruction=lit(plan.worker_instruction),
            worker_tools=ListOf(tuple(tools)) if tools else None,
            synthesizer_model=model_value(plan.synthesizer_model),
            synthesizer_instruction=lit(plan.synthesizer_instruction),
            tool_errors=node.tool_errors if node.tool_errors != "return" else None,
            configs=DictOf(tuple((role, config) for role, generate, thinking in plan.settings
                                 if (config := generate_config(generate, thinking)) is not None))
            or None,
            mode=node.mode, **self.callbacks(node)))

    def agent(self, node: AgentNode) -> Ref:
        children: list[Value] = [self.agent(child) for child in node.children]
        if node.kind == "router":
            call = self.router(node, children)
        elif node.kind == "planner":
            call = self.planner(node)
        elif node.kind in WORKFLOWS:
            call = Call(WORKFLOWS[node.kind], _kwargs(
                name=node.name, description=lit(node.description),
                sub_agents=ListOf(tuple(children)), max_iterations=node.max_iterations,
                mode=node.mode, **self.callbacks(node)))
        else:
            tools = [v for t in node.tools if (v := self.tool(t, children)) is not None]
            if node.todos:
                tools += [Call(Import("agentspec.runtime.harness.callbacks", "HarnessTool"),
                               args=(Import("agentspec.runtime.harness.todos", name),))
                          for name in ("write_todos", "read_todos")]
            if node.filesystem is not None:
                tools.append(_file_toolset(node.filesystem))
            if _evicts_to_artifacts(node):
                tools.append(Import("google.adk.tools", "load_artifacts"))  # reads evictions
            if node.task:
                agents = DictOf(tuple((kind, self.agent(child)) for kind, child in node.task))
                queued = [kind for kind, child in node.task if child.offline]
                tools.append(Call(Import("agentspec.runtime.harness.task", "task_tool"),
                                  args=(agents,), kwargs=(
                                      ("offline", lit(queued)), ("jobs", JOBS)) if queued
                                  else ()))
            if any(t.agent is not None and t.agent.offline for t in node.tools) or any(
                    child.offline for _, child in node.task):
                tools.append(Call(Import(DELEGATION, "job_status_tool"), args=(JOBS,)))
            if node.skills:
                tools.append(Call(Import("agentspec.runtime.harness.skills", "skill_toolset"),
                                  args=(ListOf(tuple(SpecPath(d) for d in node.skills)),
                                        node.skill_discovery)))
            call = Call(LLM_AGENT, _kwargs(
                name=node.name, description=lit(node.description),
                model=model_value(node.model),
                instruction=instruction_value(node.instruction,
                                              verbatim=node.instruction_file is not None),
                static_instruction=lit(node.static_instruction),
                tools=ListOf(tuple(tools)) if tools else None,
                sub_agents=ListOf(tuple(children)) if children else None,
                mode=node.mode, generate_content_config=_generate_config(node),
                planner=_planner(node),
                output_schema=_schema(node.output_schema, "", model_needed=False),
                input_schema=_schema(node.input_schema, f"{node.name}_input",
                                     model_needed=True),
                output_key=lit(node.output_key), include_contents=node.include_contents,
                disallow_transfer_to_parent=node.disallow_transfer_to_parent,
                disallow_transfer_to_peers=node.disallow_transfer_to_peers,
                rerun_on_resume=_dispatches_tasks(node),
                **self.callbacks(node, tools=True)))
        var = self.variable(node.name)
        self.bindings.append(Binding(var, call, node.file, node.line))
        return Ref(var)

    def compaction(self, compaction: Compaction | None) -> Value:
        if compaction is None:
            return None
        model = compaction.model
        summarizer = None if model is None else model_object(model)
        filesystem = compaction.filesystem
        return Call(Import("agentspec.runtime.app", "compaction"), _kwargs(
            summarizer_model=summarizer, **dict(compaction.settings),
            history=lit(compaction.history),
            backend=filesystem.backend if filesystem else None,
            definitions=_definitions(filesystem) if filesystem else None))

    def jobs(self, jobs: JobsNode) -> Call:
        store: Value = lit(jobs.store) if jobs.sqlite_path is None else Call(
            Import(DELEGATION, "sqlite_url"), args=(
                jobs.sqlite_path if FsPath(jobs.sqlite_path).is_absolute()
                else SpecPath(jobs.sqlite_path),))
        return Call(Import(DELEGATION, "job_settings"), _kwargs(
            store=store, max_attempts=jobs.max_attempts, lease_seconds=jobs.lease_seconds,
            webhook=lit(jobs.webhook), headers=lit(dict(jobs.headers)) if jobs.headers
            else None))

    def app(self, node: AppNode) -> Plan:
        if node.jobs is not None:  # first: agents that delegate to offline agents refer to it
            self.taken.add(JOBS.var)
            self.bindings.append(Binding(JOBS.var, self.jobs(node.jobs)))
        root = self.agent(node.root)
        if root.var != "root_agent":
            self.bindings.append(Binding("root_agent", root))
        plugins = [python_object(p) for p in node.plugins]
        if node.jobs is not None:  # delivers finished jobs into their sessions
            plugins.insert(0, Call(Import(DELEGATION, "JobDelivery"), args=(JOBS,)))
        if any(routes_models(model) for model in _models(node)):
            plugins.insert(0, Call(Import(MODEL_ROUTING, "ModelCallContext")))
        if node.compaction is not None and node.compaction.history is not None:
            plugins.insert(0, Call(Import("agentspec.runtime.app", "history_scope")))
        if node.global_instruction is not None:
            plugins.insert(0, Call(
                Import("google.adk.plugins.global_instruction_plugin", "GlobalInstructionPlugin"),
                _kwargs(global_instruction=instruction_value(node.global_instruction))))
        if node.state:  # first: before anything runs, the session has its initial state
            plugins.insert(0, Call(Import("agentspec.runtime.state", "InitialState"),
                                   args=(lit(dict(node.state)),)))
        app = Call(APP, _kwargs(
            name=node.name, root_agent=Ref("root_agent"),
            plugins=ListOf(tuple(plugins)) if plugins else None,
            events_compaction_config=self.compaction(node.compaction),
            resumability_config=Call(Import("agentspec.runtime.app", "resumable"))
            if node.resumable else None))
        self.bindings.append(Binding("app", app))
        return Plan(node.name, node.description, node.spec_file, tuple(self.bindings),
                    node.module_dirs)


def _models(app: AppNode) -> list[ModelNode | None]:
    """Every model the app calls: agents', routers' classifiers, planners', the summarizer."""
    found: list[ModelNode | None] = [app.compaction.model if app.compaction else None]
    todo = [app.root]
    while todo:
        node = todo.pop()
        found.append(node.model)
        if node.route is not None:
            found.append(node.route.model)
        if node.plan is not None:
            found += [node.plan.model, node.plan.worker_model, node.plan.synthesizer_model]
            todo.extend(t.agent for t in node.plan.worker_tools if t.agent is not None)
        todo.extend(node.children)
        todo.extend(t.agent for t in node.tools if t.agent is not None)
        todo.extend(agent for _, agent in node.task)
    return found


def plan(app: AppNode) -> Plan:
    """The construction plan of `app`: agents children first, then `root_agent` and `app`."""
    return _Planner().app(app)
