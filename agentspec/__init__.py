"""agentspec: author Google ADK agents in YAML.

The public API; names are imported when first used so that `import agentspec` stays cheap.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

# LiteLLM downloads its model cost map from GitHub when it is imported, unless told to use the
# copy it ships with. ADK's model registry imports it for any `provider/model` id (in build,
# and in a generated package), so it is set here, before any module of ours or ADK's can
# import it: validate, build and the agents never reach the network by importing it.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

if TYPE_CHECKING:
    from agentspec.diagnostics import Diagnostic, Severity, render
    from agentspec.language import Spec
    from agentspec.language.schema import json_schema
    from agentspec.parse import Parsed, load
    from agentspec.validate.check import CheckResult, check

__all__ = ["CheckResult", "Diagnostic", "Parsed", "Severity", "Spec", "check", "json_schema",
           "load", "render"]

_HOME = {"CheckResult": "agentspec.validate.check", "check": "agentspec.validate.check",
         "Diagnostic": "agentspec.diagnostics", "Severity": "agentspec.diagnostics",
         "render": "agentspec.diagnostics", "Parsed": "agentspec.parse",
         "load": "agentspec.parse", "Spec": "agentspec.language",
         "json_schema": "agentspec.language.schema"}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'agentspec' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME[name]), name)
