"""ADK tool entries (`{name, args}`) as spec tools: builtins, code references, `AgentTool`,
`McpToolset`; shims for tools ADK builds from `args`."""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from agentspec.adkimport.schema import AGENT_TOOL_NAMES, MCP_TOOLSET_NAMES
from agentspec.adkimport.text import escape
from agentspec.contract.secrets import secret_flag, secret_name, secret_value
from agentspec.contract.urls import url_secret_parts
from agentspec.diagnostics import codes, did_you_mean
from agentspec.language.tools import BUILTIN_TOOLS
from agentspec.parse import Key
from agentspec.stdlib_boundary import is_refused_module

if TYPE_CHECKING:
    from agentspec.adkimport.files import AdkFile
    from agentspec.diagnostics import Code, Diagnostic
    from agentspec.source import Span

__all__ = ["Converter", "Shim", "code_ref", "convert_tool"]

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: keys of the connection parameters the spec's MCP servers take, per ADK parameter class
_STDIO = {"command", "args", "env", "cwd"}
_REMOTE = {"url", "headers", "timeout"}


@dataclass(frozen=True)
class Shim:
    """A function of the shim module that builds one tool as ADK's Agent Config does."""

    function: str
    module: str
    attribute: str
    config: str  # the Agent Config file, relative to the spec's directory


class Converter(Protocol):
    """What mapping a tool needs of the conversion it is part of (`convert.Converter`)."""

    write_shims: bool
    shims: list[Shim]
    diagnostics: list[Diagnostic]

    def refuse(self, diagnostic: Diagnostic) -> None: ...

    def loss(self, code: Code, agent: str, message: str, span: Span, note: str) -> None: ...

    def note(self, agent: str, text: str) -> None: ...

    def data(self, value: Any) -> Any: ...

    def relative(self, file: AdkFile) -> str: ...

    def file_at(self, file: AdkFile, ref: tuple[Key, ...]) -> AdkFile | None: ...

    def place(self, file: AdkFile, *, shared: bool, via: Span | None = None) -> str | None: ...


def _identifier(word: str) -> bool:
    return word.isidentifier() and not keyword.iskeyword(word)


def code_ref(file: AdkFile, name: str) -> str:
    """`a.b.c` as `a.b:c`; a leading `.` is relative to the config's package (its folder)."""
    if name.startswith("."):
        name = file.path.parent.name + name
    module, _, attribute = name.rpartition(".")
    return f"{module}:{attribute}" if module else name


def _secret(key: str, value: str) -> bool:
    return secret_name(key) or secret_value(value)


def _env_name(key: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_]", "_", key).upper()
    return name if _ENV_NAME.match(name) else f"MCP_{name}"


