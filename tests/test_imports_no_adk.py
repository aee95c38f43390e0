"""The validate path never imports google.adk or google.genai (it costs about a second)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FULL_EXAMPLE = ROOT / "specs" / "research_desk.yaml"
HEAVY = ("google.adk", "google.genai")

_REPORT = textwrap.dedent("""\
    import json, sys
    heavy = sorted(m for m in sys.modules
                   if any(m == h or m.startswith(h + ".") for h in {heavy!r}))
    print("MODULES=" + json.dumps(heavy))
    """).format(heavy=HEAVY)


def run_python(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("MODULES="))
    return json.loads(line.removeprefix("MODULES="))


def test_the_heavy_packages_are_installed() -> None:
    """Otherwise the tests below would pass trivially."""
    code = "import google.adk, google.genai\n" + _REPORT
    assert any(m.startswith("google.adk") for m in run_python(code))


def test_check_does_not_import_adk() -> None:
    code = textwrap.dedent(f"""\
        from pathlib import Path
        from agentspec.validate.check import check
        result = check(Path({str(FULL_EXAMPLE)!r}), environ={{}})
        assert result.document is not None, result.diagnostics
        assert result.ok, [(d.code, d.message) for d in result.diagnostics if d.is_error]
        """) + _REPORT
    assert run_python(code) == []


def test_importing_the_package_does_not_import_adk() -> None:
    code = "import agentspec, agentspec.validate.check, agentspec.cli, agentspec.parse\n" + _REPORT
    assert run_python(code) == []


def test_cli_validate_does_not_import_adk() -> None:
    code = textwrap.dedent(f"""\
        import sys
        from unittest import mock
        from agentspec import cli
        argv = ["agentspec", "validate", "--format", "json", {str(FULL_EXAMPLE)!r}]
        with mock.patch.object(sys, "argv", argv):
            try:
                cli.main()
            except SystemExit as exc:
                assert exc.code == 0, exc.code
            else:
                raise AssertionError("click should exit")
        """) + _REPORT
    assert run_python(code) == []


def test_cli_explain_and_schema_do_not_import_adk() -> None:
    code = textwrap.dedent("""\
        import sys
        from unittest import mock
        from agentspec import cli
        for argv in (["agentspec", "explain", "AS201"], ["agentspec", "schema"]):
            with mock.patch.object(sys, "argv", argv):
                try:
                    cli.main()
                except SystemExit as exc:
                    assert exc.code in (0, None), exc.code
        """) + _REPORT
    assert run_python(code) == []


def test_compiling_a_spec_does_not_import_adk() -> None:
    """Planning and emitting source need no ADK; only building objects imports it."""
    code = textwrap.dedent(f"""\
        from pathlib import Path
        from agentspec.compiler import compile_spec, emit_package
        compiled = compile_spec(Path({str(ROOT / "specs" / "travel_desk.yaml")!r}), environ={{}})
        assert compiled.ok, compiled.diagnostics
        emit_package(compiled, Path("/tmp"))
        """) + _REPORT
    assert run_python(code) == []
