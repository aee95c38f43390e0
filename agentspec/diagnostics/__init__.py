"""Diagnostics: values, the code registry and renderers."""

from agentspec.diagnostics.codes import REGISTRY, Code, lookup
from agentspec.diagnostics.model import Diagnostic, Related, Severity
from agentspec.diagnostics.render import FORMATS, normalize, render

__all__ = ["FORMATS", "REGISTRY", "Code", "Diagnostic", "Related", "Severity", "lookup",
           "normalize", "render"]
