"""`agentspec import adk`: golden refusals and losses at their positions, the conversion of
Agent Config trees, the written spec, the CLI."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentspec.adkimport import ImportResult, import_adk
from agentspec.adkimport.text import instruction
from agentspec.cli import cli
from agentspec.diagnostics import Diagnostic, Severity
from agentspec.parse import load

CASES = Path(__file__).parent / "adk_cases"
CONFIGS = Path(__file__).parent / "data" / "adk_configs"


def _flags(folder: Path) -> set[str]:
    flags = folder / "flags"
    return set(flags.read_text().split()) if flags.exists() else set()


def _where(diagnostic: Diagnostic, folder: Path) -> str:
    span = diagnostic.span
    assert span is not None, diagnostic
    return f"{Path(span.file).relative_to(folder).as_posix()}:{span.start.line}:" \
        f"{span.start.col} {diagnostic.code}"


def run_case(folder: Path, out: Path) -> tuple[list[str], object]:
    path = folder / (folder / "path").read_text().strip() if (folder / "path").exists() \
        else folder
    flags = _flags(folder)
    result = import_adk(path, output=out, allow_loss="--allow-loss" in flags,
                        write_shims="--write-shims" in flags)
    found = [_where(d, folder) for d in result.diagnostics
             if d.span is not None and Path(d.span.file).is_relative_to(folder)]
    return found, result


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_golden_import(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = CASES / case
    monkeypatch.chdir(CASES.parent.parent)
    found, result = run_case(folder.relative_to(Path.cwd()), tmp_path / "out.yaml")
    status, *expected = (folder / "expected.txt").read_text().splitlines()
    assert found == expected
    assert isinstance(result, ImportResult)
    if status == "# refused":
        assert not result.written and not (tmp_path / "out.yaml").exists()
        assert any(d.is_error for d in result.diagnostics)
        return
    assert status == "# converts" and result.ok, result.diagnostics
    text = (tmp_path / "out.yaml").read_text()
    if "--allow-loss" in _flags(folder):  # each loss is a warning and a comment
        assert all(d.severity is not Severity.ERROR for d in result.diagnostics)
        for code in {line.split()[-1] for line in expected} - {"AS615"}:
            assert f"({code}, --allow-loss)" in text
        # a hint says what to do about it ("dropped (--allow-loss)" only said what happened)
        losses = {line.split()[-1] for line in expected} - {"AS615", "AS618"}
        assert all((d.hint or "").startswith("Check that the agent does without it")
                   for d in result.diagnostics if d.code in losses)


@pytest.mark.parametrize(("adk", "spec"), [
    ("Hi {name}.", "Hi {name}."),
    ("Hi {{name}} and {{{name}}}.", "Hi {name} and {name}."),  # any run of braces is state
    ("{ name } {{name?}}", "{name} {name?}"),
    ("{{app:tier}} {user:lang?} {{temp:step}}", "{app:tier} {user:lang?} {temp:step}"),
    ("{artifact.report.txt} {{artifact.notes}}", "{artifact.report.txt} {artifact.notes}"),
    ('JSON like {"a": 1} or {{not a key}} stays', 'JSON like {"a": 1} or {{not a key}} stays'),
    ("Costs ${price} and \\{x}", "Costs $${price} and \\{x}"),
    ("{bad:prefix}", "{bad:prefix}"),
])
def test_instruction_as_agentspec_reads_it(adk: str, spec: str) -> None:
    assert instruction(adk) == spec


def test_relative_references_use_the_configs_package(tmp_path: Path) -> None:
    from agentspec.adkimport.loader import AdkFile
    from agentspec.adkimport.tools import code_ref
    from agentspec.parse import PosNode
    from agentspec.source import Span

    file = AdkFile(tmp_path / "my_agent" / "root_agent.yaml", "x", {},
                   PosNode(Span.at("x", 1, 1)))
    assert code_ref(file, ".tools.roll") == "my_agent.tools:roll"
    assert code_ref(file, "pkg.mod.fn") == "pkg.mod:fn"


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, ["import", "adk", *args], prog_name="agentspec")


def test_cli_exit_codes_and_no_overwrite(tmp_path: Path) -> None:
    folder = tmp_path / "seq_pipeline"
    shutil.copytree(CONFIGS / "seq_pipeline", folder)
    out = tmp_path / "seq_pipeline.agentspec.yaml"
    result = _invoke(str(folder))
    assert result.exit_code == 0, result.output
    assert load(out).value["root"] == "code_pipeline"
    out.write_text("# mine\n")
    again = _invoke(str(folder))  # never over an existing file
    assert again.exit_code == 1 and "AS617" in again.output
    assert out.read_text() == "# mine\n"
    forced = _invoke(str(folder), "--force")
    assert forced.exit_code == 0 and "agentspec: 1" in out.read_text()
    other = tmp_path / "elsewhere" / "spec.yaml"
    assert _invoke(str(folder / "root_agent.yaml"), "-o", str(other)).exit_code == 0
    assert other.exists()


def test_cli_refusal_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out.yaml"
    result = _invoke(str(CASES / "model_code"), "-o", str(out))
    assert result.exit_code == 1
    assert "root_agent.yaml:2:1: AS606" in result.output and not out.exists()


def test_cli_usage_errors_exit_2(tmp_path: Path) -> None:
    assert _invoke(str(tmp_path / "missing")).exit_code == 2
    assert _invoke().exit_code == 2


def test_cli_exit_1_when_the_written_spec_has_errors(tmp_path: Path) -> None:
    """A value ADK's schema takes and the model API refuses: validate says so now."""
    folder = tmp_path / "too_hot"
    folder.mkdir()
    (folder / "root_agent.yaml").write_text(
        "name: lead\nmodel: gemini-2.5-flash\ninstruction: Greet.\n"
        "generate_content_config: {temperature: 5}\n")
    result = _invoke(str(folder))
    assert result.exit_code == 1 and "AS104" in result.output
    assert (tmp_path / "too_hot.agentspec.yaml").exists()


