"""`upload_files` / `download_files` on every backend type (deepagents' batch protocol): one
result per file, in order, a failure a value naming the path and why; and the public
`open_backend` that hands them to Python callers, with the spec's routes and permissions."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import agentspec
from agentspec.runtime.backends import Backend
from agentspec.runtime.backends.composite import CompositeBackend
from agentspec.runtime.backends.filesystem import FilesystemBackend
from agentspec.runtime.backends.permissions import permitted
from agentspec.runtime.backends.state import StateBackend
from agentspec.runtime.backends.transfer import Downloaded, Transferable, Uploaded
from agentspec.runtime.harness.scope import scoped
from tests.spec_defaults import spec_shell


def _every_type(tmp_path: Path) -> dict[str, Backend]:
    (tmp_path / "d").mkdir()
    (tmp_path / "s").mkdir()
    return {
        "state": StateBackend({}),
        "filesystem": FilesystemBackend(tmp_path / "d"),
        "shell": spec_shell(tmp_path / "s", timeout=10),
        "composite": CompositeBackend(StateBackend({}),
                                      {"/disk/": FilesystemBackend(tmp_path / "d")}),
        "scoped": scoped(StateBackend({}), "u", ("/large_tool_results",)),
        "permitted": permitted(StateBackend({}), "b", None, ("/**",)),
    }


@pytest.mark.parametrize("kind", ["state", "filesystem", "shell", "composite", "scoped",
                                  "permitted"])
def test_every_backend_type_uploads_and_downloads_a_batch(tmp_path: Path, kind: str) -> None:
    backend = _every_type(tmp_path)[kind]
    assert isinstance(backend, Transferable)
    done = backend.upload_files([("/a/one.md", "héllo\n".encode()), ("/../x", b"up"),
                                 ("/bin.dat", b"\xff\xfe"), ("/a/two.md", b"two")])
    assert [u.path for u in done] == ["/a/one.md", "/../x", "/bin.dat", "/a/two.md"]
    assert done[0] == Uploaded("/a/one.md", None) and done[3].error is None
    assert done[1].error is not None and "above" in done[1].error
    assert done[2].error is not None and "not UTF-8" in done[2].error
    got = backend.download_files(["/a/two.md", "/missing.md", "/a/one.md", "/a"])
    assert got[0] == Downloaded("/a/two.md", b"two", None)
    assert got[1].content is None and got[1].error and "/missing.md" in got[1].error
    assert got[2].content == "héllo\n".encode()
    assert got[3].content is None and got[3].error  # a directory is no file
    assert backend.read("/a/one.md") == "héllo\n"


def test_a_batch_obeys_permissions_and_private_folders() -> None:
    inner = StateBackend({})
    guarded = permitted(scoped(inner, "alice", ("/large_tool_results",)), "b",
                        ("/docs/**", "/large_tool_results/**"), ("/docs/**",))
    assert isinstance(guarded, Transferable)
    done = guarded.upload_files([("/docs/a.md", b"a"), ("/etc/x", b"x")])
    assert done[0].error is None and done[1].error and "`/docs/**`" in done[1].error
    inner.write("/large_tool_results/bob/r.txt", "bob's")
    inner.write("/secret.md", "s")
    got = guarded.download_files(["/large_tool_results/bob/r.txt", "/secret.md"])
    assert got[0].error and "another user's" in got[0].error
    assert got[1].error and "not allowed" in got[1].error


SPEC = """\
agentspec: 1
name: desk
backends:
  notes: {type: state}
  work: {type: filesystem, root: ./work, write: [/in/**]}
  front: {type: composite, default: notes, routes: {/work/: work}}
agents:
  lead:
    model: gemini-2.5-flash
    instruction: Read the files you were given.
    filesystem: front
    sub_agents: [bare]
  bare:
    description: Has no file tools.
    model: gemini-2.5-flash
    instruction: Answer.
"""


def test_open_backend_gives_python_callers_the_agent_s_files(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(SPEC)
    (tmp_path / "work").mkdir()
    state: dict[str, Any] = {}
    files = agentspec.open_backend(tmp_path / "spec.yaml", "lead", user_id="u", state=state)
    done = files.upload_files([("/work/in/data.csv", b"a,b\n"), ("/work/out.txt", b"no"),
                               ("/brief.md", b"# Brief\n")])
    assert [u.error is None for u in done] == [True, False, True]
    assert "Writing /out.txt is not allowed" in str(done[1].error)
    assert (tmp_path / "work" / "in" / "data.csv").read_text() == "a,b\n"
    assert "/brief.md" in state["agentspec:files:notes"]  # the session state given
    assert files.download_files(["/brief.md"])[0].content == b"# Brief\n"
    with pytest.raises(agentspec.SpecError, match="no file tools"):
        agentspec.open_backend(tmp_path / "spec.yaml", "bare")
    with pytest.raises(agentspec.SpecError, match="not in the spec"):
        agentspec.open_backend(tmp_path / "spec.yaml", "ghost")


def test_files_uploaded_into_a_session_s_state_reach_the_agent(tmp_path: Path) -> None:
    """The documented use: seed a session's state backend before its first turn."""
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    from agentspec.testing.scripted import install_script

    (tmp_path / "spec.yaml").write_text(SPEC)
    (tmp_path / "work").mkdir()
    state: dict[str, Any] = {}
    agentspec.open_backend(tmp_path / "spec.yaml", "lead", user_id="u", state=state) \
        .upload_files([("/brief.md", b"uploaded brief")])
    app = agentspec.build(tmp_path / "spec.yaml")
    install_script(app.root_agent, {"lead": [
        {"call": "read_file", "args": {"file_path": "/brief.md"}}, {"text": "Done."}]})

    async def main() -> list[Any]:
        runner = InMemoryRunner(app=app)
        session = await runner.session_service.create_session(app_name=app.name, user_id="u",
                                                              state=state)
        results = []
        async for event in runner.run_async(user_id="u", session_id=session.id,
                                            new_message=types.Content(
                                                role="user", parts=[types.Part(text="go")])):
            results += [p.function_response.response for p in (event.content.parts or [])
                        if event.content and p.function_response]
        await runner.close()
        return results

    assert "uploaded brief" in str(asyncio.run(main()))
