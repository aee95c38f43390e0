"""The CI guide's workflow (docs/guides/review-in-ci.md), run as the guide shows it against a
scratch git repository: a pull request that changes one spec, adds one and removes one, with
no secrets (a pull request from a fork has none)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from agentspec.cli import cli
from tests.buildkit import ROOT

GUIDE = ROOT / "docs" / "guides" / "review-in-ci.md"

def github_only(step: dict[str, Any]) -> bool:
    """Steps that need GitHub itself: the pull request comment, and installing agentspec
    (the test's own environment has it)."""
    return step.get("name") == "comment" or str(step.get("run", "")).startswith("pip install")

DESK = """\
agentspec: 1
name: desk
tools:
  lookup: {python: "desk_tools:make_lookup", args: {token: "${env.DESK_TOKEN}"}}
agents:
  lead:
    model: gemini-2.5-flash
    instruction: Answer questions.
    tools: [lookup]
"""

TOOLS = '''\
def make_lookup(token: str):
    def lookup(query: str) -> str:
        """Look a query up."""
        return f"found {query}"
    return lookup
'''

SCENARIO = """\
env: {DESK_TOKEN: fake}
messages: [hello]
replies:
  lead: [{text: Hello.}]
expect:
  final: {contains: Hello}
"""

NOTES = """\
agentspec: 1
name: notes
agents:
  scribe: {model: gemini-2.5-flash, instruction: Take notes.}
"""


def workflow() -> dict[str, Any]:
    """The workflow of the guide's first yaml block."""
    block = re.search(r"```yaml\n(name: agents\n.*?)```", GUIDE.read_text(), re.S)
    assert block is not None, "the guide has no workflow"
    loaded: dict[str, Any] = yaml.safe_load(block.group(1))
    return loaded


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=a@b.c", "-c", "user.name=A", *args], cwd=repo,
                   check=True, capture_output=True)


def _build(repo: Path, spec: str) -> None:
    """What the author ran before committing: the generated package, with the secret set."""
    done = CliRunner().invoke(cli, ["build", str(repo / spec)],
                              env={"DESK_TOKEN": "the-secret"})
    assert done.exit_code == 0, done.output


def _scratch(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "specs" / "scenarios").mkdir(parents=True)
    (repo / "specs" / "desk.yaml").write_text(DESK)
    (repo / "specs" / "desk_tools.py").write_text(TOOLS)
    (repo / "specs" / "scenarios" / "desk.yaml").write_text(SCENARIO)
    (repo / "specs" / "retired.yaml").write_text(NOTES.replace("notes", "retired"))
    _build(repo, "specs/desk.yaml")
    _build(repo, "specs/retired.yaml")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    _git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")  # what checkout fetches
    # the pull request: a changed spec, an added spec, a removed spec
    (repo / "specs" / "desk.yaml").write_text(DESK.replace("Answer questions.",
                                                           "Answer questions briefly."))
    _build(repo, "specs/desk.yaml")
    (repo / "specs" / "notes.yaml").write_text(NOTES)
    _build(repo, "specs/notes.yaml")
    _git(repo, "rm", "-rq", "specs/retired.yaml", "specs/retired")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "the pull request")
    return repo


def _run_steps(repo: Path, steps: list[dict[str, Any]], env: dict[str, str]
               ) -> dict[str, subprocess.CompletedProcess[str]]:
    done = {}
    for step in steps:
        name = step.get("name", step.get("run", ""))
        if "run" not in step or github_only(step):
            continue
        # GitHub runs `run:` with `bash -e`
        done[name] = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=repo, env=env,
                                    capture_output=True, text=True, check=False)
    return done


@pytest.mark.slow
def test_the_guides_workflow_passes_a_pull_request_without_secrets(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    flow = workflow()
    [job] = flow["jobs"].values()
    steps = job["steps"]
    named = {step.get("name", step.get("run")) for step in steps if "run" in step}
    assert len([s for s in steps if github_only(s)]) == 2, "update the steps left to GitHub"
    repo = _scratch(tmp_path)
    env = {key: value for key, value in os.environ.items() if key != "DESK_TOKEN"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env |= {key: value.replace("${{ github.base_ref }}", "main")
            for key, value in job.get("env", {}).items()}
    done = _run_steps(repo, steps, env)
    assert set(done) == named - {s.get("name", s.get("run")) for s in steps if github_only(s)}
    assert len(done) == 5
    for name, result in done.items():
        assert result.returncode == 0, (name, result.stdout, result.stderr)
    assert "DESK_TOKEN" in done["generated packages are current"].stderr  # said, not failed
    assert "the-secret" not in "".join(r.stdout + r.stderr for r in done.values())
    comment = (repo / "diff.md").read_text()
    assert "`specs/desk.yaml`" in comment and "`instruction-changed`" in comment
    assert "`specs/notes.yaml`" in comment and "`spec-added`" in comment
    assert "`specs/retired.yaml`" in comment and "`spec-removed`" in comment
    # the last step blocks a pull request that adds a capability
    (repo / "specs" / "notes.yaml").write_text(NOTES.replace(
        "Take notes.}", "Take notes., tools: [{python: 'desk_tools:make_lookup'}]}"))
    blocked = _run_steps(repo, [s for s in steps if s.get("name", "").startswith("block")], env)
    [result] = blocked.values()
    assert result.returncode == 1 and "tool-added" in result.stdout, result.stdout
