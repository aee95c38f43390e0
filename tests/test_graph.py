"""`agentspec graph`: Mermaid and DOT for every shipped spec (snapshots), and the CLI."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentspec.cli import cli
from agentspec.compiler import compile_spec
from agentspec.review.graph import graph, to_dot, to_mermaid
from tests.buildkit import NEEDS_ENVIRON, ROOT, SHIPPED, spec_id


def _drawn(path: Path) -> Any:
    compiled = compile_spec(path, environ=NEEDS_ENVIRON.get(path.stem, {}))
    assert compiled.app is not None, compiled.diagnostics
    return graph(compiled.app)


@pytest.mark.parametrize("path", [pytest.param(p, id=spec_id(p)) for p in SHIPPED])
def test_graph_of_every_shipped_spec(path: Path, snapshot: Any) -> None:
    drawn = _drawn(path)
    assert {"mermaid": to_mermaid(drawn), "dot": to_dot(drawn)} == snapshot


def test_what_the_graph_marks() -> None:
    desk = to_mermaid(_drawn(ROOT / "specs" / "offline_jobs.yaml"))
    assert "scorer<br/>llm · gemini-2.5-pro<br/>offline (background job)" in desk
    assert "deal_assistant -.->|offline job| scorer" in desk
    assert "class scorer offline" in desk
    dev = to_mermaid(_drawn(ROOT / "specs" / "deep_agent.yaml"))
    assert "execute (approval)" in dev and "backend: sandbox (shell) · runs commands" in dev
    assert "assistant<br/>deep · gemini-2.5-pro" in dev  # `kind: deep`, not llm
    router = to_dot(_drawn(ROOT / "specs" / "support_router.yaml"))
    assert '"triage" -> "general" [label="option (default, fallback)"];' in router


def test_offline_agents_whose_jobs_resume_their_parent_say_so(tmp_path: Path) -> None:
    spec = (ROOT / "tests" / "diff_cases" / "jobs_resume_parent" / "new.yaml").read_text()
    spec = spec.replace("${env.DESK_PASSWORD}", "${env.DESK_PASSWORD:-unused}")
    (tmp_path / "spec.yaml").write_text(spec)
    drawn = to_mermaid(_drawn(tmp_path / "spec.yaml"))
    assert "scorer<br/>llm · gemini-2.5-flash<br/>offline (background job, resumes its " \
        "parent)" in drawn
    (tmp_path / "spec.yaml").write_text(spec.replace("on_done: resume", "on_done: wait"))
    drawn = to_mermaid(_drawn(tmp_path / "spec.yaml"))
    assert "offline (background job)" in drawn and "resumes" not in drawn


def test_a_chain_and_a_route_show_their_models_and_servers() -> None:
    compiled = compile_spec(ROOT / "tests/diff_cases/model_route_changed/new.yaml",
                            environ={"LOCAL_KEY": "not-a-real-key"})
    assert compiled.app is not None, compiled.diagnostics
    drawn = to_mermaid(graph(compiled.app))
    assert ("lead<br/>llm · chain<br/>model: local (openai/qwen @ http://127.0.0.1:8000/v1) "
            "-#gt; cloud (gemini-2.5-flash)") in drawn
    assert "model: route by state tier over local (openai/qwen @ " in drawn
    assert "not-a-real-key" not in drawn


def test_labels_are_escaped(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(
        'agentspec: 1\nname: quoting\nagents:\n  a:\n    model: "gemini-1\\"]; evil"\n'
        "    instruction: Hi.\n")
    drawn = _drawn(tmp_path / "spec.yaml")
    assert 'gemini-1#quot;]; evil' in to_mermaid(drawn)
    assert 'gemini-1\\"]; evil' in to_dot(drawn)


def test_the_cli_writes_text_and_explains_a_missing_graphviz(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = str(ROOT / "specs" / "pipeline.yaml")
    shown = CliRunner().invoke(cli, ["graph", spec])
    assert shown.exit_code == 0 and shown.output.startswith("flowchart TD")
    written = CliRunner().invoke(cli, ["graph", spec, "--format", "dot", "-o",
                                       str(tmp_path / "g.dot")])
    assert written.exit_code == 0 and (tmp_path / "g.dot").read_text().startswith("digraph")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    svg = CliRunner().invoke(cli, ["graph", spec, "-o", str(tmp_path / "g.svg")])
    assert svg.exit_code == 2 and "apt-get install graphviz" in svg.output


def test_the_output_files_name_chooses_its_format(tmp_path: Path) -> None:
    # the missing-Graphviz hint says `-o FILE.dot / FILE.mmd`: each must hold what it says
    spec = str(ROOT / "specs" / "pipeline.yaml")
    for name, start in (("g.dot", "digraph"), ("g.gv", "digraph"), ("g.mmd", "flowchart TD"),
                        ("g.md", "flowchart TD")):
        done = CliRunner().invoke(cli, ["graph", spec, "-o", str(tmp_path / name)])
        assert done.exit_code == 0, done.output
        assert (tmp_path / name).read_text().startswith(start), name
    done = CliRunner().invoke(cli, ["graph", spec, "--format", "mermaid", "-o",
                                    str(tmp_path / "m.dot")])
    assert (tmp_path / "m.dot").read_text().startswith("flowchart TD")  # asked for: kept