class _Tools:
    def __init__(self, conv: Converter, file: AdkFile, agent: str) -> None:
        self.conv, self.file, self.agent = conv, file, agent

    def convert(self, index: int, entry: Any) -> Any | None:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            return None  # ADK's schema check reported it
        name: str = entry["name"]
        args = entry.get("args")
        if name in AGENT_TOOL_NAMES:
            return self.agent_tool(index, args or {})
        if name in MCP_TOOLSET_NAMES:
            return self.mcp(index, args or {})
        if "." not in name:
            return self.builtin(index, name, args)
        if args:
            return self.shim(index, code_ref(self.file, name), args)
        return {"python": code_ref(self.file, name)}

    def builtin(self, index: int, name: str, args: Any) -> Any | None:
        if name in BUILTIN_TOOLS and not args:
            return {"builtin": name}
        import google.adk.tools as adk_tools
        from google.adk.tools.base_tool import BaseTool
        from google.adk.tools.base_toolset import BaseToolset

        try:
            if name.startswith("_"):  # no module internals (`__builtins__`, `__loader__`)
                raise AttributeError(name)
            found = getattr(adk_tools, name)
        except (AttributeError, ImportError):
            self.conv.refuse(codes.ADK_UNKNOWN_TOOL(
                f"ADK has no built-in tool `{name}`", self.file.at("tools", index, "name"),
                hint=did_you_mean(name, [n for n in dir(adk_tools) if not n.startswith("_")])
                or "a tool of your own is named by its dotted path"))
            return None
        if isinstance(found, (BaseTool, BaseToolset)) or (callable(found) and not args
                                                          and not isinstance(found, type)):
            return {"python": f"google.adk.tools:{name}"}  # ADK ignores `args` of an object
        return self.shim(index, f"google.adk.tools:{name}", args or {})

    def shim(self, index: int, ref: str, args: Any) -> Any | None:
        span = self.file.at("tools", index, "name")
        module, _, attribute = ref.partition(":")
        bad = [k for k in args if not _identifier(str(k))] if isinstance(args, dict) else []
        if not self.conv.write_shims or bad or not all(
                _identifier(part) for part in (*module.split("."), attribute)):
            self.conv.refuse(codes.ADK_TOOL_ARGS(
                f"`{ref.replace(':', '.')}` is built from `args` the way ADK does it, which a "
                "spec's `{python: ..., args: ...}` does not", span,
                hint=f"argument names must be Python identifiers (not {', '.join(bad)})" if bad
                else "pass --write-shims to write a module that builds it as ADK does, or "
                "build the tool in Python and name the object"))
            return None
        if is_refused_module(module):  # ADK blocks the standard library too
            self.conv.refuse(codes.PYTHON_REF_STDLIB(
                f"`{ref.replace(':', '.')}` is in the Python standard library", span,
                hint="reference your own module, google.adk or a third-party package"))
            return None
        function = f"tool_{len(self.conv.shims)}"  # never a name taken from the config
        self.conv.shims.append(Shim(function, module, attribute, self.conv.relative(self.file)))
        return {"python": f"adk_shims:{function}", "args": self.conv.data(args)}

    def agent_tool(self, index: int, args: dict[str, Any]) -> Any | None:
        where: tuple[Key, ...] = ("tools", index, "args")
        agent = args.get("agent") or {}
        if isinstance(agent, dict) and agent.get("code") is not None:
            self.conv.refuse(codes.ADK_CODE_AGENT(
                f"`AgentTool` names the Python agent `{agent['code']}`",
                self.file.at(*where, "agent", "code"),
                hint="give the agent an Agent Config file and name it with `config_path`, or "
                "keep this app in Python"))
            return None
        for key, lossy in (("skip_summarization", True), ("include_plugins", False)):
            if key in args and args[key] is lossy:
                self.conv.loss(codes.ADK_AGENT_TOOL_LOSS, self.agent,
                               f"`AgentTool` `{key}: {str(lossy).lower()}` has no spec "
                               "equivalent", self.file.at(*where, key, key=True),
                               "the spec's `{agent: name}` uses ADK's default "
                               f"(`{key}: {str(not lossy).lower()}`)")
        target = self.conv.file_at(self.file, (*where, "agent", "config_path"))
        name = self.conv.place(target, shared=False) if target else None
        return {"agent": name} if name else None

    def mcp(self, index: int, args: dict[str, Any]) -> Any | None:
        where: tuple[Key, ...] = ("tools", index, "args")
        server: dict[str, Any] = {}
        for key, value in args.items():
            at: tuple[Key, ...] = (*where, key)
            if value is None:
                continue
            if key in ("stdio_server_params", "stdio_connection_params"):
                params = value.get("server_params", value) if key.startswith("stdio_conn") \
                    else value
                inner = (*at, "server_params") if params is not value else at
                server.update(self.params(params, _STDIO, inner))
                if params is not value:
                    server.update(self.params({k: v for k, v in value.items()
                                               if k != "server_params"}, {"timeout"}, at))
            elif key in ("sse_connection_params", "streamable_http_connection_params"):
                server.update(self.params(value, _REMOTE, at))
                server["transport"] = "sse" if key.startswith("sse") else "http"
            elif key not in ("tool_filter", "tool_name_prefix") and not (
                    key == "use_mcp_resources" and value is False):
                self.lost(key, at)
        entry: dict[str, Any] = {"mcp": server}
        if args.get("tool_filter") is not None:
            entry["filter"] = [str(name) for name in args["tool_filter"]]
        if args.get("tool_name_prefix") is not None:
            entry["prefix"] = args["tool_name_prefix"]
        return entry

    def lost(self, key: str, at: tuple[Key, ...]) -> None:
        self.conv.loss(codes.ADK_MCP_LOSS, self.agent,
                       f"the MCP option `{key}` has no spec equivalent",
                       self.file.at(*at, key=True), f"MCP option `{key}` dropped")

    def params(self, params: dict[str, Any], keys: set[str],
               at: tuple[Key, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in params.items():
            if value is None:
                continue
            if key not in keys:
                self.lost(key, (*at, key))
            elif key in ("env", "headers"):
                out[key] = {k: self.secret(str(k), str(v), (*at, key, k))
                            for k, v in value.items()}
            elif key == "args" and isinstance(value, list):
                out[key] = self.arguments([str(arg) for arg in value], (*at, key))
            elif key == "url" and isinstance(value, str):
                out[key] = self.url(value, (*at, key))
            else:
                out[key] = self.conv.data(value)
        return out

    def arguments(self, args: list[str], at: tuple[Key, ...]) -> list[str]:
        """A server's command line, each secret in it (`--api-key=...`, the argument after
        `--token`, a value shaped like a key) read from the environment instead."""
        out: list[str] = []
        flag: str | None = None  # the secret flag the previous argument was, value to come
        for index, arg in enumerate(args):
            found = secret_flag(arg)
            if flag is not None and not arg.startswith("-"):
                out.append(self.moved(flag, (*at, index)))
            elif found is not None and found[1]:
                out.append(escape(arg[:len(arg) - len(found[1])]) +
                           self.moved(found[0], (*at, index)))
            elif found is None and secret_value(arg):
                out.append(self.moved(f"mcp_arg_{index}", (*at, index)))
            else:
                out.append(escape(arg))
            flag = found[0] if found is not None and found[1] is None else None
        return out

    def url(self, url: str, at: tuple[Key, ...]) -> str:
        """A server's URL, its password, a lone user name (a token) and secret-named query
        values read from the environment instead."""
        parts = url_secret_parts(url)
        if not parts:
            return escape(url)
        out, last = [], 0
        for start, end, what in parts:
            out += [escape(url[last:start]), self.moved(f"mcp_url_{what}", at)]
            last = end
        return "".join([*out, escape(url[last:])])

    def secret(self, key: str, value: str, at: tuple[Key, ...]) -> str:
        if not _secret(key, value):
            return escape(value)
        return self.moved(key, at)

    def moved(self, key: str, at: tuple[Key, ...]) -> str:
        """`${env.NAME}` for the secret at `at`, which is not copied, with the diagnostic
        and the note that say so."""
        name = _env_name(key)
        self.conv.diagnostics.append(codes.ADK_SECRET(
            f"`{key}` holds what looks like a secret; the spec reads it from `${{env.{name}}}`",
            self.file.at(*at), hint=f"set {name} in the environment that runs the agent; "
            "the value was not copied"))
        self.conv.note(self.agent, f"`{key}` is read from the environment variable {name} "
                       "(its literal value in the Agent Config was not copied)")
        return f"${{env.{name}}}"


def convert_tool(conv: Converter, file: AdkFile, agent: str, index: int, entry: Any) -> Any:
    """The spec entry for the `index`th tool of `file` (None after a refusal)."""
    return _Tools(conv, file, agent).convert(index, entry)
