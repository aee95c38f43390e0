"""`agentspec import adk`: an ADK Agent Config tree (`root_agent.yaml` and the files it
names) as one spec, refused with positions where the spec cannot say the same thing.

Stages: `loader` (files with positions, `config_path` followed, ADK's own schema check),
`convert` (spec data, refusals and losses), `write` (YAML text, the shim module); then the
written spec is validated like any other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agentspec.adkimport.convert import Conversion, convert
from agentspec.adkimport.loader import AdkTree, load_adk
from agentspec.adkimport.write import shim_text, spec_text
from agentspec.diagnostics import Diagnostic, codes, normalize
from agentspec.project_files import display_name, is_dir, resolved
from agentspec.safefs import UnsafePath, directory, write_file
from agentspec.source import SourceFile

__all__ = ["SHIM_MODULE", "ImportResult", "default_output", "import_adk"]

SHIM_MODULE = "adk_shims.py"


@dataclass
class ImportResult:
    output: Path
    written: list[Path] = field(default_factory=list)
    #: the import's diagnostics (at the ADK files), then the written spec's
    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, SourceFile] = field(default_factory=dict)
    conversion: Conversion | None = None

    @property
    def ok(self) -> bool:
        return bool(self.written) and not any(d.is_error for d in self.diagnostics)


def default_output(path: Path) -> Path:
    """Beside the agent folder, so the folder's modules (`folder.tools.fn` in ADK's dotted
    paths) import from the spec's directory as they do from ADK's agents directory."""
    folder = resolved(path if is_dir(path) else path.parent)
    return folder.parent / f"{folder.name}.agentspec.yaml"


def _write(result: ImportResult, out: Path, text: str, force: bool) -> bool:
    try:
        with directory(out.parent, create=True) as parent:
            write_file(parent, out.name, text.encode(), shown=str(out), replace=force)
    except UnsafePath as exc:
        exists = "exists" in str(exc) and not force
        code = codes.ADK_OUTPUT_EXISTS if exists else codes.OUTPUT_UNUSABLE
        result.diagnostics.append(code(str(exc), None, hint="pass --force to replace it"
                                       if exists else None))
        return False
    result.written.append(out)
    return True


def import_adk(path: Path, *, output: Path | None = None, allow_loss: bool = False,
               write_shims: bool = False, force: bool = False) -> ImportResult:
    """Convert the Agent Config at `path` (a folder or a YAML file), write the spec (never
    over an existing file unless `force`) and validate it."""
    from agentspec.validate.check import check

    out = output if output is not None else default_output(path)
    result = ImportResult(out)
    tree: AdkTree = load_adk(path)
    result.sources.update(tree.sources)
    result.diagnostics += tree.diagnostics
    if tree.root is None or any(d.is_error for d in tree.diagnostics):
        result.diagnostics = normalize(result.diagnostics)
        return result
    conversion = convert(tree, allow_loss=allow_loss, write_shims=write_shims,
                         spec_dir=resolved(out).parent)
    result.conversion = conversion
    result.diagnostics += conversion.diagnostics
    if any(d.is_error for d in result.diagnostics):
        result.diagnostics = normalize(result.diagnostics)
        return result
    origin = "".join(c if c.isprintable() else "?" for c in display_name(tree.root))
    header = [f"Converted by `agentspec import adk` from {origin}.",
              "ADK reads any run of braces around a state name as state; here `{key}` reads "
              "state", "and `{{key}}` is the literal text `{key}`."]
    if conversion.shims and not _write(result, out.parent / SHIM_MODULE,
                                       shim_text(conversion.shims, origin), force):
        result.diagnostics = normalize(result.diagnostics)
        return result
    if _write(result, out, spec_text(conversion.spec, header, conversion.notes), force):
        checked = check(out)
        result.sources.update(checked.sources)
        result.diagnostics += checked.diagnostics
    result.diagnostics = normalize(result.diagnostics)
    return result
