"""OpenAPI tools: the document is a project file that parses into operations ADK can call,
`operations` names real ones, and the server is a URL ADK will call."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path as FsPath
from typing import Any

from agentspec.contract.openapi import (
    MAX_EXPANDED,
    METHODS,
    expanded_size,
    private_host,
    resolve,
    tool_names,
)
from agentspec.contract.urls import masked, url_secrets
from agentspec.diagnostics import codes, did_you_mean
from agentspec.language.tools import OpenApiTool
from agentspec.parse import PosNode, load_text
from agentspec.source import Span
from agentspec.validate.semantic.context import Context
from agentspec.validate.semantic.files import existing_path, read_text_file
from agentspec.validate.semantic.tool_auth import tool_entries

__all__ = ["check_openapi", "document_names", "read_document"]


def read_document(ctx: Context, tool: OpenApiTool, where: tuple[str | int, ...]
                  ) -> tuple[dict[str, Any], PosNode, Span] | None:
    """The parsed document of an `openapi` tool, with its positions; None (reported) when
    it is missing, unreadable or not YAML/JSON."""
    target = existing_path(ctx, tool.openapi, (*where, "openapi"), directory=False,
                           what="OpenAPI document")
    if target is None:
        return None
    source = read_text_file(ctx, target, report=True)
    if source is None:
        return None
    parsed = load_text(source.text, path=target, display=source.name)
    errors = [d for d in parsed.diagnostics if d.is_error and d.code != codes.NOT_A_MAPPING.code]
    for problem in errors:
        ctx.report(codes.OPENAPI_DOCUMENT(
            f"the OpenAPI document `{tool.openapi}` is not valid YAML or JSON: "
            f"{problem.message}", problem.span,
            hint=problem.hint if problem.hint and "agentspec" not in problem.hint else
            "an OpenAPI document starts with `openapi: 3.x`, `info` and `paths`"))
    top = Span.at(source.name, 1, 1)
    if errors:
        return None
    if not isinstance(parsed.value, dict) or parsed.positions is None:
        ctx.report(codes.OPENAPI_DOCUMENT(
            f"the OpenAPI document `{tool.openapi}` is not a mapping", top,
            hint="an OpenAPI document starts with `openapi: 3.x`, `info` and `paths`"))
        return None
    return parsed.value, parsed.positions, top


def _refs(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...],
                                                                         str]]:
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str):
            yield (*path, "$ref"), ref
        for key, item in value.items():
            yield from _refs(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _refs(item, (*path, index))


def _structure(ctx: Context, name: str, document: dict[str, Any], pos: PosNode,
               top: Span) -> bool:
    """Report what keeps ADK from reading the document; False when it cannot."""
    version = document.get("openapi")
    if not isinstance(version, str) or not version.startswith("3."):
        ctx.report(codes.OPENAPI_DOCUMENT(
            f"the OpenAPI document of `{name}` is not OpenAPI 3 (`openapi: {version}`)"
            if version is not None or "swagger" not in document else
            f"the OpenAPI document of `{name}` is Swagger 2, which ADK does not read",
            pos.value_span(("openapi",)) if "openapi" in document else top,
            hint="convert it to OpenAPI 3, for example with swagger2openapi"))
        return False
    paths = document.get("paths")
    if not isinstance(paths, dict) or not paths:
        ctx.report(codes.OPENAPI_DOCUMENT(
            f"the OpenAPI document of `{name}` has no `paths`, so it offers no operation",
            pos.value_span(("paths",)) if "paths" in document else top,
            hint="describe the API's operations under `paths`"))
        return False
    good = True
    for where, ref in _refs(document):
        if not ref.startswith("#/"):
            good = False
            ctx.report(codes.OPENAPI_DOCUMENT(
                f"`$ref: {ref}` points outside the document; ADK resolves only references "
                "inside it", pos.value_span(where),
                hint="inline the referenced part, or bundle the document into one file"))
    if good and expanded_size(document) > MAX_EXPANDED:
        ctx.report(codes.OPENAPI_DOCUMENT(
            f"the OpenAPI document of `{name}` expands to more than {MAX_EXPANDED:,} values "
            "once each `$ref` is replaced by what it points at, as ADK does when it loads "
            "it", top, hint="make the schemas refer to each other less deeply, or split "
            "the API into several documents"))
        return False
    for path, item in paths.items():
        if isinstance(resolve(document, item), dict):
            continue
        good = False
        target = item.get("$ref") if isinstance(item, dict) else None
        if isinstance(target, str) and target.startswith("#/"):
            ctx.report(codes.OPENAPI_DOCUMENT(
                f"the path `{path}` refers to `{target}`, which leads to no mapping of "
                "operations", pos.value_span(("paths", path, "$ref")),
                hint="ADK follows `#/a/b` literally, without `~1` escapes or cycles: point "
                "it at a mapping of `get:`, `post:`, ... operations"))
        elif not isinstance(target, str):
            ctx.report(codes.OPENAPI_DOCUMENT(
                f"the path `{path}` is not a mapping of operations", pos.value_span(
                    ("paths", path)), hint="write `get:`, `post:`, ... under the path"))
    return good and _operations(ctx, document, pos)


def _operations(ctx: Context, document: dict[str, Any], pos: PosNode) -> bool:
    """The shapes ADK reads of each operation: a mapping, its `parameters` a list of
    mappings with a `name` and an `in`, its `requestBody` and `responses` mappings."""
    good = True

    def bad(where: tuple[str | int, ...], message: str, hint: str) -> None:
        nonlocal good
        good = False
        ctx.report(codes.OPENAPI_DOCUMENT(message, pos.value_span(where), hint=hint))

    for path, item in document["paths"].items():
        methods = resolve(document, item)
        _parameters(document, ("paths", path), methods.get("parameters", []), f"`{path}`",
                    bad)
        for method in METHODS:
            if method in methods:
                _operation(document, ("paths", path, method), methods[method], bad)
    return good


def _operation(document: dict[str, Any], at: tuple[str, str, str], value: Any,
               bad: Callable[[tuple[str | int, ...], str, str], None]) -> None:
    value = resolve(document, value)
    shown = f"`{at[2]} {at[1]}`"
    if value is None:  # ADK skips an operation written as nothing
        return
    if not isinstance(value, dict):
        bad(at, f"the operation {shown} is not a mapping",
            "write its `operationId`, `parameters` and `responses` under it")
        return
    for key in ("requestBody", "responses"):
        if key in value and not isinstance(resolve(document, value[key]), dict):
            bad((*at, key), f"`{key}` of {shown} is not a mapping",
                f"see the OpenAPI 3 specification for `{key}`")
    _parameters(document, at, value.get("parameters", []), shown, bad)


def _parameters(document: dict[str, Any], at: tuple[str, ...], parameters: Any, shown: str,
                bad: Callable[[tuple[str | int, ...], str, str], None]) -> None:
    if not isinstance(parameters, list):
        bad((*at, "parameters"), f"`parameters` of {shown} is not a list",
            "list each parameter as `{name: ..., in: path | query | header | cookie}`")
        return
    for index, parameter in enumerate(parameters):
        parameter = resolve(document, parameter)
        if not isinstance(parameter, dict) or not isinstance(parameter.get("name"), str) \
                or parameter.get("in") not in ("path", "query", "header", "cookie"):
            bad((*at, "parameters", index), f"a parameter of {shown} needs a `name` and an "
                "`in` of `path`, `query`, `header` or `cookie`",
                "write `{name: ..., in: query, schema: {type: string}}`")




def _server(ctx: Context, tool: OpenApiTool, where: tuple[str | int, ...],
            document: dict[str, Any], pos: PosNode) -> None:
    if tool.server is not None:
        url, span, shown = tool.server, ctx.at(*where, "server"), f"`{masked(tool.server)}`"
        for what in url_secrets(url):  # the URL is written into the package as it stands
            ctx.report(codes.API_KEY_LITERAL(
                f"the `server` of `{tool.openapi}`'s tool writes {what} in the spec", span,
                hint="write each secret part as `${env.NAME}`, or send the credential with "
                "the tool's `auth:`"))
        if "${" in url:
            return  # read when the app is loaded
    else:
        servers = document.get("servers")
        first = servers[0] if isinstance(servers, list) and servers else None
        found = first.get("url") if isinstance(first, dict) else None
        span = ctx.at(*where, "openapi")
        if not isinstance(found, str):
            ctx.report(codes.OPENAPI_SERVER(
                f"`{tool.openapi}` names no server, so the calls have no host", span,
                hint="add `servers: [{url: https://...}]` to the document, or set the "
                "tool's `server`"))
            return
        url, shown = found, f"`{masked(found)}` (the first server of `{tool.openapi}`)"
    if not url.startswith(("http://", "https://")):
        ctx.report(codes.OPENAPI_SERVER(
            f"the server URL {shown} is not an absolute `http://` or `https://` URL", span,
            hint="set the tool's `server` to the API's full base URL"))
    elif private_host(url) and not tool.private_network:
        ctx.report(codes.OPENAPI_PRIVATE_NETWORK(
            f"ADK refuses to call {shown}, a loopback or private address, so every "
            "operation would fail", span,
            hint="set `private_network: true` on the tool if the API really lives there"))


def check_openapi(ctx: Context) -> None:
    for where, tool in tool_entries(ctx):
        if not isinstance(tool, OpenApiTool):
            continue
        read = read_document(ctx, tool, where)
        if read is None:
            continue
        document, pos, top = read
        name = str(where[-1]) if where[0] == "tools" else tool.openapi
        if not _structure(ctx, name, document, pos, top):
            continue
        _server(ctx, tool, where, document, pos)
        offered = tool_names(document)
        for index, operation in enumerate(tool.operations or ()):
            if operation not in offered:
                ctx.report(codes.OPENAPI_OPERATION_UNKNOWN(
                    f"`{tool.openapi}` has no operation `{operation}`",
                    ctx.at(*where, "operations", index),
                    hint=did_you_mean(operation, offered) or
                    f"its operations: {', '.join(offered) or 'none'}"))


def document_names(text: str, path: FsPath) -> tuple[str, ...]:
    """The tool names of a document `validate` read and passed (its text from the spec's
    sources): lowering records them without reading the file again."""
    parsed = load_text(text, path=path)
    return tool_names(parsed.value) if isinstance(parsed.value, dict) else ()