def test_a_placeholder_nothing_writes_becomes_state_the_caller_supplies(tmp_path: Path) -> None:
    """ADK fills `{{user_name}}` from the session its caller created: the spec declares the
    key `required`, so it validates (it was AS223 before)."""
    folder = tmp_path / "needs_state"
    folder.mkdir()
    (folder / "root_agent.yaml").write_text(
        "name: lead\nmodel: gemini-2.5-flash\ninstruction: Greet {{user_name}}.\n")
    result = _invoke(str(folder))
    assert result.exit_code == 0, result.output
    written = (tmp_path / "needs_state.agentspec.yaml").read_text()
    assert "state:\n  user_name:\n    required: true\n" in written


def test_awkward_text_reads_back_the_same(tmp_path: Path) -> None:
    folder = tmp_path / "awkward"
    folder.mkdir()
    text = "Line with trailing spaces   \n\ttabbed\n'quotes' \"double\" ''' # not a comment\n"
    (folder / "root_agent.yaml").write_text(
        "name: lead\nmodel: gemini-2.5-flash\ndescription: 'a: b # c'\n"
        f"instruction: {json.dumps(text)}\n")
    result = import_adk(folder)
    assert result.ok, result.diagnostics
    agent = load(result.output).value["agents"]["lead"]
    assert agent["instruction"] == text and agent["description"] == "a: b # c"


