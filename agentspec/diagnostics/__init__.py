"""Diagnostics: values, the code registry and renderers."""

from agentspec.diagnostics.codes import REGISTRY, Code, lookup
from agentspec.diagnostics.model import Diagnostic, Related, Severity
from agentspec.diagnostics.render import FORMATS, normalize, render
from agentspec.diagnostics.suggest import did_you_mean

__all__ = ["FORMATS", "REGISTRY", "Code", "Diagnostic", "Related", "Severity", "did_you_mean",
           "lookup", "normalize", "render"]
