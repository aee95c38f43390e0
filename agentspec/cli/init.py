"""`agentspec init`: a working spec, its tools, a scenario test and a README section."""

from __future__ import annotations

import keyword
import re
import sys
from importlib import resources
from pathlib import Path

import click

TEMPLATES = ("deep", "router", "planner", "pipeline")


def _project_name(directory: Path) -> str:
    """The directory's name as a Python identifier (the spec's `name`, the package's)."""
    name = re.sub(r"\W+", "_", directory.resolve().name.lower()).strip("_") or "agent"
    if name[0].isdigit() or keyword.iskeyword(name):
        name = f"agent_{name}"
    return name


def _files(template: str, name: str) -> dict[Path, str]:
    root = resources.files("agentspec.init") / "templates" / template

    def read(path: str) -> str:
        return (root / path).read_text(encoding="utf-8").replace("__NAME__", name)

    return {Path(f"{name}.yaml"): read("spec.yaml"), Path(f"{name}_tools.py"): read("tools.py"),
            Path("scenarios") / f"{name}.yaml": read("scenarios/spec.yaml")}


@click.command(name="init")
@click.argument("directory", type=click.Path(path_type=Path), default=Path("."))
@click.option("--template", type=click.Choice(TEMPLATES), default="deep", show_default=True,
              help="deep: a planning, file-keeping deep agent; router: a routed help desk "
                   "with fallback; planner: a recursive planner; pipeline: draft, review, "
                   "polish.")
@click.option("--name", help="The spec's name (default: the directory's name).")
def command(directory: Path, template: str, name: str | None) -> None:
    """Start a project in DIRECTORY: a spec, its tools module, a scenario test and a README
    section, which pass `agentspec validate`, `build` and `test` as written. Existing files
    are never overwritten (the README gets the section appended)."""
    name = name or _project_name(directory)
    if not name.isidentifier() or keyword.iskeyword(name):
        raise click.UsageError(f"--name must be a Python identifier, not {name!r}")
    files = _files(template, name)
    taken = [str(directory / path) for path in files if (directory / path).exists()]
    if taken:
        click.echo(f"agentspec: not overwriting {', '.join(taken)}; choose another directory "
                   "or --name", err=True)
        sys.exit(1)
    for path, text in files.items():
        target = directory / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        click.echo(f"wrote {target}")
    section = (resources.files("agentspec.init") / "templates" / template / "README.md"
               ).read_text(encoding="utf-8").replace("__NAME__", name)
    readme = directory / "README.md"
    existing = readme.read_text(encoding="utf-8") if readme.exists() else ""
    readme.write_text(existing + ("\n" if existing and not existing.endswith("\n\n") else "")
                      + section, encoding="utf-8")
    click.echo(f"{'added a section to' if existing else 'wrote'} {readme}")
    click.echo(f"next: cd {directory} && agentspec test {name}.yaml")
