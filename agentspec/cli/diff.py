"""`agentspec diff`: what a spec change changes, with a risk class per change."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import click

from agentspec.cli.common import environment_option, print_diagnostics
from agentspec.diagnostics import REGISTRY, did_you_mean
from agentspec.diagnostics.config import find_config, load_config
from agentspec.diagnostics.model import Category, Risk
from agentspec.diagnostics.selectors import ChangeSelector, change_selector, split


def _git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise click.UsageError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def _inside(member: tarfile.TarInfo, destination: str) -> tarfile.TarInfo | None:
    """tarfile's `data` filter, skipping (instead of failing on) what it refuses: a link
    that points outside the extracted tree, an absolute path. The spec never reads those:
    everything it names must be inside the project."""
    try:
        return tarfile.data_filter(member, destination)
    except tarfile.FilterError:
        return None


def parse_side(given: str) -> tuple[str | None, str]:
    """(revision, path) of an OLD or NEW argument, by its spelling alone (never by what
    exists on disk, which a pull request controls): `REV:path` is a revision's file, read
    from git; an argument without `:`, or one that starts like a path (`/`, `./`, `../`), is
    a file. A file whose name holds `:` is given as `./name`."""
    if ":" not in given or given.startswith(("/", "./", "../")) or Path(given).is_absolute():
        return None, given
    revision, path = given.split(":", 1)
    if not revision or revision.startswith("-"):  # never an option to git
        raise click.UsageError(f"{given!r} is neither a file nor REV:path")
    return revision, path


def _materialize(revision: str | None, path: str, stack: ExitStack
                 ) -> tuple[Path, dict[str, str]]:
    """The spec file of one side: a file as given, or the file at a revision, extracted from
    git into a temporary tree (the whole revision, so imports, instruction files and
    modules are there too). A spec the revision does not have comes back as a path that is
    not a file."""
    if revision is None:
        return Path(path), {}
    root = Path(_git("rev-parse", "--show-toplevel").strip())
    if path.startswith("./"):  # relative to here, as git allows
        path = _git("rev-parse", "--show-prefix").strip() + path[2:]
    elif Path(path).is_absolute():  # a path in the working tree: the same file at REV
        try:
            path = Path(path).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            raise click.UsageError(f"{path} is not in the repository {root}") from None
    archive = subprocess.run(["git", "archive", "--format=tar", revision], cwd=root,
                             capture_output=True, check=False)
    if archive.returncode != 0:
        named = f"{revision}:{path}"
        hint = f"; to compare the file {named!r}, write ./{named}" if Path(named).exists() \
            else ""
        raise click.UsageError(f"cannot read revision {revision!r}: "
                               f"{archive.stderr.decode(errors='replace').strip()}{hint}")
    tree = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="agentspec-diff-")))
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(tree, filter=_inside)
    spec = (tree / path).resolve()
    if not spec.is_relative_to(tree.resolve()):
        raise click.UsageError(f"{path} is outside the repository")
    return spec, {"prefix": str(tree), "revision": revision}


def _display(result: Any, where: dict[str, str]) -> dict[str, str]:
    """Files inside a revision's temporary tree shown as REV:path."""
    if not where:
        return {}
    shown = {}
    for name, source in result.sources.items():
        try:
            inside = Path(source.path).resolve().relative_to(Path(where["prefix"]).resolve())
        except ValueError:
            continue
        shown[name] = f"{where['revision']}:{inside.as_posix()}"
    return shown


def _choices(values: tuple[str, ...], option: str) -> tuple[ChangeSelector, ...]:
    """`--fail-on`/`--except` entries; one that names nothing is a usage error."""
    found: list[ChangeSelector] = []
    for entry in split(values):
        parsed = change_selector(entry)
        if parsed is None:
            words = [*Risk, *Category, *(c.name for c in REGISTRY.values() if c.category)]
            hint = did_you_mean(entry, words)
            raise click.UsageError(f"{option} {entry!r} is no risk, category or diff code"
                                   + (f" ({hint})" if hint else ""))
        found.append(parsed)
    if values and not found:
        raise click.UsageError(f"{option} names nothing")
    return tuple(found)


def _config(found: list[tuple[Path, dict[str, str], str]]) -> Path | None:
    """The project's config file. When the old version comes from a revision, that
    revision's (a change must not loosen its own gate: a pull request that adds `except =
    ["security"]` is judged by the base's settings); else the one beside the new version's
    file (the old's, when only it is a file), else the one here."""
    (old, where, _), (new, _, _) = found
    if where:
        return find_config(old, top=Path(where["prefix"]))
    for path in (new, old):
        if path.is_file():
            return find_config(path)
    return find_config(Path.cwd())


def _text(changes: list[Any]) -> str:
    lines: list[str] = []
    agent = None
    for change in changes:
        if change.agent != agent:
            agent = change.agent
            lines.append(f"{agent}")
        places = " ".join(f"{k}: {v}" for k, v in (("old", change.old), ("new", change.new))
                          if v is not None)
        lines.append(f"  {change.risk.upper():<6} {change.change:<24} {change.reason}"
                     + (f"  ({places})" if places else ""))
        lines += [f"      {line}" for line in change.detail.splitlines()]
    return "\n".join(lines)


