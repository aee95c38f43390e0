"""What `agentspec validate` must not import: every module it loads is start-up time, and
`bench/validate.py` holds the command to a fifth of ADK's import. A spec without a scenario
file lowers nothing and checks no scenarios; no spec builds, emits or runs anything."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FULL_EXAMPLE = ROOT / "specs" / "research_desk.yaml"

#: never on the validate path: ADK and the model libraries, the stages after the front end
#: (the plan's types too: the kinds, which validate imports, use them only to plan; and
#: review: the kinds declare their diff rules with `agentspec.kindapi.rule`)
NEVER = ("google.adk", "google.genai", "litellm", "agentspec.runtime", "agentspec.emit",
         "agentspec.bundle", "agentspec.compiler", "agentspec.ir.planning", "agentspec.ir.plan",
         "agentspec.ir.values", "agentspec.review", "agentspec.adkimport", "agentspec.api")
#: only for a spec that has a scenario file (its names come from the lowered tree)
SCENARIOS_ONLY = ("agentspec.testing.check", "agentspec.testing.names",
                  "agentspec.testing.models", "agentspec.ir.lower")
#: only for a spec with a JSON schema the quick meta-schema check cannot vouch for
SCHEMAS_ONLY = ("jsonschema",)
#: the standard library's costly modules (a few ms each) only some specs need: `socket` (a URL
#: that names a host); `json` is read first of all, for a remembered run (cli/remembered.py)
STDLIB_DEFERRED = ("socket",)

# nothing imported before the command but what it imports itself (not unittest.mock, which
# brings asyncio and socket; json only once the modules are listed)
_RUN = textwrap.dedent("""\
    import sys
    sys.argv = ["agentspec", "validate", *sys.argv[1:]]
    from agentspec import cli
    try:
        cli.main()
    except SystemExit as exc:
        code = exc.code
    modules = sorted(sys.modules)
    import json
    print("RESULT=" + json.dumps([code, modules]))
    """)


def validate_modules(spec: Path) -> tuple[object, set[str]]:
    """The exit status of `agentspec validate spec` and every module it imported."""
    done = subprocess.run([sys.executable, "-c", _RUN, str(spec)], cwd=spec.parent,
                          capture_output=True, text=True, timeout=120)
    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT=")), None)
    assert line is not None, done.stdout + done.stderr
    code, modules = json.loads(line.removeprefix("RESULT="))
    return code, set(modules)


def imported(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


@pytest.fixture
def plain_spec(tmp_path: Path) -> Path:
    spec = tmp_path / "plain.yaml"
    spec.write_text(textwrap.dedent("""\
        agentspec: 1
        name: plain
        agents:
          helper:
            model: gemini-2.5-flash
            description: Answers questions.
            instruction: Answer the question.
        """), encoding="utf-8")
    return spec


def test_a_spec_without_scenarios_imports_only_the_front_end(plain_spec: Path) -> None:
    code, modules = validate_modules(plain_spec)
    assert code == 0
    assert "agentspec.validate.check" in modules  # it did validate
    assert imported(modules, NEVER + SCENARIOS_ONLY + SCHEMAS_ONLY + STDLIB_DEFERRED) == []


def test_its_scenario_file_brings_the_scenario_check(plain_spec: Path) -> None:
    """The other side of the test above: the scenario check still runs when there is one."""
    (plain_spec.parent / "scenarios").mkdir()
    (plain_spec.parent / "scenarios" / "plain.yaml").write_text(
        "messages: [hello]\nreplies:\n  helper: [{text: hi}]\nexpect:\n  final: {contains: hi}\n",
        encoding="utf-8")
    code, modules = validate_modules(plain_spec)
    assert code == 0
    assert imported(modules, SCENARIOS_ONLY) == sorted(SCENARIOS_ONLY)
    assert imported(modules, NEVER) == []


@pytest.mark.skipif(not FULL_EXAMPLE.is_file(), reason="the full example is not shipped")
def test_the_full_example_imports_no_later_stage() -> None:
    _, modules = validate_modules(FULL_EXAMPLE)
    assert "agentspec.testing.check" in modules  # it has a scenario file
    assert imported(modules, NEVER) == []
    # its `output_schema` is plain: the quick meta-schema check vouches for it
    assert imported(modules, SCHEMAS_ONLY + STDLIB_DEFERRED) == []
