"""The converted spec as YAML text (with the import's notes as comments) and the shim module."""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import LiteralScalarString

from agentspec.adkimport.tools import Shim
from agentspec.parse import load_text

__all__ = ["shim_text", "spec_text"]


def _node(value: Any, literal: bool) -> Any:
    if isinstance(value, Mapping):
        node = CommentedMap()
        for key, item in value.items():
            node[key] = _node(item, literal)
        return node
    if isinstance(value, list):
        return CommentedSeq(_node(item, literal) for item in value)
    if literal and isinstance(value, str) and "\n" in value:
        return LiteralScalarString(value)
    return value


def _dump(spec: dict[str, Any], header: list[str], notes: Mapping[str, list[str]],
          literal: bool) -> str:
    document = _node(spec, literal)
    document.yaml_set_start_comment("\n".join(header))
    agents = document.get("agents")
    for name, lines in notes.items():
        if isinstance(agents, CommentedMap) and name in agents:
            agents.yaml_set_comment_before_after_key(name, before="\n".join(lines), indent=2)
    yaml = YAML()
    yaml.width = 100
    yaml.indent(mapping=2, sequence=4, offset=2)
    out = io.StringIO()
    yaml.dump(document, out)
    return out.getvalue()


def spec_text(spec: dict[str, Any], header: list[str],
              notes: Mapping[str, list[str]]) -> str:
    """YAML for `spec`, multi-line text as literal blocks when that reads back the same."""
    text = _dump(spec, header, notes, literal=True)
    if load_text(text, path=Path("spec.yaml")).value != spec:  # e.g. trailing spaces in a line
        text = _dump(spec, header, notes, literal=False)
    return text


def shim_text(shims: list[Shim], origin: str) -> str:
    """A module whose functions build tools as ADK's Agent Config does. Module and attribute
    names were checked to be identifiers; the config path is written through repr()."""
    lines = [f"# Written by `agentspec import adk` from {origin!r}.",
             "# Builds tools the way ADK's Agent Config does (from_config / a factory called with",
             "# ToolArgsConfig); the spec passes each tool's `args`.",
             "from __future__ import annotations", "", "import importlib", "import os",
             "from typing import Any", "",
             "from agentspec.runtime.adk_tools import adk_tool", ""]
    lines += ["", "_HERE = os.path.dirname(os.path.abspath(__file__))", ""]
    for shim in shims:
        lines += ["", f"def {shim.function}(**args: Any) -> Any:",
                  # imported by name: an `import` could rebind this module's own names
                  f"    found = importlib.import_module({shim.module!r})",
                  f"    return adk_tool(getattr(found, {shim.attribute!r}), args, "
                  f"os.path.join(_HERE, {shim.config!r}))", ""]
    return "\n".join(lines).rstrip("\n") + "\n"
