"""Spec data and parts of the agent tree as plan values: the pieces planning and each
kind's own planning (`agentspec.kinds`) put together."""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Any, assert_never

from agentspec.contract.backends import to_data
from agentspec.contract.placeholders import needs_template
from agentspec.ir.plan import Call, DictOf, Env, Import, ListOf, Ref, SpecPath, Value
from agentspec.ir.tree import (
    AgentNode,
    Approval,
    CodeExecutorNode,
    FallbackChain,
    FilesystemNode,
    LiteLlmEndpoint,
    LlmFields,
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
    ToolAuthNode,
    members_of,
)

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
THINKING_FIELDS = {"budget": "thinking_budget", "include_thoughts": "include_thoughts",
                    "level": "thinking_level"}
RESERVED = {"app", "root_agent", "a2a_app", "annotations", *dir(builtins)}


def lit(value: Any) -> Value:
    """Spec data as a plan value; strings with `${env.X}` (or `$${`) are read at load time."""
    if isinstance(value, str):
        return Env(value) if "${env." in value or "$${" in value else value
    if isinstance(value, (list, tuple)):
        return ListOf(tuple(lit(v) for v in value))
    if isinstance(value, dict):
        return DictOf(tuple((str(k), lit(v)) for k, v in value.items()))
    return value  # type: ignore[no-any-return]


def kwargs(**values: Value) -> tuple[tuple[str, Value], ...]:
    """Keyword arguments, leaving out the ones that are unset."""
    return tuple((k, v) for k, v in values.items() if v is not None)


TOOL_AUTH = "agentspec.runtime.tool_auth"


def auth_values(auth: ToolAuthNode) -> tuple[Call, Call]:
    """The auth scheme and credential of a tool's `auth` (secrets read at load time)."""
    settings = dict(auth.settings)
    if auth.kind == "api_key":
        scheme = kwargs(header=settings["header"])
        credential = kwargs(value=lit(settings["value"]))
    elif auth.kind == "bearer":
        scheme, credential = (), kwargs(value=lit(settings["value"]))
    elif auth.kind == "service_account":
        scheme = ()
        credential = kwargs(key=lit(settings.get("key")), default=settings.get("default") or None,
                            scopes=lit(list(auth.scope_list)) if auth.scope_list else None,
                            audience=lit(settings.get("audience")))
    elif auth.kind == "openid_connect":
        scheme = kwargs(authorization_url=lit(settings["authorization_url"]),
                        token_url=lit(settings["token_url"]),
                        scopes=lit(list(auth.scope_list)) if auth.scope_list else None)
        credential = kwargs(client_id=lit(settings["client_id"]),
                            client_secret=lit(settings["client_secret"]))
    else:
        scheme = kwargs(authorization_url=lit(settings["authorization_url"]),
                        token_url=lit(settings["token_url"]),
                        scopes=lit(dict(auth.scopes)) if auth.scopes is not None else None)
        credential = kwargs(client_id=lit(settings["client_id"]),
                            client_secret=lit(settings["client_secret"]))
    return (Call(Import(TOOL_AUTH, "auth_scheme"), scheme, (auth.kind,)),
            Call(Import(TOOL_AUTH, "auth_credential"), credential, (auth.kind,)))


def python_tool(tool: PythonToolNode) -> Value:
    """A python tool; with `auth`, a function tool that receives the credential."""
    value = python_object(tool.python)
    if tool.auth is None:
        return value
    return Call(Import(TOOL_AUTH, "authenticated"), args=(value, *auth_values(tool.auth)))


def python_object(obj: PyObject) -> Value:
    symbol = Import(obj.module, obj.attr)
    if obj.args is None:
        return symbol
    return Call(symbol, tuple((k, lit(v)) for k, v in obj.args.items()))


def model_value(model: ModelNode | None) -> Value:
    """An agent's `model=`: an id for ADK's registry, else a model object."""
    if model is None:
        return None
    if model.provider == "adk":
        return lit(model.id)
    return model_object(model)


def model_object(model: ModelNode) -> Value:
    """A model object (chains and routes hold objects, not ids)."""
    match model:
        case PlainModel():
            return Call(Import("agentspec.runtime.models", "registry_model"),
                        args=(lit(model.id),))
        case LiteLlmEndpoint():
            return Call(Import("agentspec.runtime.models", "litellm"), args=(lit(model.id),),
                        kwargs=kwargs(base_url=lit(model.base_url),
                                      api_key=lit(model.api_key),
                                      **{k: lit(v) for k, v in model.args.items()}))
        case FallbackChain():
            return Call(Import(MODEL_ROUTING, "fallback"), kwargs(
                name=model.id, models=_members(model), order=lit(list(model.order))))
        case ModelRoute():
            return Call(Import(MODEL_ROUTING, "routed"), kwargs(
                name=model.id, models=_members(model), choices=lit(list(model.choices)),
                fallback=lit(list(model.fallback)) if model.fallback else None,
                state=lit(model.state),
                map=lit(dict(model.map)) if model.map is not None else None,
                function=python_object(model.python) if model.python else None))
        case _:
            assert_never(model)


