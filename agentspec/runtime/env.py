"""`${env.X}` and `${env.X:-default}` read when the agent is loaded, never stored in files."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

__all__ = ["MissingEnvironmentVariable", "expand"]

_TOKEN = re.compile(r"\$\$\{|\$\{env\.([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class MissingEnvironmentVariable(RuntimeError):
    """An `${env.X}` without default whose variable is not set."""


def expand(template: str, environ: Mapping[str, str] | None = None) -> str:
    """Replace `${env.X}` / `${env.X:-default}` from the environment; `$${` is a literal `${`."""
    values = os.environ if environ is None else environ

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$${":
            return "${"
        name, default = match.group(1), match.group(2)
        if name in values:
            return values[name]
        if default is not None:
            return default
        raise MissingEnvironmentVariable(
            f"the environment variable {name} is not set (the spec reads it with ${{env.{name}}})")

    return _TOKEN.sub(replace, template)
