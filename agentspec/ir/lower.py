"""Lowering: the checked spec -> the frozen agent tree, refusing what cannot be built yet."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path as FsPath

from agentspec.contract.backend_sources import backend_path
from agentspec.contract.backends import (
    BackendDef,
    FilesystemDef,
    StateDef,
    from_data,
    mount_points,
    reached,
)
from agentspec.contract.compaction import ByInvocations, ByTokens, CompactionSettings
from agentspec.contract.frozen import FrozenMap, UserData
from agentspec.contract.globs import permits
from agentspec.contract.harness_names import DECISIONS
from agentspec.contract.virtual_paths import normalize
from agentspec.diagnostics import Diagnostic, codes
from agentspec.ir.observing import lower_observing
from agentspec.ir.stores import store_data
from agentspec.ir.tree import (
    AgentNode,
    AgentToolNode,
    AppNode,
    Approval,
    BuiltinToolNode,
    Compaction,
    DeepNode,
    FallbackChain,
    FilesystemNode,
    JobsNode,
    LiteLlmEndpoint,
    LlmFields,
    LlmNode,
    McpHttp,
    McpStdio,
    McpToolNode,
    ModelNode,
    ModelRoute,
    OpenApiToolNode,
    PlainModel,
    PyObject,
    PythonToolNode,
    Schema,
    SessionsNode,
    ToolAuthNode,
    ToolNode,
)
from agentspec.kindapi import Common, Site, kind_for_spec
from agentspec.language import Spec
from agentspec.language.adk_settings import ToolAuth
from agentspec.language.agents import (
    Agent,
    InterruptConfig,
    LlmAgent,
    PythonSchema,
    SchemaRef,
    SkillsConfig,
)
from agentspec.language.deep_summary import default_summarization
from agentspec.language.document import (
    KEEP_EVENTS,
    KEEP_INVOCATIONS,
    FractionTrigger,
    Jobs,
    KeepEvents,
    KeepInvocations,
    TokensTrigger,
    initial_state,
    state_inputs,
)
from agentspec.language.effective import DEFAULT_STATE_BACKEND, Harness
from agentspec.language.models import FallbackModel, ModelDef, RoutedModel
from agentspec.language.tools import (
    AgentTool,
    BuiltinTool,
    McpRemote,
    McpTool,
    OpenApiTool,
    PythonTool,
    ToolEntry,
)
from agentspec.project_files import resolved
from agentspec.source import Span
from agentspec.validate.check import CheckResult
from agentspec.validate.semantic.openapi import document_names

__all__ = ["lower"]

#: the conversation store of a spec whose jobs resume their parent and that names none
DEFAULT_SESSIONS = "sqlite:///.agentspec/sessions.db"


@dataclass
class Lowering:
    spec: Spec
    result: CheckResult
    spec_dir: FsPath
    diagnostics: list[Diagnostic] = field(default_factory=list)
    module_dirs: set[str] = field(default_factory=set)
    resumable: bool = False  # some agent waits for approvals
    offline: bool = False  # some delegation queues a job

    # positions and files ---------------------------------------------------------------

    def span(self, *path: str | int) -> Span:
        assert self.result.document is not None
        return self.result.document.pos.value_span(path)

    def key_span(self, *path: str | int) -> Span:
        assert self.result.document is not None
        return self.result.document.pos.key_span(path)

    def directory(self, span: Span) -> FsPath:
        source = self.result.sources.get(span.file)
        return resolved(source.path if source else FsPath(span.file)).parent

    def relative(self, file: str) -> str:
        """A file as generated code names it: relative to the spec's directory, so the output
        does not depend on where `build` runs."""
        source = self.result.sources.get(file)
        path = resolved(source.path if source else FsPath(file))
        return FsPath(os.path.relpath(path, self.spec_dir)).as_posix()

    def python(self, ref: str, span: Span, args: dict[str, UserData] | None = None) -> PyObject:
        relative = os.path.relpath(self.directory(span), self.spec_dir)
        self.module_dirs.add(relative)
        return PyObject(ref, relative, FrozenMap(args) if args is not None else None)

    # models ----------------------------------------------------------------------------

    def model(self, value: str | None) -> tuple[ModelNode | None, dict[str, UserData],
                                                 dict[str, UserData]]:
        """The model a `model:` value names, with the generation and thinking settings of
        its definition."""
        if value is None:
            return None, {}, {}
        definition = (self.spec.models or {}).get(value)
        if isinstance(definition, ModelDef):
            generate = definition.generate.model_dump(exclude_none=True) \
                if definition.generate else {}
            thinking = definition.thinking.model_dump(exclude_none=True) \
                if definition.thinking else {}
            return self.model_node(value), generate, thinking
        return self.model_node(value), {}, {}

    def model_node(self, value: str, depth: int = 0) -> ModelNode:
        """The model a name from `models` (or a literal id) stands for; a chain's or a
        route's named models included (validate refused cycles)."""
        definition = (self.spec.models or {}).get(value)
        if isinstance(definition, ModelDef):
            if definition.provider == "adk":  # validate refused endpoint settings on it
                return PlainModel(definition.id)
            return LiteLlmEndpoint(id=definition.id, base_url=definition.base_url,
                                   api_key=definition.api_key,
                                   args=FrozenMap(definition.args or {}))
        if depth > len(self.spec.models or {}):
            raise RecursionError(f"model `{value}` refers to itself")
        if isinstance(definition, FallbackModel):
            names = tuple(definition.fallback)
            return FallbackChain(id=value, members=self.members(names, depth), order=names)
        if isinstance(definition, RoutedModel):
            route = definition.route
            choices, fallback = tuple(definition.models), tuple(definition.fallback or ())
            return ModelRoute(
                id=value, members=self.members(choices + fallback, depth), choices=choices,
                fallback=fallback, state=route.state,
                map=FrozenMap(route.map) if route.map is not None else None,
                python=None if route.python is None else self.python(
                    route.python, self.span("models", value, "route", "python")))
        return PlainModel(definition if isinstance(definition, str) else value)

    def members(self, names: tuple[str, ...], depth: int) -> FrozenMap[str, ModelNode]:
        return FrozenMap((name, self.model_node(name, depth + 1))
                         for name in dict.fromkeys(names))

    # tools -----------------------------------------------------------------------------

    def tool(self, owner: str, index: int, entry: ToolEntry, approvals: dict[str, Approval],
             where: tuple[str, ...] = ("tools",)) -> ToolNode:
        path: tuple[str | int, ...] = ("agents", owner, *where, index)
        name = ""
        if isinstance(entry, str):
            name, path = entry, ("tools", entry)
            entry = (self.spec.tools or {})[entry]
        approval = approvals.get(name) if name else None
        if isinstance(entry, PythonTool):
            return PythonToolNode(name=name, python=self.python(
                entry.python, self.span(*path, "python"), entry.args), approval=approval,
                auth=tool_auth(entry.auth))
        if isinstance(entry, McpTool):
            server = entry.mcp
            connection: McpStdio | McpHttp
            if isinstance(server, McpRemote):
                connection = McpHttp(url=server.url, transport=server.transport,
                                     headers=None if server.headers is None
                                     else FrozenMap(server.headers), timeout=server.timeout)
            else:
                cwd = server.cwd  # literal: validate refuses `${...}`
                connection = McpStdio(
                    command=server.command, args=tuple(server.args),
                    env=None if server.env is None else FrozenMap(server.env),
                    cwd=None if cwd is None else self.spec_relative(cwd, *path, "mcp", "cwd"),
                    timeout=server.timeout)
            return McpToolNode(name=name, server=connection,
                               filter=None if entry.filter is None else tuple(entry.filter),
                               prefix=entry.prefix, approval=approval,
                               auth=tool_auth(entry.auth))
        if isinstance(entry, OpenApiTool):
            return OpenApiToolNode(
                name=name, document=self.spec_relative(entry.openapi, *path, "openapi"),
                offered=self.offered(entry, *path), operations=None if entry.operations is None
                else tuple(entry.operations), prefix=entry.prefix, server=entry.server,
                private_network=entry.private_network, approval=approval,
                auth=tool_auth(entry.auth))
        if isinstance(entry, BuiltinTool):
            return BuiltinToolNode(name=entry.builtin)
        assert isinstance(entry, AgentTool)
        return AgentToolNode(agent=self.agent(entry.agent, as_tool=True))

    # agents ----------------------------------------------------------------------------

    def instruction(self, name: str, agent: LlmAgent) -> str | None:
        if agent.instruction_file is None:
            return agent.instruction
        span = self.span("agents", name, "instruction_file")
        target = self.directory(span) / agent.instruction_file
        project = self.result.project
        if project is not None and project.judge(target) == "outside":  # changed since check
            self.diagnostics.append(codes.PATH_OUTSIDE_PROJECT(
                f"the instruction file `{agent.instruction_file}` is outside the project", span))
            return None
        # validate read it (and reported a file it could not read): never a second read
        for source in self.result.sources.values():
            if source.path == target:
                return source.text
        self.diagnostics.append(codes.PATH_NOT_FOUND(
            f"the instruction file `{agent.instruction_file}` was not read", span))
        return None

    def spec_relative(self, entry: str, *path: str | int) -> str:
        """`entry`, written at `path` relative to its own file, relative to the spec's
        directory instead (an absolute path, which `outside_project` may allow, stays
        absolute: it does not move with the project)."""
        if os.path.isabs(entry):
            return FsPath(os.path.normpath(entry)).as_posix()
        written_in = self.directory(self.span(*path))
        return FsPath(os.path.relpath(written_in / entry, self.spec_dir)).as_posix()

    def offered(self, entry: OpenApiTool, *path: str | int) -> tuple[str, ...]:
        """The tool names of the OpenAPI document of the tool at `path`, from the text
        validate read (never a second read)."""
        target = self.directory(self.span(*path, "openapi")) / entry.openapi
        text = next((s.text for s in self.result.sources.values() if s.path == target), None)
        return () if text is None else document_names(text, target)

    def memory(self, name: str, agent: LlmAgent) -> tuple[str, ...]:
        """Host files relative to the spec's directory; `backend:/path` entries as written
        (the agent's backend reads them)."""
        return tuple(entry if backend_path(entry) is not None else
                     self.spec_relative(entry, "agents", name, "memory", index)
                     for index, entry in enumerate(agent.memory or ()))

    def skills(self, name: str, agent: LlmAgent) -> tuple[tuple[str, ...], str]:
        setting = agent.skills
        if setting is None:
            return (), "lazy"
        where: tuple[str, ...] = ("skills",)
        if isinstance(setting, SkillsConfig):
            entries, where, discovery = setting.paths, ("skills", "paths"), setting.discovery
        else:
            entries, discovery = setting, "lazy"
        directories = tuple(entry if backend_path(entry) is not None else
                            self.spec_relative(entry, "agents", name, *where, index)
                            for index, entry in enumerate(entries))
        return directories, discovery

    def backend_definitions(self, name: str) -> FrozenMap[str, BackendDef]:
        """`name` and every backend it routes to, with spec-relative directories."""
        backends = self.spec.backends or {}
        found: dict[str, BackendDef] = {}
        for current in reached(name, backends):
            if current == DEFAULT_STATE_BACKEND:
                found[current] = StateDef(read=None, write=None)
                continue
            data = backends[current].model_dump(exclude_none=True)
            if data["type"] == "store":
                data = store_data(current, data, self.spec, self.spec_relative,
                                  self.sessions_default())
            if "root" in data:
                data["root"] = self.spec_relative(data["root"], "backends", current, "root")
            for index, mount in enumerate(data.get("mounts", ())):
                mount["source"] = self.spec_relative(mount["source"], "backends", current,
                                                     "mounts", index, "source")
            found[current] = from_data(data)
        return FrozenMap(found)

    def memory_edit_at(self, files: tuple[str, ...], kit: Harness,
                       filesystem: FilesystemNode | None) -> tuple[str | None, ...]:
        """Where the agent's file tools reach each memory file (None: nowhere); only a
        writable directory backend (or a composite route to one) can."""
        if filesystem is None or not {"write_file", "edit_file"} & set(kit.file_tools):
            return tuple(None for _ in files)
        in_backend = [backend_path(file) for file in files]
        if any(in_backend):  # edited where they are read: through the same file tools
            hosted = iter(self.memory_edit_at(
                tuple(f for f, at in zip(files, in_backend, strict=True) if at is None),
                kit, filesystem))
            return tuple(normalize(at) if at is not None else next(hosted)
                         for at in in_backend)
        definitions = filesystem.definitions
        mounts = [(prefix, target, definition.root)  # root: relative to the spec
                  for prefix, target in mount_points(filesystem.backend, definitions)
                  if isinstance(definition := definitions[target], FilesystemDef)]
        found: list[str | None] = []
        for file in files:
            where = None
            for prefix, target, root in sorted(mounts, key=lambda m: -len(m[0])):
                inside = os.path.relpath(os.path.normpath(self.spec_dir / file),
                                         os.path.normpath(self.spec_dir / root))
                if not inside.startswith(".."):
                    outer = prefix.rstrip("/") + "/" + FsPath(inside).as_posix()
                    # a `write` list that leaves the file out keeps it read-only
                    if permits(definitions[filesystem.backend].write, outer) and \
                            permits(definitions[target].write, "/" + FsPath(inside).as_posix()):
                        where = outer
                    break
            found.append(where)
        return tuple(found)

    def filesystem(self, kit: Harness) -> FilesystemNode | None:
        if kit.backend is None:
            return None
        return FilesystemNode(kit.backend, kit.file_tools,
                              self.backend_definitions(kit.backend))

    def schema(self, name: str, field_name: str, value: SchemaRef | None) -> Schema | None:
        if value is None:
            return None
        if isinstance(value, PythonSchema):
            return Schema(python=self.python(value.python,
                                             self.span("agents", name, field_name, "python")))
        return Schema(json=value)

    def callbacks(self, name: str, agent: Agent) -> FrozenMap[str, tuple[PyObject, ...]]:
        hooks = agent.callbacks.model_dump(exclude_none=True) if agent.callbacks else {}
        return FrozenMap((hook, tuple(self.python(ref, self.span("agents", name, "callbacks",
                                                                    hook, i))
                                      for i, ref in enumerate(refs)))
                         for hook, refs in hooks.items())

    def approvals(self, agent: LlmAgent) -> dict[str, Approval]:
        """`interrupt_on` by the names the entries go by: spec names (a python or MCP entry is
        gated as a whole by `tool()`) and the names the model sees."""
        found: dict[str, Approval] = {}
        for key, setting in (agent.interrupt_on or {}).items():
            if setting is False:
                continue
            found[key] = Approval(tuple(setting.decisions), setting.hint) \
                if isinstance(setting, InterruptConfig) else Approval(DECISIONS, None)
        owner = next((n for n, a in self.spec.agents.items() if a is agent), "")
        for index, entry in enumerate(agent.tools or ()):
            definition = (self.spec.tools or {}).get(entry) if isinstance(entry, str) else entry
            approval = found.get(entry) if isinstance(entry, str) else None
            if isinstance(definition, BuiltinTool) and approval:
                found.setdefault(definition.builtin, approval)
            elif isinstance(definition, AgentTool) and approval:
                found.setdefault(definition.agent, approval)
            elif isinstance(definition, McpTool | OpenApiTool) and definition.prefix:
                chosen = definition.filter if isinstance(definition, McpTool) \
                    else definition.operations or self.offered(definition, *(
                        ("tools", entry) if isinstance(entry, str) else
                        ("agents", owner, "tools", index)))
                for tool in chosen or ():  # approvals may name it unprefixed
                    if tool in found:
                        found.setdefault(f"{definition.prefix}_{tool}", found[tool])
        if found:
            self.resumable = True
        return found

    def agent(self, name: str, *, as_tool: bool = False, under_llm: bool = False) -> AgentNode:
        """Agent `name`: called as a tool (`as_tool`), or a sub-agent of an LLM agent
        (`under_llm`: its `mode` applies), or else run by a workflow, router or the app."""
        agent = self.spec.agents[name]
        span = self.key_span("agents", name)
        offline = agent.execution_mode == "offline"
        self.offline |= offline and as_tool
        names = [c for c in getattr(agent, "sub_agents", None) or () if isinstance(c, str)]
        # an LLM agent's offline single_turn / task sub-agents are tools that queue jobs
        queued = [c for c in names if isinstance(agent, LlmAgent) and self.queues(c)]
        children = tuple(self.agent(c, under_llm=isinstance(agent, LlmAgent))
                         for c in names if c not in queued)
        common = Common(
            name=name, file=self.relative(span.file), line=span.start.line,
            description=agent.description, children=children,
            callbacks=self.callbacks(name, agent), offline=offline and as_tool)
        # called as a tool, an agent that is not an LLM agent answers its caller
        mode = "single_turn" if as_tool and not offline else None
        node: AgentNode = kind_for_spec(agent).lower(
            self, name, agent, Site(common, mode, as_tool, under_llm, tuple(queued)))
        return node

    def queues(self, name: str) -> bool:
        """Whether delegating to agent `name` as a sub-agent queues a job."""
        agent = self.spec.agents.get(name)
        return agent is not None and agent.execution_mode == "offline" and \
            getattr(agent, "mode", None) in ("single_turn", "task")

    def jobs(self) -> JobsNode | None:
        written = self.spec.jobs
        if written is None and not self.offline:
            return None
        settings = written or Jobs()  # the spec model's defaults, and no others
        store, sqlite_path = settings.store, None
        if store.startswith("sqlite:///") and "${" not in store:
            path = store.removeprefix("sqlite:///")
            sqlite_path = self.spec_relative(path, "jobs", "store") \
                if written is not None else path
        notify = settings.notify
        return JobsNode(store=store, sqlite_path=sqlite_path,
                        max_attempts=settings.max_attempts,
                        lease_seconds=settings.lease_seconds,
                        webhook=notify.webhook if notify else None,
                        headers=FrozenMap(notify.headers or {} if notify else {}),
                        on_done=settings.on_done)

    def sessions_default(self) -> str | None:
        """The conversation store a spec that names none gets: an SQLite file beside it for
        jobs that resume their parent, else none (in memory)."""
        jobs = self.spec.jobs
        return DEFAULT_SESSIONS if jobs is not None and jobs.on_done == "resume" else None

    def sessions(self, jobs: JobsNode | None) -> SessionsNode | None:
        """The spec's `sessions:`; else, for jobs that resume their parent (a worker must
        reach the conversation), an SQLite file beside the spec."""
        url = self.spec.sessions
        if url is None:
            if jobs is None or jobs.on_done != "resume":
                return None
            return SessionsNode(DEFAULT_SESSIONS, DEFAULT_SESSIONS.removeprefix("sqlite:///"))
        if url.startswith("sqlite:///") and "${" not in url:
            return SessionsNode(url, self.spec_relative(url.removeprefix("sqlite:///"),
                                                        "sessions"))
        return SessionsNode(url)

    def task(self, kit: Harness, node: LlmNode | DeepNode
             ) -> FrozenMap[str, AgentNode]:
        """The agents the `task` tool can start; `general-purpose` is the agent itself
        (instruction and every tool, its todo list its own), without `task`, which would
        let it start itself without end, and without sub-agents (transfers)."""
        if kit.task is None:
            return FrozenMap()
        agents = [(child, self.agent(child, as_tool=True)) for child in kit.task.agents]
        if kit.task.general_purpose:
            agents.append(("general-purpose", replace(
                node, name="general_purpose", children=(), mode="single_turn",
                description="A general-purpose agent with the same instructions and tools as "
                "its caller, for tasks that need no specialist.",
                disallow_transfer_to_parent=True, disallow_transfer_to_peers=True,
                output_key=None)))
        return FrozenMap(agents)

    # the app ---------------------------------------------------------------------------

    def compaction(self, root: AgentNode) -> Compaction | None:
        summary = default_summarization(self.spec)  # the spec's, or deep agents' default
        if summary is None:
            return None
        trigger, keep = summary.trigger, summary.keep
        settings: CompactionSettings
        if isinstance(trigger, (TokensTrigger, FractionTrigger)):
            threshold = trigger.tokens if isinstance(trigger, TokensTrigger) else int(
                trigger.fraction * min(self.context_windows()))
            retained = keep.events if isinstance(keep, KeepEvents) else KEEP_EVENTS
            settings = ByTokens(token_threshold=threshold, event_retention_size=retained)
        else:
            overlap = keep.invocations if isinstance(keep, KeepInvocations) \
                else KEEP_INVOCATIONS
            settings = ByInvocations(compaction_interval=trigger.invocations,
                                     overlap_size=overlap)
        llm = root if isinstance(root, LlmFields) else None
        model = self.model(summary.model)[0] if summary.model is not None else \
            llm.model if llm else None
        filesystem = llm.filesystem if llm and summary.history is not None else None
        return Compaction(settings, model, history=summary.history, filesystem=filesystem)

    def context_windows(self) -> list[int]:
        windows = [m.context_window for m in (self.spec.models or {}).values()
                   if isinstance(m, ModelDef) and m.context_window]
        return windows or [1]

    def app(self, root_name: str) -> AppNode:
        root = self.agent(root_name)
        jobs = self.jobs()
        plugins = tuple(self.python(p.python, self.span("plugins", i, "python"), p.args)
                        for i, p in enumerate(self.spec.plugins or ()))
        return AppNode(
            name=self.spec.name, description=self.spec.description,
            spec_file=self.result.path.name, root=root, plugins=plugins,
            global_instruction=self.spec.global_instruction, compaction=self.compaction(root),
            state=FrozenMap(initial_state(self.spec)),
            inputs=FrozenMap(state_inputs(self.spec)),
            resumable=self.resumable, jobs=jobs, sessions=self.sessions(jobs),
            module_dirs=tuple(sorted(self.module_dirs)),
            context_cache=None if self.spec.context_cache is None else FrozenMap(
                self.spec.context_cache.model_dump(exclude_none=True)),
            outside_project=tuple(
                self.spec_relative(entry, "outside_project", index)
                for index, entry in enumerate(self.spec.outside_project or ())),
            observing=lower_observing(self.spec))


def tool_auth(auth: ToolAuth | None) -> ToolAuthNode | None:
    if auth is None:
        return None
    (kind, settings), = auth.model_dump(exclude_none=True).items()
    if not isinstance(settings, dict):
        return ToolAuthNode(kind, FrozenMap({"value": settings}))
    scopes = settings.pop("scopes", None)
    return ToolAuthNode(kind, FrozenMap(settings),
                        FrozenMap(scopes) if isinstance(scopes, dict) else None,
                        tuple(scopes) if isinstance(scopes, list) else None)


def lower(result: CheckResult) -> tuple[AppNode | None, list[Diagnostic]]:
    """The agent tree of a checked spec; None (with diagnostics) when it cannot be built."""
    if not result.ok or result.spec is None or result.root is None:
        return None, []
    lowering = Lowering(result.spec, result, resolved(result.path).parent)
    app = lowering.app(result.root)
    if lowering.diagnostics:
        return None, lowering.diagnostics
    return app, []