def _left_out(counts: Counter[Risk], excepted: tuple[ChangeSelector, ...]) -> str:
    total = sum(counts.values())
    if not total:
        return ""
    risks = ", ".join(f"{counts[r]} {r}" for r in Risk if counts[r])
    return f"{total} more left out by `except` ({risks}): " + \
        ", ".join(f"`{e.text}`" for e in excepted)


@click.command(name="diff")
@click.argument("old", required=False)
@click.argument("new", required=False)
@click.option("--base", metavar="REV", help="Compare REV:NEW with NEW (NEW: the file given).")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]),
              default="text", show_default=True)
@click.option("--fail-on", "fail_on", multiple=True, metavar="WHAT",
              help="Exit 1 when a change is found that this names: a risk (high, medium, "
              "low: that risk or higher), a category (security, behaviour, operations, "
              "cosmetic) or diff codes (AS5xx, a name, a prefix such as AS57); "
              "comma-separated, repeatable; replaces the config file's `fail-on`.")
@click.option("--except", "except_", multiple=True, metavar="WHAT",
              help="Leave out the changes this names: a risk (that risk only), a category "
              "or diff codes; comma-separated, repeatable; adds to the config file's "
              "`except`.")
@environment_option
def command(old: str | None, new: str | None, base: str | None, fmt: str,
            fail_on: tuple[str, ...], except_: tuple[str, ...],
            environment: str | None) -> None:
    """Compare two versions of a spec: OLD and NEW are files or REV:path (from git; a file
    whose name holds ':' is given as ./NAME). With --base REV, give only the file: its
    version at REV (always from git) is compared with the working tree.

    `agentspec.toml`, or `[tool.agentspec.diff]` in `pyproject.toml`, sets project
    defaults for `fail-on` and `except`."""
    from agentspec.review.diff import RISKS, absent_side, compare, load_side
    from agentspec.review.markdown import markdown

    failing = _choices(fail_on, "--fail-on") if fail_on else None
    excepted = _choices(except_, "--except")

    if base is not None:
        if old is None or new is not None:
            raise click.UsageError("with --base, give one spec file")
        if not base or base.startswith("-"):  # never an option to git
            raise click.UsageError(f"--base {base!r} is not a revision")
        # the old side is always the file at REV, never a file in the working tree
        at_base = str(Path(old).resolve()) if Path(old).is_absolute() else f"./{old}"
        wanted = [(base, at_base), (None, old)]
        old, new = f"{base}:{at_base}", old
    elif old is None or new is None:
        raise click.UsageError("give OLD and NEW (or one file with --base REV)")
    else:
        wanted = [parse_side(old), parse_side(new)]
    sides = []
    with ExitStack() as stack:
        found = [(*_materialize(revision, path, stack), label)
                 for (revision, path), label in zip(wanted, (old, new), strict=True)]
        # a spec added or removed since a revision is compared with no spec
        missing = [not path.exists() and (where or base is not None)
                   for path, where, _ in found]
        if all(missing):
            raise click.UsageError(f"neither {old} nor {new} exists")
        for (path, where, label), absent in zip(found, missing, strict=True):
            if absent:
                sides.append(absent_side(path, label))
                continue
            side = load_side(path, label, environment=environment,
                             project=Path(where["prefix"]) if where else None)
            side.display = _display(side.result, where)
            if side.app is None:
                click.echo(f"agentspec: {label} cannot be compared; it has errors:", err=True)
                print_diagnostics(side.problems or side.result.diagnostics,
                                  side.result.sources)
                sys.exit(1)
            sides.append(side)
        config = load_config(_config(found))
        if config.diagnostics:
            click.echo("agentspec: the config file has errors:", err=True)
            print_diagnostics(list(config.diagnostics), {config.source.name: config.source}
                              if config.source is not None else {})
            sys.exit(1)
        changes = compare(sides[0], sides[1])
    failing = failing if failing is not None else config.fail_on or ()
    excepted = (*config.except_, *excepted)
    left_out = Counter(c.risk for c in changes
                       if any(e.matches(c.code, c.risk, c.category) for e in excepted))
    changes = [c for c in changes if not any(e.matches(c.code, c.risk, c.category)
                                             for e in excepted)]
    counts = Counter(c.risk for c in changes)
    # what `except` left out is always said: a config file's may be one the reader never saw
    said = _left_out(left_out, excepted)
    if fmt == "json":
        click.echo(json.dumps({"changes": [c.to_dict() for c in changes],
                               "summary": {r: counts[r] for r in RISKS},
                               "left_out": {r: left_out[r] for r in RISKS}}, indent=2))
    elif fmt == "markdown":
        click.echo(markdown(changes, counts, new) + (f"\n\n{said}" if said else ""))
    else:
        if changes:
            click.echo(_text(changes))
        click.echo(f"{len(changes)} change(s): {counts[Risk.HIGH]} high, "
                   f"{counts[Risk.MEDIUM]} medium, {counts[Risk.LOW]} low"
                   + (f"; {said}" if said else ""))
    if any(f.matches(c.code, c.risk, c.category, or_higher=True) for f in failing
           for c in changes):
        sys.exit(1)
