"""Planning: the agent tree -> constructor calls in dependency order (children first)."""

from __future__ import annotations

import keyword
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePath as FsPath
from typing import assert_never

from agentspec.contract.compaction import compaction_kwargs
from agentspec.ir.observing_plan import observer_call
from agentspec.ir.plan import Binding, Call, Import, ListOf, Plan, Ref, SpecPath, Value
from agentspec.ir.tree import (
    AgentNode,
    AgentToolNode,
    AppNode,
    BuiltinToolNode,
    Compaction,
    JobsNode,
    McpToolNode,
    ModelNode,
    OpenApiToolNode,
    PythonToolNode,
    ToolNode,
    agents_called,
)
from agentspec.ir.values import (
    APP,
    DELEGATION,
    JOBS,
    MODEL_ROUTING,
    RESERVED,
    backend_definitions,
    context_cache_value,
    gated,
    instruction_value,
    kwargs,
    lit,
    mcp_toolset,
    model_object,
    openapi_toolset,
    python_object,
    python_tool,
    routes_models,
)
from agentspec.kindapi import kind_for

__all__ = ["plan"]


@dataclass
class PlanBuilder:
    bindings: list[Binding] = field(default_factory=list)
    taken: set[str] = field(default_factory=lambda: set(RESERVED))

    def variable(self, name: str) -> str:
        """A Python variable for agent `name`: its own name when free, else a suffix."""
        candidate = name if not keyword.iskeyword(name) else f"{name}_agent"
        base, number = candidate, 2
        while candidate in self.taken or keyword.iskeyword(candidate):
            candidate, number = f"{base}_{number}", number + 1
        self.taken.add(candidate)
        return candidate

    def tool(self, tool: ToolNode, sub_agents: list[Value]) -> Value:
        match tool:
            case PythonToolNode():
                return gated(python_tool(tool), tool.approval)
            case BuiltinToolNode():
                return Import("google.adk.tools", tool.name)
            case McpToolNode():
                return gated(mcp_toolset(tool), tool.approval)
            case OpenApiToolNode():
                return gated(openapi_toolset(tool), tool.approval)
            case AgentToolNode():  # a single_turn / task sub-agent, or a queued job
                if tool.agent.offline:  # the call queues a job; workers run the agent
                    return Call(Import(DELEGATION, "OfflineAgentTool"),
                                args=(self.agent(tool.agent), JOBS))
                sub_agents.append(self.agent(tool.agent))
                return None
            case _:
                assert_never(tool)

    def callbacks(self, node: AgentNode,
                  hooks: dict[str, list[Value]] | None = None) -> dict[str, Value]:
        """The agent's callbacks, as keyword arguments; `hooks`: the agent's own, with the
        ones its kind adds (else the spec's)."""
        if hooks is None:
            hooks = self.hooks(node)
        return {f"{hook}_callback": ListOf(tuple(values)) for hook, values in hooks.items()}

    @staticmethod
    def hooks(node: AgentNode) -> dict[str, list[Value]]:
        """The callbacks the spec gives the agent, by hook."""
        return {hook: [python_object(o) for o in objects]
                for hook, objects in node.callbacks.items()}

    def agent(self, node: AgentNode) -> Ref:
        children: list[Value] = [self.agent(child) for child in node.children]
        call = kind_for(node).plan(self, node, children)
        var = self.variable(node.name)
        self.bindings.append(Binding(var, call, node.file, node.line))
        return Ref(var)

    def compaction(self, compaction: Compaction | None) -> Value:
        if compaction is None:
            return None
        model = compaction.model
        summarizer = None if model is None else model_object(model)
        filesystem = compaction.filesystem
        return Call(Import("agentspec.runtime.app", "compaction"), kwargs(
            summarizer_model=summarizer, **compaction_kwargs(compaction.settings),
            history=lit(compaction.history),
            backend=filesystem.backend if filesystem else None,
            definitions=backend_definitions(filesystem) if filesystem else None))

    def jobs(self, jobs: JobsNode) -> Call:
        store: Value = lit(jobs.store) if jobs.sqlite_path is None else Call(
            Import(DELEGATION, "sqlite_url"), args=(
                jobs.sqlite_path if FsPath(jobs.sqlite_path).is_absolute()
                else SpecPath(jobs.sqlite_path),))
        return Call(Import(DELEGATION, "job_settings"), kwargs(
            store=store, max_attempts=jobs.max_attempts, lease_seconds=jobs.lease_seconds,
            on_done=jobs.on_done, webhook=lit(jobs.webhook),
            headers=lit(dict(jobs.headers)) if jobs.headers else None))

    @staticmethod
    def a2a_app(node: AppNode) -> Call:
        """`uvicorn pkg.agent:a2a_app` serves the app over A2A; made when first served (the
        package imports without a2a-sdk), with the spec's conversation store: an SQLite
        file, or a URL read from the environment then. A URL the spec writes out is not
        written into the package (it may hold a password): AGENTSPEC_SESSIONS must give it."""
        store = node.sessions
        sessions: Value = None
        if store is not None and store.sqlite_path is not None:
            sessions = Call(Import(DELEGATION, "sqlite_url"), args=(
                store.sqlite_path if FsPath(store.sqlite_path).is_absolute()
                else SpecPath(store.sqlite_path),))
        elif store is not None and "${env." in store.url:
            sessions = store.url  # its `${env.X}` are read when served, not when imported
        return Call(Import("agentspec.runtime.a2a_serve", "a2a_server"), args=(Ref("app"),),
                    kwargs=kwargs(sessions=sessions, store_elsewhere=True if store is not None
                                  and sessions is None else None))

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
        if any(routes_models(model) for model in app_models(node)):
            plugins.insert(0, Call(Import(MODEL_ROUTING, "ModelCallContext")))
        if node.compaction is not None:  # the run a summary's history, or a failure after
            # the turn, belongs to
            plugins.insert(0, Call(Import("agentspec.runtime.app", "history_scope")))
        if node.global_instruction is not None:
            plugins.insert(0, Call(
                Import("google.adk.plugins.global_instruction_plugin", "GlobalInstructionPlugin"),
                kwargs(global_instruction=instruction_value(node.global_instruction))))
        if node.state or node.inputs:  # first: before anything runs, the session has its
            # initial state, and what its creator must supply is there
            plugins.insert(0, Call(Import("agentspec.runtime.state", "InitialState"),
                                   args=(lit(dict(node.state)),),
                                   kwargs=kwargs(required=lit(dict(node.inputs))
                                                 if node.inputs else None)))
        observer = observer_call(node)
        if observer is not None:  # first: its spans and budget see every other plugin's work
            plugins.insert(0, observer)
        # calls an earlier run left unanswered are answered ("cancelled") before any model call
        plugins.append(Call(Import("agentspec.runtime.dangling", "PatchDanglingCalls")))
        # a failed model or tool call names the agent, the model and its endpoint, or the
        # user's function
        plugins.append(Call(Import("agentspec.runtime.blame", "Blame")))
        app = Call(APP, kwargs(
            name=node.name, root_agent=Ref("root_agent"),
            plugins=ListOf(tuple(plugins)),
            events_compaction_config=self.compaction(node.compaction),
            resumability_config=Call(Import("agentspec.runtime.app", "resumable"))
            if node.resumable else None,
            context_cache_config=context_cache_value(node.context_cache)))
        self.bindings.append(Binding("app", app))
        self.bindings.append(Binding("a2a_app", self.a2a_app(node)))
        return Plan(node.name, node.description, node.spec_file, tuple(self.bindings),
                    node.module_dirs)


def app_models(app: AppNode) -> Iterator[ModelNode | None]:
    """Every model the app calls: agents', routers' classifiers, planners', the summarizer."""
    if app.compaction is not None:
        yield app.compaction.model
    seen: set[int] = set()
    todo: list[AgentNode] = [app.root]
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield from kind_for(node).models(node)
        todo.extend(agents_called(node))


def plan(app: AppNode) -> Plan:
    """The construction plan of `app`: agents children first, then `root_agent` and `app`."""
    return PlanBuilder().app(app)
