"""What looks like a secret written into a spec or an Agent Config: by the name it is given
(a header, an argument, a query parameter) or by its shape (`Bearer ...`, a provider key
prefix). Validate refuses literal ones (AS287) and `import adk` moves them to `${env.X}`."""

from __future__ import annotations

import re
from functools import cache

__all__ = ["secret_flag", "secret_name", "secret_value"]

_NAME = re.compile(r"(?i)token|secret|passw|pwd|key|auth|credential|cookie|signature|"
                   r"\bsig\b|\bpat\b|^x-api-|^api-")
_FLAG = re.compile(r"^--?([A-Za-z0-9][A-Za-z0-9_.-]*)(=(.*))?$", re.DOTALL)


def secret_name(name: str) -> bool:
    """Whether a value given this name (a header, an argument, a query parameter, an
    environment variable) is taken for a secret."""
    return bool(_NAME.search(name))


@cache
def _value() -> re.Pattern[str]:
    """The shapes of credentials; compiled when first asked (about 2 ms: validate asks only
    for a LiteLLM model's `args`)."""
    return re.compile(r"(?i)\b(bearer|basic|token)\s+\S|^(sk|pk|rk)-[A-Za-z0-9_-]{8,}|"
                      r"^(ghp|gho|ghs|ghu|github_pat|glpat|xox[abprs])[-_][A-Za-z0-9_-]{8,}|"
                      r"^AKIA[0-9A-Z]{12,}|^AIza[0-9A-Za-z_-]{20,}")


def secret_value(value: str) -> bool:
    """Whether `value` has the shape of a credential, whatever it is called."""
    return bool(_value().search(value.strip()))


def secret_flag(arg: str) -> tuple[str, str | None] | None:
    """For a command-line argument naming a secret (`--api-key=...`, `--token`): the flag's
    name and its value when the argument holds it (`None`: the value is the next argument);
    None for any other argument."""
    match = _FLAG.match(arg)
    if match is None or not secret_name(match.group(1)):
        return None
    return match.group(1), match.group(3)
