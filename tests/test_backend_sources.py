"""`memory: [backend:/path]`: memory files read through the agent's own file-tools backend,
so state, filesystem, shell, sandbox and composite backends can hold them (issue 23 item 2)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from agentspec.compiler import build_objects, compile_spec, emit_package, write_package
from tests.buildkit import fingerprint, package_loader, scripted_turn

BACKENDS = {
    "state": "notes: {type: state}",
    "filesystem": "notes: {type: filesystem, root: ./notes}",
    "shell": "notes: {type: shell, root: ./notes}",
    "sandbox": "notes: {type: sandbox, root: ./notes}",
    "composite": "notes: {type: composite, default: scratch, routes: {/mem/: disk}}\n"
                 "  scratch: {type: state}\n  disk: {type: filesystem, root: ./notes}",
}
SPEC = """\
agentspec: 1
name: keeper
backends:
  {backends}
agents:
  keeper:
    model: gemini-2.5-flash
    instruction: Keep notes.
    filesystem: notes
    memory: [{memory}]
"""
RULE = "Always answer in French."


def _system(request: Any) -> str:
    text = request.config.system_instruction
    return text if isinstance(text, str) else "".join(p.text or "" for p in text.parts)


def _compiled(tmp_path: Path, backend: str, memory: str) -> Any:
    if backend in ("sandbox",) and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    (tmp_path / "notes").mkdir()
    path = tmp_path / "agent.yaml"
    path.write_text(SPEC.format(backends=BACKENDS[backend], memory=memory))
    compiled = compile_spec(path, environ={})
    assert compiled.ok, compiled.diagnostics
    return compiled


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_memory_is_read_through_the_agents_backend(backend: str, tmp_path: Path) -> None:
    """The file does not exist at first (the model is told so); the agent writes it with its
    own file tools, and the very next model call sees it, with the path to edit it at."""
    memory = "backend:/mem/AGENTS.md" if backend == "composite" else "backend:/AGENTS.md"
    path = memory.removeprefix("backend:")
    app, problems = build_objects(_compiled(tmp_path, backend, memory))
    assert problems == []
    said = scripted_turn(app, {"keeper": [
        {"call": "write_file", "args": {"file_path": path, "content": RULE}},
        {"text": "Noted."}]})
    first, second = (_system(r) for r in said.models["keeper"].requests)
    assert RULE not in first and f'<memory_file path="{path}" edit_at="{path}">' in first
    assert "(unreadable:" in first
    assert RULE in second and f'edit_at="{path}"' in second
    if backend in ("filesystem", "shell", "sandbox", "composite"):  # a directory holds it
        assert (tmp_path / "notes" / Path(path).name).read_text() == RULE
    else:  # the session holds it
        assert RULE in str(said.state)


def test_a_host_file_and_a_backend_file_keep_their_order(tmp_path: Path) -> None:
    (tmp_path / "HOST.md").write_text("From the host.")
    compiled = _compiled(tmp_path, "filesystem", "./HOST.md, backend:/AGENTS.md")
    (tmp_path / "notes" / "AGENTS.md").write_text(RULE)
    app, _ = build_objects(compiled)
    said = scripted_turn(app, {"keeper": [{"text": "Hi."}]})
    system = _system(said.models["keeper"].requests[0])
    assert system.index("From the host.") < system.index(RULE)


def test_the_generated_package_reads_memory_through_the_backend(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = _compiled(tmp_path, "state", "backend:/AGENTS.md")
    app, _ = build_objects(compiled)
    files = emit_package(compiled, tmp_path / "out")
    assert not write_package(files, tmp_path / "out")
    source = files[next(p for p in files if p.name == "agent.py")]
    assert "'backend:/AGENTS.md'" in source
    with package_loader(monkeypatch) as load:
        loaded = load(tmp_path / "out", "keeper")
        assert fingerprint(loaded) == fingerprint(app)
        said = scripted_turn(loaded, {"keeper": [{"text": "Hi."}]},
                             state={"agentspec:files:notes": {"/AGENTS.md": {"content": RULE}}})
        assert RULE in _system(said.models["keeper"].requests[0])


# skills --------------------------------------------------------------------------------------

SKILL = "---\nname: haiku\ndescription: Writes haiku.\n---\nCount five, seven, five syllables."
SKILLS_SPEC = SPEC.replace("    memory: [{memory}]\n", "    skills: {skills}\n")


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_skills_are_read_through_the_agents_backend(backend: str, tmp_path: Path) -> None:
    """The backend holds a skill (the session's state, or the backend's directory): the
    model lists and loads it; a folder that is no valid skill is left out."""
    if backend == "sandbox" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    top = "/mem/skills" if backend == "composite" else "/skills"
    (tmp_path / "notes").mkdir()
    files = {f"{top}/haiku/SKILL.md": SKILL, f"{top}/haiku/references/forms.md": "5-7-5",
             f"{top}/broken/SKILL.md": "no frontmatter"}
    state: dict[str, Any] = {}
    if backend == "state":
        state["agentspec:files:notes"] = {p: {"content": c} for p, c in files.items()}
    else:
        for virtual, content in files.items():
            host = tmp_path / "notes" / virtual.removeprefix("/mem").lstrip("/")
            host.parent.mkdir(parents=True, exist_ok=True)
            host.write_text(content)
    path = tmp_path / "agent.yaml"
    path.write_text(SKILLS_SPEC.format(backends=BACKENDS[backend],
                                       skills=f"[backend:{top}]"))
    compiled = compile_spec(path, environ={})
    assert compiled.ok, compiled.diagnostics
    app, problems = build_objects(compiled)
    assert problems == []
    said = scripted_turn(app, {"keeper": [
        {"call": "list_skills", "args": {}},
        {"call": "load_skill", "args": {"skill_name": "haiku"}},
        {"call": "load_skill_resource", "args": {"skill_name": "haiku",
                                                 "file_path": "references/forms.md"}},
        {"text": "Ready."}]}, state=state)
    listed, loaded, resource = (response for _, response in said.results)
    assert "haiku" in str(listed) and "Writes haiku." in str(listed)
    assert "broken" not in str(listed)
    assert "Count five, seven, five syllables." in str(loaded)
    assert "5-7-5" in str(resource)
