"""Which scenario file belongs to a spec when none is named: `scenarios/<stem>.yaml` beside
it, where `<stem>` is the spec file's name without `.yaml` (what `agentspec init` writes and
the shipped specs use: `specs/deep_agent.yaml` has `specs/scenarios/deep_agent.yaml`, though
its `name:` is `dev_assistant`). A project whose scenario file is named after the spec's
`name:` (as older docs said) still has it found, when no file of the stem is there."""

from __future__ import annotations

from pathlib import Path

from agentspec.parse import load

__all__ = ["default_scenarios", "scenarios_by_name"]


def default_scenarios(spec: Path) -> Path | None:
    """The spec's scenario file, or None when it has none."""
    folder = spec.parent / "scenarios"
    by_stem = folder / f"{spec.stem}.yaml"
    if by_stem.is_file():
        return by_stem
    parsed = load(spec)
    return scenarios_by_name(spec, parsed.value.get("name") if isinstance(parsed.value, dict)
                             else None)


def scenarios_by_name(spec: Path, name: object) -> Path | None:
    """The scenario file named after the spec's `name:` (a name that is one file name)."""
    if isinstance(name, str) and name and "/" not in name and "\\" not in name \
            and not name.startswith("."):
        by_name = spec.parent / "scenarios" / f"{name}.yaml"
        if by_name.is_file():
            return by_name
    return None