def _members(model: FallbackChain | ModelRoute) -> DictOf:
    return DictOf(tuple((name, model_object(member))
                        for name, member in model.members.items()))


def routes_models(model: ModelNode | None) -> bool:
    """Whether calls through `model` pick by route (they need each call's context)."""
    return model is not None and (isinstance(model, ModelRoute) or any(
        routes_models(member) for member in members_of(model).values()))


def instruction_value(text: str | None, *, verbatim: bool = False) -> Value:
    """An instruction; `verbatim` text (from a file) is not an `${env.X}` template."""
    if text is None:
        return None
    value = text if verbatim else lit(text)
    return Call(TEMPLATE, args=(value,)) if needs_template(text) else value


def llm_generate_config(node: LlmFields) -> Value:
    return generate_config(node.generate, node.thinking,
                           with_thinking=node.adk_planner != "builtin")


def generate_config(generate: Mapping[str, Any], thinking_settings: Mapping[str, Any], *,
                    with_thinking: bool = True) -> Value:
    """A GenerateContentConfig call for a model's settings (None when there are none)."""
    settings = dict(generate)
    thinking = {THINKING_FIELDS[k]: (v.upper() if k == "level" else v)
                for k, v in thinking_settings.items()}
    if with_thinking and thinking:
        settings["thinking_config"] = Call(THINKING, kwargs(**{k: lit(v)
                                                                for k, v in thinking.items()}))
    if not settings:
        return None
    return Call(GENERATE, tuple((k, v if isinstance(v, Call) else lit(v))
                                for k, v in settings.items()))


def adk_planner(node: LlmFields) -> Value:
    if node.adk_planner is None:
        return None
    if node.adk_planner == "plan_react":
        return Call(PLANNERS["plan_react"])
    thinking = {THINKING_FIELDS[k]: (v.upper() if k == "level" else v)
                for k, v in node.thinking.items()}
    return Call(PLANNERS["builtin"], kwargs(thinking_config=Call(
        THINKING, tuple((k, lit(v)) for k, v in thinking.items()))))


def schema_value(schema: Schema | None, name: str, *, model_needed: bool) -> Value:
    if schema is None:
        return None
    if schema.python is not None:
        return python_object(schema.python)
    if model_needed:
        factory = Import("agentspec.runtime.schemas", "model_from_json_schema")
        return Call(factory, args=(name, lit(schema.json)))
    return lit(schema.json)


def mcp_toolset(tool: McpToolNode) -> Value:
    # the defining modules: the package hides these names when `mcp` is not installed
    module = "google.adk.tools.mcp_tool.mcp_session_manager"
    server = tool.server
    match server:
        case McpStdio():
            params = Call(Import("mcp", "StdioServerParameters"), kwargs(
                command=lit(server.command), args=lit(list(server.args)),
                env=None if server.env is None else lit(dict(server.env)),
                cwd=None if server.cwd is None else SpecPath(server.cwd)))
            connection = Call(Import(module, "StdioConnectionParams"), kwargs(
                server_params=params, timeout=server.timeout))
        case McpHttp():
            kind = "SseConnectionParams" if server.transport == "sse" else \
                "StreamableHTTPConnectionParams"
            connection = Call(Import(module, kind), kwargs(
                url=lit(server.url),
                headers=None if server.headers is None else lit(dict(server.headers)),
                timeout=server.timeout))
        case _:
            assert_never(server)
    toolset = Call(Import("google.adk.tools.mcp_tool.mcp_toolset", "McpToolset"), kwargs(
        connection_params=connection,
        tool_filter=None if tool.filter is None else lit(list(tool.filter)),
        tool_name_prefix=lit(tool.prefix),
        **(dict(zip(("auth_scheme", "auth_credential"), auth_values(tool.auth), strict=True))
           if tool.auth else {})))
    target = server.url if isinstance(server, McpHttp) else server.command
    return Call(Import("agentspec.runtime.mcp_server", "mcp_server"), (
        ("name", tool.name or "mcp_server"), ("target", lit(target)),
        ("tools", None if tool.filter is None else lit(list(tool.filter))),
        ("prefix", lit(tool.prefix))), (toolset,))


