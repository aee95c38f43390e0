"""Read an ADK Agent Config tree: every file with positions, `config_path` followed as ADK
follows it (relative to the referring file; no absolute path, nothing outside the folder)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentspec.adkimport.files import AdkFile, AdkTree
from agentspec.adkimport.schema import AGENT_TOOL_NAMES, check_schema
from agentspec.adkimport.yaml11 import adk_reading, adopt, describe, differences
from agentspec.diagnostics import Diagnostic, Related, codes
from agentspec.parse import Key, load
from agentspec.project_files import is_dir, is_file, resolved
from agentspec.validate.semantic.tree import MAX_AGENT_DEPTH

__all__ = ["ROOT_FILE", "AdkFile", "AdkTree", "load_adk", "references"]

ROOT_FILE = "root_agent.yaml"


def references(data: dict[str, Any]) -> list[tuple[Key, ...]]:
    """The YAML paths of the `config_path` values a file holds (sub-agents, AgentTool)."""
    found: list[tuple[Key, ...]] = []
    for index, entry in enumerate(data.get("sub_agents") or []):
        if isinstance(entry, dict) and isinstance(entry.get("config_path"), str):
            found.append(("sub_agents", index, "config_path"))
    for index, tool in enumerate(data.get("tools") or []):
        if isinstance(tool, dict) and tool.get("name") in AGENT_TOOL_NAMES:
            agent = (tool.get("args") or {}).get("agent")
            if isinstance(agent, dict) and isinstance(agent.get("config_path"), str):
                found.append(("tools", index, "args", "agent", "config_path"))
    return found


def _value(data: Any, path: tuple[Key, ...]) -> Any:
    for key in path:
        data = data[key]
    return data


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


class _Loader:
    def __init__(self, folder: Path, given: Path) -> None:
        self.tree = AdkTree(folder)
        self.given = given  # the folder as the user wrote it, for display

    def shown(self, path: Path) -> str:
        return str(self.given / path.relative_to(self.tree.folder))

    def problem(self, diagnostic: Diagnostic) -> None:
        self.tree.diagnostics.append(diagnostic)

    def visit(self, path: Path, chain: list[Path]) -> None:
        if path in self.tree.files:
            return
        parsed = load(path, display=self.shown(path))
        self.tree.sources[parsed.source.name] = parsed.source
        # the parser's hints speak of specs (`agentspec: 1`); an Agent Config has none
        self.tree.diagnostics += [replace(d, hint=None) for d in parsed.diagnostics]
        if not parsed.ok or parsed.positions is None:
            return
        file = AdkFile(path, parsed.source.name, parsed.value, parsed.positions)
        if not self.as_adk_reads(file, parsed.source.text):
            return
        self.tree.files[path] = file
        schema = check_schema(file)
        self.tree.diagnostics += schema
        for ref in references(file.data):
            if len(chain) > MAX_AGENT_DEPTH:
                self.problem(codes.AGENT_TREE_TOO_DEEP(
                    f"Agent Config files nest more than {MAX_AGENT_DEPTH} levels deep",
                    file.at(*ref), hint="flatten the tree"))
                return
            target = self.target(file, ref, chain)
            if target is not None:
                self.tree.refs[(path, ref)] = target
                if target not in chain:
                    self.visit(target, [*chain, target])

    def as_adk_reads(self, file: AdkFile, text: str) -> bool:
        """Adopt PyYAML's reading where YAML 1.1 differs (False: ADK cannot read it)."""
        theirs = adk_reading(text)
        if not isinstance(theirs, dict):
            self.problem(codes.ADK_SCHEMA("ADK's YAML reader (PyYAML) cannot read this file "
                                          "as a mapping", file.at()))
            return False
        for where, value in list(differences(file.data, theirs)):
            self.problem(codes.ADK_YAML_11(
                f"ADK reads this value as {describe(value)} (YAML 1.1)", file.at(*where),
                hint="quote it in the Agent Config if that is not what was meant"))
            file.data = adopt(file.data, where, value)
        return True

    def target(self, file: AdkFile, ref: tuple[Key, ...], chain: list[Path]) -> Path | None:
        """The file a `config_path` names, or None after reporting why it cannot be used."""
        written = str(_value(file.data, ref))
        span = file.at(*ref)
        if os.path.isabs(written):
            self.problem(codes.ADK_CONFIG_PATH(
                f"`{written}` is an absolute path", span,
                hint="ADK refuses absolute paths: write it relative to this file"))
            return None
        target = resolved(file.path.parent / written)
        if not _inside(target, file.path.parent) or not _inside(target, self.tree.folder):
            self.problem(codes.ADK_CONFIG_PATH(
                f"`{written}` leads outside the agent folder", span,
                hint="keep every Agent Config file in the folder being imported, below the "
                "file that names it (as ADK requires)"))
            return None
        if not is_file(target):
            self.problem(codes.ADK_CONFIG_PATH(f"`{written}` names no file", span,
                                               hint="paths are relative to this file"))
            return None
        if target in chain:
            start = self.tree.files[target]
            self.problem(codes.ADK_CYCLE(
                f"`{written}` leads back to `{start.shown}`, which contains this file", span,
                related=[Related(start.at(key=True), "the circle starts here")],
                hint="an agent cannot contain itself: break the circle"))
            return None
        return target


def load_adk(path: Path) -> AdkTree:
    """Load the Agent Config tree at `path`: an agent folder (its `root_agent.yaml`) or one
    YAML file; every problem is a diagnostic."""
    given_folder = path if is_dir(path) else path.parent
    loader = _Loader(resolved(given_folder), given_folder)
    root = resolved(path / ROOT_FILE if is_dir(path) else path)
    if not is_file(root):
        loader.problem(codes.ADK_UNREADABLE(
            f"`{path / ROOT_FILE if is_dir(path) else path}` does not exist or is not a file",
            None, hint="give an agent folder holding root_agent.yaml, or a YAML file"))
        return loader.tree
    if not _inside(root, loader.tree.folder):
        loader.problem(codes.ADK_UNREADABLE(
            f"`{path / ROOT_FILE if is_dir(path) else path}` is a link leading outside "
            f"`{given_folder}`", None, hint="import the folder the file really is in"))
        return loader.tree
    loader.tree.root = root
    loader.visit(root, [root])
    return loader.tree
