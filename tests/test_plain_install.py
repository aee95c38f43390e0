"""Without its extras (`mcp`, LiteLLM, psycopg, SQLAlchemy, ADK's eval packages) agentspec
runs every command on a spec that does not need them, and a spec that does is AS402 naming
the extra to install.

The development environment has every extra installed, so a subprocess hides them with an
import hook (as a plain `pip install agentspec-adk` lacks them) and runs the commands there,
in one interpreter. `.ci/smoke` does the same against a real wheel installed without extras.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

BLOCKED = ("mcp", "litellm", "psycopg", "sqlalchemy", "rouge_score", "a2a", "temporalio")

#: runs in the subprocess: argv[1] is a JSON list of [directory, [args...]]
RUNNER = textwrap.dedent("""\
    import json, os, sys

    BLOCKED = set(sys.argv[2].split(","))

    class Blocked:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, Blocked())
    from click.testing import CliRunner
    from agentspec.cli import cli

    results = []
    for directory, args in json.loads(sys.argv[1]):
        os.chdir(directory)
        done = CliRunner().invoke(cli, args, prog_name="agentspec")
        results.append({"args": args, "code": done.exit_code, "output": done.output})
    leaked = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    print(json.dumps({"results": results, "leaked": leaked}))
    """)

MCP_SPEC = """\
agentspec: 1
name: notes_app
tools:
  notes:
    mcp: {command: python3, args: [notes_server.py]}
agents:
  helper:
    model: gemini-2.5-flash
    instruction: Keep notes.
    tools: [notes]
"""

REMOTE_SPEC = """\
agentspec: 1
name: remote_app
agents:
  helper: {kind: remote, url: "http://127.0.0.1:9/"}
"""

MCP_SCENARIO = """\
scenarios:
  - name: answers
    messages: [hi]
    replies:
      helper: [{text: hello}]
    expect: {final: {contains: hello}}
"""


def _run(commands: list[tuple[Path, list[str]]]) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps([[str(d), a] for d, a in commands]),
         ",".join(BLOCKED)], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_a_plain_install_runs_every_command_and_names_the_extra_a_spec_needs(
        tmp_path: Path) -> None:
    project, mcp = tmp_path / "digest", tmp_path / "mcp"
    mcp.mkdir()
    (mcp / "scenarios").mkdir()
    (mcp / "notes.yaml").write_text(MCP_SPEC)
    (mcp / "scenarios" / "notes.yaml").write_text(MCP_SCENARIO)
    (mcp / "remote.yaml").write_text(REMOTE_SPEC)
    configs = REPO / "tests/data/adk_configs"
    script = tmp_path / "digest_script.yaml"  # one scenario: the template's file is a set
    script.write_text(
        "messages: [Urban beekeeping]\nreplies:\n  drafter: [{text: Bees thrive on city "
        "roofs.}]\n  critic:\n    - {call: text_stats, args: {text: Bees thrive on city "
        "roofs.}}\n    - {call: exit_loop}\n  editor: [{text: Bees thrive on city "
        "rooftops.}]\n")
    ran = _run([
        (tmp_path, ["init", str(project), "--template", "pipeline"]),
        (project, ["validate", "digest.yaml"]),
        (project, ["build", "digest.yaml"]),
        (project, ["test", "digest.yaml"]),
        (project, ["run", "digest.yaml", "--script", str(script)]),
        (tmp_path, ["import", "adk", str(configs / "basic_agent"), "-o", "basic.yaml"]),
        (tmp_path, ["validate", "basic.yaml"]),
        (mcp, ["validate", "notes.yaml"]),
        (mcp, ["build", "notes.yaml"]),
        (mcp, ["test", "notes.yaml"]),
        (tmp_path, ["import", "adk", str(configs / "mcp_notes"), "-o", "mcp_notes.yaml"]),
        (project, ["serve", "digest.yaml", "--a2a"]),
        (mcp, ["validate", "remote.yaml"]),
        (mcp, ["build", "remote.yaml"]),
    ])
    results = ran["results"]
    assert isinstance(results, list)
    for result in results:
        assert "internal error" not in result["output"], result
        assert "Traceback" not in result["output"], result
    codes = [r["code"] for r in results]
    assert codes[:8] == [0] * 8, results
    assert "1 passed" in results[3]["output"]
    assert "Bees thrive on city rooftops." in results[4]["output"]
    assert "wrote basic.yaml" in results[5]["output"]
    install = "pip install 'agentspec-adk[mcp]'"
    for refused in results[8:11]:  # build, test and import of what has an MCP toolset
        assert refused["code"] == 1 and "AS402" in refused["output"] \
            and install in refused["output"], refused
    a2a = "pip install 'agentspec-adk[a2a]'"
    served, remote_checked, remote_built = results[11:]
    assert served["code"] == 1 and a2a in served["output"], served
    assert remote_checked["code"] == 0, remote_checked  # validate needs no a2a-sdk
    assert remote_built["code"] == 1 and "AS402" in remote_built["output"] \
        and a2a in remote_built["output"], remote_built
    assert ran["leaked"] == []


EVALS = """\
criteria:
  tool_trajectory_avg_score: 1.0