def openapi_toolset(tool: OpenApiToolNode) -> Value:
    """The document by its path (read when the app is loaded); secrets read then too.
    Without `operations`, the operations the document had when compiled: those the
    approvals and diff saw (an operation the document gains or renames later is not
    offered ungated)."""
    scheme, credential = auth_values(tool.auth) if tool.auth else (None, None)
    chosen = tool.operations if tool.operations is not None else tool.offered or None
    return Call(Import("agentspec.runtime.openapi", "openapi_toolset"), (
        ("operations", None if chosen is None else lit(list(chosen))),
        ("prefix", lit(tool.prefix)), ("server", lit(tool.server)),
        ("private_network", tool.private_network), ("auth_scheme", scheme),
        ("auth_credential", credential)), (SpecPath(tool.document),))


APPROVALS = "agentspec.runtime.harness.approvals"
TOOL_ERROR_RESULT = Import("agentspec.runtime.tool_errors", "error_result")
MCP_ERRORS = Import("agentspec.runtime.tool_errors", "mcp_errors")
DELEGATION = "agentspec.runtime.jobs.delegation"
JOBS = Ref("offline_jobs")  # the one JobSettings of an app with offline agents


def approval_value(approval: Approval) -> DictOf:
    return DictOf(tuple((k, lit(v)) for k, v in kwargs(
        decisions=ListOf(approval.decisions), hint=approval.hint)))


def gated(value: Value, approval: Approval | None) -> Value:
    if approval is None:
        return value
    return Call(Import(APPROVALS, "gated"), args=(value, approval_value(approval)))


def _definition_value(key: str, value: Any) -> Value:
    """A backend setting; its directories (the root, a sandbox mount's source) and a store's
    SQLite file become paths relative to the spec's directory, made absolute where the app
    is loaded."""
    if key in ("root", "sqlite"):
        return SpecPath(value)
    if key == "url":  # a store's database: its `${env.X}` read when it is opened
        return str(value)
    if key == "mounts":
        return ListOf(tuple(DictOf((("source", SpecPath(mount["source"])),
                                    ("target", lit(mount["target"]))))
                            for mount in value))
    return lit(value)


def backend_definitions(filesystem: FilesystemNode) -> DictOf:
    """The definitions as generated packages pass them (`contract.backends.to_data`)."""
    return DictOf(tuple(
        (name, DictOf(tuple((key, _definition_value(key, value))
                            for key, value in to_data(definition).items())))
        for name, definition in filesystem.definitions.items()))


def file_toolset(filesystem: FilesystemNode) -> Call:
    return Call(Import("agentspec.runtime.harness.filesystem", "file_toolset"), kwargs(
        backend=filesystem.backend, definitions=backend_definitions(filesystem),
        tools=lit(list(filesystem.tools))))


def result_limit_callback(node: LlmFields) -> Call:
    """Eviction of large results: to the agent's backend, else to session artifacts."""
    readable = node.filesystem is not None and "read_file" in node.filesystem.tools
    backend = None if not readable or node.filesystem is None else Call(
        Import("agentspec.runtime.harness.filesystem", "backend_factory"),
        args=(node.filesystem.backend, backend_definitions(node.filesystem)))
    return Call(Import("agentspec.runtime.harness.results", "result_limit_callback"),
                args=(node.result_limit,), kwargs=kwargs(backend=backend))


def dispatches_tasks(node: AgentNode) -> bool | None:
    """ADK runs `mode: task` sub-agents from the parent's node, which must be re-runnable;
    ADK marks an agent so when it builds it as a node, but not the agent a transfer
    reaches, whose delegations then fail."""
    return True if any(child.mode == "task" for child in node.children) else None


def context_cache_value(settings: Mapping[str, int | float] | None) -> Value:
    """ADK's ContextCacheConfig for the spec's `context_cache` (None: no caching)."""
    if settings is None:
        return None
    values = dict(settings)
    timeout = values.pop("create_timeout", None)
    options = None if timeout is None else Call(
        Import("google.genai", "types.HttpOptions"), kwargs(timeout=int(timeout * 1000)))
    return Call(Import("google.adk.agents.context_cache_config", "ContextCacheConfig"),
                kwargs(**values, create_http_options=options))


def code_executor_value(executor: CodeExecutorNode | None) -> Value:
    """An LLM agent's `code_executor=`: Gemini's built-in one, or the sandbox's."""
    if executor is None:
        return None
    if executor.filesystem is None:
        return Call(Import("google.adk.code_executors", "BuiltInCodeExecutor"))
    return Call(Import("agentspec.runtime.code_executors", "sandbox_executor"),
                args=(executor.filesystem.backend, backend_definitions(executor.filesystem)))