def test_shims_build_the_tool_as_adk_does(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from google.adk.tools import LongRunningFunctionTool

    from agentspec.compiler import build_objects, compile_spec

    folder = tmp_path / "longjobs"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "jobs.py").write_text(
        "def start_job(name: str) -> dict:\n    '''Start a long job.'''\n"
        "    return {'status': 'started'}\n")
    (folder / "root_agent.yaml").write_text(
        "name: lead\nmodel: gemini-2.5-flash\ninstruction: Start jobs.\ntools:\n"
        "  - name: LongRunningFunctionTool\n    args: {func: longjobs.jobs.start_job}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    refused = import_adk(folder)
    assert [d.code for d in refused.diagnostics] == ["AS614"] and not refused.written
    result = import_adk(folder, write_shims=True)
    assert result.ok, result.diagnostics
    assert (tmp_path / "adk_shims.py").exists()
    compiled = compile_spec(result.output, environ={})
    app, problems = build_objects(compiled)
    assert problems == []
    tool = app.root_agent.tools[0]
    assert isinstance(tool, LongRunningFunctionTool) and tool.func.__name__ == "start_job"
    for name in ("adk_shims", "longjobs", "longjobs.jobs"):
        sys.modules.pop(name, None)


def test_the_import_codes_are_explained() -> None:
    from agentspec.diagnostics import REGISTRY

    codes = [c for c in REGISTRY if c.startswith("AS6")]
    assert len(codes) >= 18 and all(REGISTRY[c].explanation for c in codes)
    result = CliRunner().invoke(cli, ["explain", "AS245"], prog_name="agentspec")
    assert result.exit_code == 0 and "{{key}}" in result.output


def test_diff_explains_double_braces_once() -> None:
    from agentspec.review.diff import compare, load_side

    folder = Path(__file__).parent / "diff_cases" / "double_braces_to_state"
    changes = compare(load_side(folder / "old.yaml", "old.yaml", environ={}),
                      load_side(folder / "new.yaml", "new.yaml", environ={}))
    assert [c.change for c in changes] == ["instruction-changed"]
    assert "`{{draft}}` <-> `{draft}`" in changes[0].reason
    assert "ADK reads both as state" in changes[0].reason


# attacks ------------------------------------------------------------------------------------


@pytest.mark.slow  # 5.8 s of CPU
def test_files_shared_at_every_level_cannot_explode(tmp_path: Path) -> None:
    """Each level names the next file twice: ADK would build 2**levels agents."""
    folder = tmp_path / "diamonds"
    folder.mkdir()
    levels = 20
    for level in range(levels):
        name = "root_agent.yaml" if level == 0 else f"l{level}.yaml"
        (folder / name).write_text(
            f"agent_class: SequentialAgent\nname: level_{level}\nsub_agents:\n"
            f"  - config_path: l{level + 1}.yaml\n  - config_path: l{level + 1}.yaml\n")
    (folder / f"l{levels}.yaml").write_text("name: leaf\nmodel: gemini-2.5-flash\n"
                                            "instruction: Leaf.\n")
    result = import_adk(folder, output=tmp_path / "out.yaml")
    assert "AS241" in {d.code for d in result.diagnostics} and not result.written


def test_a_chain_too_deep_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "deep"
    folder.mkdir()
    for level in range(120):
        name = "root_agent.yaml" if level == 0 else f"l{level}.yaml"
        (folder / name).write_text(f"agent_class: SequentialAgent\nname: level_{level}\n"
                                   f"sub_agents:\n  - config_path: l{level + 1}.yaml\n")
    (folder / "l120.yaml").write_text("name: leaf\nmodel: m1\ninstruction: Leaf.\n")
    result = import_adk(folder, output=tmp_path / "out.yaml")
    assert "AS240" in {d.code for d in result.diagnostics} and not result.written


def test_config_text_never_becomes_code_or_structure(tmp_path: Path) -> None:
    folder = tmp_path / "hostile"
    folder.mkdir()
    name = "x(): pass\\nimport os\\nos.system('echo pwned')\\ndef y"
    (folder / "root_agent.yaml").write_text(
        f'name: "{name}"\nmodel: gemini-2.5-flash\ninstruction: Hi.\ntools:\n'
        "  - name: LongRunningFunctionTool\n    args: {func: pkg.mod.fn}\n"
        "  - name: McpToolset\n    args:\n      stdio_server_params:\n"
        "        command: npx\n        env:\n"
        '          "TOKEN\\nagents: {evil: {instruction: x}}": "v"\n')
    result = import_adk(folder, write_shims=True)
    shims = (tmp_path / "adk_shims.py").read_text()
    assert "pwned" not in shims and "def tool_0(" in shims
    import ast

    ast.parse(shims)
    spec = load(result.output).value
    assert list(spec["agents"]) == [name.replace("\\n", "\n")]
    assert "evil" not in spec["agents"]
    assert "AS106" in {d.code for d in result.diagnostics}  # not a name: validate refuses


def test_standard_library_shims_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "stdlib"
    folder.mkdir()
    (folder / "root_agent.yaml").write_text(
        "name: lead\nmodel: gemini-2.5-flash\ninstruction: Hi.\ntools:\n"
        "  - name: os.system\n    args: {command: ls}\n  - name: __builtins__\n")
    result = import_adk(folder, output=tmp_path / "out.yaml", write_shims=True)
    assert [d.code for d in result.diagnostics] == ["AS221", "AS609"]
    assert not result.written and not (tmp_path / "adk_shims.py").exists()


def test_a_root_file_linking_outside_the_folder_is_refused(tmp_path: Path) -> None:
    # it was an internal error (relative_to of a path outside the folder)
    (tmp_path / "elsewhere.yaml").write_text("name: x\nmodel: m\ninstruction: SECRET-42\n")
    folder = tmp_path / "agent"
    folder.mkdir()
    (folder / "root_agent.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    for given in (folder, folder / "root_agent.yaml"):
        result = _invoke(str(given), "-o", str(tmp_path / "out.yaml"))
        assert result.exit_code == 1, result.output
        assert "AS601" in result.output and "leading outside" in result.output
        assert "internal error" not in result.output and "SECRET-42" not in result.output
    assert not (tmp_path / "out.yaml").exists()


def test_a_shimmed_module_named_like_the_shims_own_names_does_not_rebind_them(
        tmp_path: Path) -> None:
    # `import adk_tool` (the user's module) used to rebind the shim's helper `adk_tool`
    import ast

    folder = tmp_path / "ag"
    folder.mkdir()
    (folder / "root_agent.yaml").write_text(
        "name: x\nmodel: gemini-2.5-flash\ninstruction: hi\ntools:\n"
        "  - name: adk_tool.make\n    args: {a: 1}\n  - name: _HERE.make\n    args: {a: 1}\n")
    result = import_adk(folder, write_shims=True)
    assert result.ok, result.diagnostics
    shims = (tmp_path / "adk_shims.py").read_text()
    tree = ast.parse(shims)
    imported = {alias.asname or alias.name for node in ast.walk(tree)
                if isinstance(node, ast.Import | ast.ImportFrom) for alias in node.names}
    assert "_HERE" not in imported and imported >= {"adk_tool"}
    assert "importlib.import_module('adk_tool')" in shims
