"""agentspec: author Google ADK agents in YAML.

The public API (`agentspec.api`, and the types its functions return). Names are imported
when first used, so that `import agentspec` stays cheap: it imports neither google.adk nor
pydantic models. Stability: the names in `__all__` follow semantic versioning from 1.0;
before it, a minor release may change them and says so in its notes; everything else in the
package is internal.
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
    from agentspec.api import (
        GraphFormat,
        PathLike,
        SpecError,
        build,
        build_package,
        check,
        check_text,
        diff,
        graph,
        open_backend,
        run_scenarios,
    )
    from agentspec.diagnostics import Diagnostic, Severity, render
    from agentspec.language import Spec
    from agentspec.language.schema import json_schema
    from agentspec.parse import Parsed, load
    from agentspec.review.changes import Change
    from agentspec.testing.runner import ScenarioResult, ScenarioRun
    from agentspec.validate.check import CheckResult

    __version__: str

__all__ = ["Change", "CheckResult", "Diagnostic", "GraphFormat", "Parsed", "PathLike",
           "ScenarioResult", "ScenarioRun", "Severity", "Spec", "SpecError", "__version__",
           "build", "build_package", "check", "check_text", "diff", "graph", "json_schema",
           "load", "open_backend", "render", "run_scenarios"]

_HOME = {
    **dict.fromkeys(("GraphFormat", "PathLike", "SpecError", "build", "build_package",
                     "check", "check_text", "diff", "graph", "open_backend",
                     "run_scenarios"),
                    "agentspec.api"),
    "CheckResult": "agentspec.validate.check", "Diagnostic": "agentspec.diagnostics",
    "Severity": "agentspec.diagnostics", "render": "agentspec.diagnostics",
    "Parsed": "agentspec.parse", "load": "agentspec.parse", "Spec": "agentspec.language",
    "json_schema": "agentspec.language.schema", "Change": "agentspec.review.changes",
    "ScenarioResult": "agentspec.testing.runner", "ScenarioRun": "agentspec.testing.runner",
}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    from agentspec.contract.extras import DISTRIBUTION

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        return _version()
    if name not in _HOME:
        raise AttributeError(f"module 'agentspec' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME[name]), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
