"""Which eval file belongs to a spec when none is named: `evals/<stem>.yaml` beside it, as
`scenarios/<stem>.yaml` is its scenario file (`agentspec.testing.discover`)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["default_evals"]


def default_evals(spec: Path) -> Path | None:
    """The spec's eval file, or None when it has none."""
    found = spec.parent / "evals" / f"{spec.stem}.yaml"
    return found if found.is_file() else None
