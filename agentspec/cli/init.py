"""`agentspec init`: a working spec, its tools, a scenario test and a README section."""

from __future__ import annotations

import re
import shlex
import sys
import unicodedata
from importlib import resources
from pathlib import Path, PurePosixPath

import click

from agentspec import safefs
from agentspec.language.common import IDENTIFIER, is_reserved_word
from agentspec.language.schema import schema_text
from agentspec.validate.semantic.references import GENERATED_IMPORTS

TEMPLATES = ("deep", "router", "planner", "pipeline")
#: at most this much of an existing README or .gitignore is read (init appends to them)
MAX_README = 2 * 1024 * 1024
#: the JSON Schema beside the spec, which the spec's modeline names (for editors)
SCHEMA = "agentspec.schema.json"
SCENARIO_SCHEMA = "scenario.schema.json"
MODELINE = f"# yaml-language-server: $schema={SCHEMA}\n"
#: what .gitignore gets: ADK's local sessions and artifacts (`adk web`, `adk run`), and
#: agentspec's job and session stores (`sqlite:///.agentspec/...`)
IGNORED = (".adk/", ".agentspec/")


def _project_name(directory: Path) -> str:
    """The directory's name as a spec name: ASCII letters, digits and underscores (`café`
    becomes `cafe`, as a person would spell it without accents)."""
    folded = unicodedata.normalize("NFKD", directory.resolve().name)
    ascii_name = folded.encode("ascii", "ignore").decode().lower()
    name = re.sub(r"[^a-z0-9_]+", "_", ascii_name).strip("_") or "agent"
    if name[0].isdigit() or _taken(name):
        name = f"agent_{name}"
    return name


def _taken(name: str) -> bool:
    """A name validate refuses for an app (AS106): a reserved word, ADK's `user`, a module
    the generated package would hide (the standard library's, what generated code imports)."""
    return is_reserved_word(name) or name == "user" or name in sys.stdlib_module_names or \
        name in GENERATED_IMPORTS


def _files(template: str, name: str) -> dict[PurePosixPath, str]:
    root = resources.files("agentspec.init") / "templates" / template

    def read(path: str) -> str:
        return (root / path).read_text(encoding="utf-8").replace("__NAME__", name)

    return {PurePosixPath(f"{name}.yaml"): MODELINE + read("spec.yaml"),
            PurePosixPath(f"{name}_tools.py"): read("tools.py"),
            PurePosixPath("scenarios") / f"{name}.yaml": read("scenarios/spec.yaml")}


def _fail(message: str) -> None:
    click.echo(f"agentspec: {message}", err=True)
    sys.exit(1)


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
    if not re.fullmatch(IDENTIFIER, name) or _taken(name) or name.startswith("_"):
        raise click.UsageError("--name must be an ASCII Python identifier that is not a "
                               "reserved word, `user` or a module's name, and starts with a "
                               f"letter (it names the spec and its package), not {name!r}")
    files = _files(template, name)
    section = (resources.files("agentspec.init") / "templates" / template / "README.md"
               ).read_text(encoding="utf-8").replace("__NAME__", name)
    try:
        _write(directory, files, section)
    except OSError as exc:
        _fail(str(exc) if isinstance(exc, safefs.UnsafePath)
              else f"cannot write in {directory}: {exc.strerror or exc}")
    here = directory.resolve() == Path.cwd().resolve()
    click.echo("next: " + ("" if here else f"cd {shlex.quote(str(directory))} && ")
               + f"agentspec test {name}.yaml")


