"""Parse: YAML text -> plain data + a position tree, with diagnostics."""

from agentspec.parse.loader import (
    MAX_BYTES,
    MAX_NODES,
    Parsed,
    load,
    load_text,
    read_text,
    type_name,
)
from agentspec.parse.positions import Key, Path, PosNode

__all__ = ["MAX_BYTES", "MAX_NODES", "Key", "Parsed", "Path", "PosNode", "load", "load_text",
           "read_text", "type_name"]
