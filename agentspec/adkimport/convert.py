"""An Agent Config tree as spec data: one named agent per ADK agent, refusals and losses as
diagnostics at the ADK file's positions."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agentspec.adkimport.files import AdkFile, AdkTree
from agentspec.adkimport.schema import agent_kind
from agentspec.adkimport.text import escape, instruction
from agentspec.adkimport.tools import Shim, code_ref, convert_tool
from agentspec.contract.placeholders import placeholders
from agentspec.diagnostics import Code, Diagnostic, Related, Severity, codes
from agentspec.parse import Key
from agentspec.source import Span
from agentspec.validate.semantic.tree import MAX_AGENTS_BUILT

__all__ = ["Conversion", "Converter", "convert"]

_GENERATE = ("temperature", "top_p", "top_k", "max_output_tokens", "stop_sequences", "seed",
             "presence_penalty", "frequency_penalty")
_THINKING = {"thinking_budget": "budget", "include_thoughts": "include_thoughts",
             "thinking_level": "level"}
_SAFETY = ("category", "threshold", "method")
_CALLBACKS = ("before_agent", "after_agent", "before_model", "after_model", "before_tool",
              "after_tool")
#: copied as they are (ADK and agentspec share the name and the meaning)
_LLM_FIELDS = ("include_contents", "output_key", "disallow_transfer_to_parent",
               "disallow_transfer_to_peers")
#: a Python path (`pkg.mod.name`), which is no model id
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")


@dataclass
class Conversion:
    spec: dict[str, Any]
    #: agent name -> comment lines written above it
    notes: dict[str, list[str]] = field(default_factory=dict)
    shims: list[Shim] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def _snake(key: str) -> str:
    """`maxOutputTokens` (google.genai's alias) as `max_output_tokens`."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()


def _texts(content: Any) -> list[str]:
    """The text parts of a `ContentUnion` (a Content, a Part, a list of either, a string)."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [text for item in content for text in _texts(item)]
    if isinstance(content, dict):
        if isinstance(content.get("text"), str):
            return [content["text"]]
        return _texts(content.get("parts") or [])
    return []


class Converter:
    def __init__(self, tree: AdkTree, *, allow_loss: bool, write_shims: bool,
                 spec_dir: Path) -> None:
        self.tree, self.allow_loss, self.write_shims = tree, allow_loss, write_shims
        self.spec_dir = spec_dir
        self.agents: dict[str, dict[str, Any]] = {}
        self.placed: dict[Path, str] = {}  # file -> the agent it became first
        self.owners: dict[str, Path] = {}  # agent name -> its file
        self.result = Conversion({})
        self.too_large = False
        self.shims = self.result.shims
        self.diagnostics = self.result.diagnostics

    # problems ---------------------------------------------------------------------------

    def refuse(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(diagnostic)

    def loss(self, code: Code, agent: str, message: str, span: Span, note: str) -> None:
        """A mapping that loses something: refused, or with `--allow-loss` a warning and a
        comment above the agent."""
        if not self.allow_loss:
            self.refuse(code(message, span, hint="pass --allow-loss to convert without it"))
            return
        kept = code(message, span, hint="check that the agent does without it: --allow-loss "
                    "left it out, with a comment above the agent")
        self.diagnostics.append(replace(kept, severity=Severity.WARNING))
        self.note(agent, f"{note} ({code.code}, --allow-loss)")

    def note(self, agent: str, text: str) -> None:
        """A comment line above the agent; a line break from the config cannot end it."""
        shown = "".join(c if c.isprintable() else "?" for c in text)
        self.result.notes.setdefault(agent, []).append(shown)

    # helpers ----------------------------------------------------------------------------

    def data(self, value: Any) -> Any:
        """ADK data as spec data: every string's `${` escaped."""
        if isinstance(value, str):
            return escape(value)
        if isinstance(value, list):
            return [self.data(v) for v in value]
        if isinstance(value, dict):
            return {str(k): self.data(v) for k, v in value.items()}
        return value

    def relative(self, file: AdkFile) -> str:
        return Path(os.path.relpath(file.path, self.spec_dir)).as_posix()

    def file_at(self, file: AdkFile, ref: tuple[Key, ...]) -> AdkFile | None:
        target = self.tree.refs.get((file.path, ref))
        return self.tree.files.get(target) if target else None

    def unique(self, base: str) -> str:
        number = 2
        while f"{base}_{number}" in self.agents:
            number += 1
        return f"{base}_{number}"

    # agents -----------------------------------------------------------------------------

    def place(self, file: AdkFile, *, shared: bool, via: Span | None = None) -> str | None:
        """The agent `file` becomes. A file already placed is that agent again (`shared` is
        False: an agent tool), or a copy that `extends` it (a second parent)."""
        name = file.data.get("name")
        if not isinstance(name, str):
            return None
        first = self.placed.get(file.path)
        if first is not None and not shared:
            return first
        if len(self.agents) >= MAX_AGENTS_BUILT:  # shared files nest into copies of copies
            if not self.too_large:
                self.too_large = True
                self.refuse(codes.AGENT_TREE_TOO_LARGE(
                    f"the spec would have more than {MAX_AGENTS_BUILT:,} agents", via,
                    hint="files shared by several parents are copied once per parent"))
            return None
        if first is None:
            owner = self.owners.get(name)
            if owner is not None and owner != file.path:
                clash = self.tree.files[owner]
                self.refuse(codes.ADK_NAME_CLASH(
                    f"`{name}` is also the name of the agent in `{clash.shown}`",
                    file.at("name"), related=[Related(clash.at("name"), "the other agent")],
                    hint="a spec names its agents: rename one of them"))
                return None
            self.owners[name] = file.path
            self.placed[file.path] = name
            self.agents[name] = {}
            self.agents[name] = self.agent(file, name)
            return name
        copy = self.unique(first)
        self.diagnostics.append(codes.ADK_SHARED_FILE(
            f"`{file.shown}` is the sub-agent of a second parent: it becomes `{copy}`, which "
            f"extends `{first}`", via, hint="a spec agent has one parent"))
        self.note(copy, f"a copy of `{first}`: `{file.shown}` is the sub-agent of two parents")
        self.agents[copy] = {}
        entry: dict[str, Any] = {"extends": first}
        children = self.sub_agents(file, copy)
        if children:
            entry["sub_agents"] = children
        self.agents[copy] = entry
        return copy

    def agent(self, file: AdkFile, name: str) -> dict[str, Any]:
        data = file.data
        kind = agent_kind(data)
        if kind is None:
            self.refuse(codes.ADK_AGENT_CLASS(
                f"`agent_class: {data.get('agent_class')}` is no agent kind agentspec has",
                file.at("agent_class"),
                hint="only LlmAgent, SequentialAgent, ParallelAgent and LoopAgent convert; "
                "keep this agent in Python"))
            return {}
        out: dict[str, Any] = {} if kind == "llm" else {"kind": kind}
        if data.get("description"):
            out["description"] = escape(str(data["description"]))
        if kind == "llm":
            self.llm(file, name, out)
        children = self.sub_agents(file, name)
        if children:
            out["sub_agents"] = children
        if kind == "loop" and data.get("max_iterations") is not None:
            out["max_iterations"] = data["max_iterations"]
        callbacks = {event: [code_ref(file, str(ref.get("name")))
                             for ref in data.get(f"{event}_callbacks") or []
                             if isinstance(ref, dict)]
                     for event in _CALLBACKS}
        callbacks = {event: refs for event, refs in callbacks.items() if refs}
        if callbacks:
            out["callbacks"] = callbacks
        return out

    def llm(self, file: AdkFile, name: str, out: dict[str, Any]) -> None:
        data = file.data
        if data.get("model_code") is not None:
            self.refuse(codes.ADK_MODEL_CODE(
                "`model_code` names a model object built in Python",
                file.at("model_code", key=True), hint="use `model: <id>`; for LiteLLM, a "
                "`models:` entry with `provider: litellm`"))
        model = data.get("model")
        if isinstance(model, str):
            if not model.strip() or " " in model.strip() or "${" in model or \
                    _DOTTED.match(model):
                self.refuse(codes.ADK_MODEL_ID(
                    f"`{model}` is not a model id", file.at("model"),
                    hint="write a model id such as `gemini-2.5-flash`; a model built in "
                    "Python cannot be part of a spec"))
            else:
                out["model"] = model
        self.static_instruction(file, name, out)
        if isinstance(data.get("instruction"), str):
            out["instruction"] = instruction(data["instruction"])
        for key in _LLM_FIELDS:
            if data.get(key) is not None:
                out[key] = data[key]
        for key in ("input_schema", "output_schema"):
            ref = data.get(key)
            if isinstance(ref, dict) and isinstance(ref.get("name"), str):
                out[key] = {"python": code_ref(file, ref["name"])}
        self.generate(file, name, out)
        tools = [convert_tool(self, file, name, index, entry)
                 for index, entry in enumerate(data.get("tools") or [])]
        if any(tool is not None for tool in tools):
            out["tools"] = [tool for tool in tools if tool is not None]

    def static_instruction(self, file: AdkFile, name: str, out: dict[str, Any]) -> None:
        static = file.data.get("static_instruction")
        if static is None:
            return
        if isinstance(static, str):
            out["static_instruction"] = escape(static)
            return
        texts = _texts(static)
        self.loss(codes.ADK_STATIC_LOSS, name, "`static_instruction` is not plain text",
                  file.at("static_instruction"),
                  "static_instruction: only its text parts were kept")
        if self.allow_loss and texts:
            out["static_instruction"] = escape("\n".join(texts))

    def generate(self, file: AdkFile, name: str, out: dict[str, Any]) -> None:
        config = file.data.get("generate_content_config")
        if not isinstance(config, dict):
            return
        generate: dict[str, Any] = {}
        thinking: dict[str, Any] = {}
        for key, value in config.items():
            at: tuple[Key, ...] = ("generate_content_config", key)
            setting = _snake(str(key))
            if value is None:
                continue
            if setting in _GENERATE:
                generate[setting] = self.data(value)
            elif setting == "safety_settings" and isinstance(value, list):
                generate[setting] = [self.safety(file, name, item, (*at, index))
                                     for index, item in enumerate(value)]
            elif setting == "thinking_config" and isinstance(value, dict):
                for inner, setting_value in value.items():
                    target = _THINKING.get(_snake(str(inner)))
                    if target is None:
                        self.generate_loss(file, name, f"thinking_config.{inner}",
                                           (*at, inner))
                    elif setting_value is not None:
                        thinking[target] = str(setting_value).lower() if target == "level" \
                            else setting_value
            else:
                self.generate_loss(file, name, str(key), at)
        if generate:
            out["generate"] = generate
        if thinking:
            out["thinking"] = thinking

    def safety(self, file: AdkFile, name: str, item: Any,
               at: tuple[Key, ...]) -> dict[str, Any]:
        kept: dict[str, Any] = {}
        for key, value in (item.items() if isinstance(item, dict) else ()):
            if _snake(str(key)) in _SAFETY:
                kept[_snake(str(key))] = value
            else:
                self.generate_loss(file, name, f"safety_settings.{key}", (*at, key))
        return kept

    def generate_loss(self, file: AdkFile, name: str, key: str, at: tuple[Key, ...]) -> None:
        self.loss(codes.ADK_GENERATE_LOSS, name,
                  f"`generate_content_config.{key}` has no spec equivalent",
                  file.at(*at, key=True), f"generate_content_config.{key} dropped")

    def sub_agents(self, file: AdkFile, name: str) -> list[str]:
        children: list[str] = []
        for index, entry in enumerate(file.data.get("sub_agents") or []):
            if not isinstance(entry, dict):
                continue
            if entry.get("code") is not None:
                self.refuse(codes.ADK_CODE_AGENT(
                    f"the sub-agent `{entry['code']}` is a Python agent",
                    file.at("sub_agents", index, "code"),
                    hint="give it an Agent Config file and name it with `config_path`, or "
                    "keep this app in Python"))
                continue
            ref: tuple[Key, ...] = ("sub_agents", index, "config_path")
            target = self.file_at(file, ref)
            child = self.place(target, shared=True, via=file.at(*ref)) if target else None
            if child:
                children.append(child)
        return children


def _app_name(folder: Path) -> str:
    name = re.sub(r"[^A-Za-z0-9_]", "_", folder.name) or "adk"
    return f"{'app_' if name[0].isdigit() else ''}{name}_app"


def convert(tree: AdkTree, *, allow_loss: bool, write_shims: bool,
            spec_dir: Path) -> Conversion:
    """The spec for `tree` (its diagnostics say whether it may be written)."""
    converter = Converter(tree, allow_loss=allow_loss, write_shims=write_shims,
                          spec_dir=spec_dir)
    root_file = tree.files.get(tree.root) if tree.root else None
    root = converter.place(root_file, shared=True) if root_file else None
    result = converter.result
    result.spec = {"agentspec": 1, "name": _app_name(tree.folder)}
    if root is not None:
        result.spec["root"] = root
    supplied = _supplied_state(converter.agents)
    if supplied:
        result.spec["state"] = supplied
    result.spec["agents"] = converter.agents
    return result


def _supplied_state(agents: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """A `{required: true}` entry for each state key an instruction reads and no agent
    writes (`output_key`): in ADK the session's creator (or code) supplies it."""
    written = {agent.get("output_key") for agent in agents.values()}
    readers: dict[str, list[str]] = {}
    for name, agent in agents.items():
        text = agent.get("instruction")
        for found in placeholders(text) if isinstance(text, str) else ():
            if found.optional or found.artifact or found.key.startswith("temp:") or \
                    found.key in written:
                continue
            readers.setdefault(found.key, [])
            if name not in readers[found.key]:
                readers[found.key].append(name)
    return {key: {"required": True, "description": "Supplied when the session is created "
                  f"(read by {', '.join(f'`{n}`' for n in names)})"}
            for key, names in readers.items()}