def _write(directory: Path, files: dict[PurePosixPath, str], section: str) -> None:
    """Everything is checked first, so a refusal leaves nothing half-written; nothing is
    written through a link, and no existing file is replaced except the README and
    .gitignore (appended to)."""
    with safefs.directory(directory, create=True) as project:
        readme, ignored = _check(project, directory, files)
        existing = readme or ""
        for path, text in files.items():
            target = directory / path
            if len(path.parts) == 2:
                with safefs.subdirectory(project, path.parts[0], create=True,
                                         shown=str(target.parent)) as folder:
                    safefs.write_file(folder, path.name, text.encode("utf-8"),
                                      shown=str(target), replace=False)
            else:
                safefs.write_file(project, path.name, text.encode("utf-8"), shown=str(target),
                                  replace=False)
            click.echo(f"wrote {target}")
        joined = existing + ("\n" if existing and not existing.endswith("\n\n") else "") + section
        safefs.write_file(project, "README.md", joined.encode("utf-8"),
                          shown=str(directory / "README.md"), replace=True)
        click.echo(f"{'added a section to' if existing else 'wrote'} {directory / 'README.md'}")
        _ignore(project, directory, ignored)
        _schemas(project, directory)


def _schemas(project: int, directory: Path) -> None:
    """The JSON Schemas the modelines of the spec and its scenario file name, written
    beside the spec unless there already (an editor reads them; nothing is fetched)."""
    from agentspec.testing.schema import scenario_schema_text

    for name, text, flag in ((SCHEMA, schema_text, ""),
                             (SCENARIO_SCHEMA, scenario_schema_text, " --scenario")):
        if safefs.kind(project, name) == "missing":
            safefs.write_file(project, name, text().encode("utf-8"),
                              shown=str(directory / name), replace=False)
            click.echo(f"wrote {directory / name} (refresh it after upgrading: "
                       f"agentspec schema{flag} -o {name})")


def _ignore(project: int, directory: Path, text: str | None) -> None:
    """Appends to .gitignore (or writes it) the IGNORED entries it lacks; one the file
    names, or un-ignores (`!.adk/`), is left to it."""
    present = {line.strip().lstrip("!").strip("/") for line in (text or "").splitlines()}
    missing = [entry for entry in IGNORED if entry.strip("/") not in present]
    if not missing:
        return
    before = text or ""
    joined = before + ("\n" if before and not before.endswith("\n") else "") + \
        "".join(f"{entry}\n" for entry in missing)
    safefs.write_file(project, ".gitignore", joined.encode("utf-8"),
                      shown=str(directory / ".gitignore"), replace=True)
    click.echo(f"{'added' if text is not None else 'wrote'} {', '.join(missing)} "
               f"{'to' if text is not None else 'in'} {directory / '.gitignore'}")


def _check(project: int, directory: Path, files: dict[PurePosixPath, str]
           ) -> tuple[str | None, str | None]:
    """Refuse, before anything is written, what init would overwrite or could not use;
    returns the texts of the README and .gitignore (None for one there is not)."""
    taken = [str(directory / path) for path in files
             if len(path.parts) == 1 and safefs.kind(project, path.name) != "missing"]
    folder = safefs.kind(project, "scenarios")
    if folder == "directory":
        with safefs.subdirectory(project, "scenarios", create=False,
                                 shown=str(directory / "scenarios")) as scenarios:
            taken += [str(directory / path) for path in files if len(path.parts) == 2
                      and safefs.kind(scenarios, path.name) != "missing"]
    elif folder != "missing":  # a file, or a link that would take the scenario elsewhere
        taken.append(str(directory / "scenarios"))
    if taken:
        _fail(f"not overwriting {', '.join(sorted(taken))}; choose another directory or "
              "--name")
    if safefs.kind(project, SCHEMA) not in ("missing", "file"):
        raise safefs.UnsafePath(f"`{directory / SCHEMA}` is not a regular file")
    return _text(project, directory, "README.md"), _text(project, directory, ".gitignore")


def _text(project: int, directory: Path, name: str) -> str | None:
    """The text of the file `name` init appends to (None when there is none)."""
    if safefs.kind(project, name) == "missing":
        return None
    shown = directory / name
    raw = safefs.read_file(project, name, shown=str(shown), limit=MAX_README + 1)
    if len(raw) > MAX_README:
        raise safefs.UnsafePath(f"`{shown}` is larger than {MAX_README:,} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise safefs.UnsafePath(f"`{shown}` is not UTF-8 text, so init cannot add to it") \
            from None