cases:
  - name: paris
    turns:
      - {user: Weather in Paris?, tools: [{name: get_weather, args: {city: Paris}}]}
    replies:
      weather: [{call: get_weather, args: {city: Paris}}, {text: Sunny in Paris.}]
  - name: rouge
    criteria: {response_match_score: 0.5}
    turns: [{user: Weather in Paris?, reference: Sunny in Paris.}]
    replies:
      weather: [{text: Sunny in Paris.}]
"""


def test_a_plain_install_evaluates_and_names_the_eval_extra(tmp_path: Path) -> None:
    """`agentspec eval` runs ADK's evaluators without the `eval` extra; the one criterion
    that needs it (ROUGE) fails its case naming the extra; the ADK export needs nothing."""
    import shutil

    example = tmp_path / "weather"
    shutil.copytree(REPO / "examples" / "weather", example,
                    ignore=shutil.ignore_patterns("__pycache__", "weather_assistant"))
    (example / "evals").mkdir()
    (example / "evals" / "agent.yaml").write_text(EVALS)
    ran = _run([(example, ["eval", "agent.yaml"]),
                (example, ["eval", "agent.yaml", "--export-adk", "out"])])
    results = ran["results"]
    assert isinstance(results, list)
    table, export = results
    assert table["code"] == 1 and "Traceback" not in table["output"], table
    assert "paris  tool_trajectory_avg_score  1.00       1.00  0.00    pass" in table["output"]
    assert "the criterion `response_match_score` needs rouge_score, which this install " \
           "lacks; pip install 'agentspec-adk[eval]'" in table["output"], table
    assert export["code"] == 0, export  # the cases differ in criteria: a folder each
    assert "wrote out/evals_agent_1/\nwrote out/evals_agent_2/" in export["output"], export
    assert ran["leaked"] == []
PACKAGE_WITHOUT_A2A = textwrap.dedent("""\
    import sys

    class Blocked:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "a2a":
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, Blocked())
    sys.path.insert(0, "examples/weather")
    from weather_assistant import agent
    from agentspec.runtime.a2a_serve import A2aUnavailable
    try:
        agent.a2a_app._made()
    except A2aUnavailable as error:
        print(error)
    """)


def test_a_package_imports_without_a2a_sdk_and_serving_it_names_the_extra() -> None:
    """`a2a_app` is made when it is first served: the package imports without the extra."""
    done = subprocess.run([sys.executable, "-c", PACKAGE_WITHOUT_A2A], capture_output=True,
                          text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "pip install 'agentspec-adk[a2a]'" in done.stdout


STORE_SPEC = """\
agentspec: 1
name: keeper
backends:
  notes: {type: store, url: "postgresql://files:${env.PGPW:-x}@127.0.0.1:9/files"}
agents:
  keeper:
    model: gemini-2.5-flash
    instruction: Keep notes.
    filesystem: notes
"""


@pytest.mark.slow  # a subprocess that imports ADK to build
def test_a_store_on_postgresql_without_psycopg_names_the_postgres_extra(
        tmp_path: Path) -> None:
    """validate warns (AS321) and build succeeds (nothing imports psycopg before a file tool
    call, which then answers with the same install command)."""
    (tmp_path / "store.yaml").write_text(STORE_SPEC)
    ran = _run([(tmp_path, ["validate", "store.yaml"]), (tmp_path, ["build", "store.yaml"])])
    results = ran["results"]
    assert isinstance(results, list)
    checked, built = results
    assert checked["code"] == 0 and "AS321" in checked["output"], checked
    assert "pip install 'agentspec-adk[postgres]'" in checked["output"], checked
    assert built["code"] == 0, built
    assert ran["leaked"] == []
