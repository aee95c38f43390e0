"""`agentspec run` with approvals and the state backend: the terminal prompt, scripted
decisions, and files that outlive the process through an SQLite session."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentspec.cli import cli

ROOT = Path(__file__).resolve().parent.parent
SPEC = """\
    agentspec: 1
    name: notes_desk
    backends:
      scratch: {type: state}
    agents:
      writer:
        model: gemini-2.5-flash
        instruction: Keep notes in files.
        filesystem: scratch
        interrupt_on:
          write_file: {decisions: [approve, edit, reject], hint: Save this note?}
          edit_file: {decisions: [approve, reject]}
    """
WRITE = """\
    replies:
      writer:
        - call: write_file
          args: {file_path: /todo.md, content: buy milk}
        - text: Saved.
    """


@pytest.fixture
def desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(SPEC))
    (tmp_path / "write.yaml").write_text(textwrap.dedent(WRITE))
    return tmp_path


def invoke(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=stdin, prog_name="agentspec")


def _script(desk: Path, name: str, text: str) -> str:
    (desk / name).write_text(textwrap.dedent(text))
    return name


def _read_back(desk: Path, session: str, *more: str) -> Result:
    script = _script(desk, "read.yaml", """\
        replies:
          writer:
            - call: read_file
              args: {file_path: /todo.md}
            - text: Read.
        """)
    return invoke("run", "spec.yaml", "What is on my list?", "--script", script,
                  "--session", session, *more)


# at the terminal ------------------------------------------------------------------------


def test_the_person_approves_at_the_terminal(desk: Path) -> None:
    done = invoke("run", "spec.yaml", "Note: buy milk", "--script", "write.yaml",
                  stdin="a\n")
    assert done.exit_code == 0, done.output
    assert "[writer] needs approval: write_file({'file_path': '/todo.md', 'content': " \
           "'buy milk'})" in done.output
    assert "  Save this note?" in done.output
    assert "[writer] write_file returned {'status': 'ok'" in done.output
    assert done.output.rstrip().endswith("[writer] Saved.")


def test_the_person_edits_the_arguments_at_the_terminal(desk: Path) -> None:
    session = f"sqlite:///{desk / 's.db'}"
    edited = '{"file_path": "/todo.md", "content": "buy oat milk"}'
    done = invoke("run", "spec.yaml", "Note: buy milk", "--script", "write.yaml",
                  "--session", session, stdin=f"edit\n{edited}\n")
    assert done.exit_code == 0, done.output
    assert "edited this call" in done.output
    back = _read_back(desk, session)
    assert "buy oat milk" in back.output


def test_the_person_rejects_with_a_reason(desk: Path) -> None:
    done = invoke("run", "spec.yaml", "Note: buy milk", "--script", "write.yaml",
                  stdin="r\nnot that list\n")
    assert done.exit_code == 0, done.output
    assert "A person rejected this call to write_file; it did not run. Their message: " \
           "not that list" in done.output


def test_an_answer_not_offered_is_asked_again(desk: Path) -> None:
    script = _script(desk, "edit.yaml", """\
        replies:
          writer:
            - call: edit_file
              args: {file_path: /todo.md, old_string: a, new_string: b}
            - text: Done.
        """)
    done = invoke("run", "spec.yaml", "Fix it", "--script", script, stdin="e\nmaybe\nr\n\n")
    assert done.exit_code == 0, done.output
    assert done.output.count("answer one of: approve/reject") == 2
    assert "A person rejected this call to edit_file" in done.output


def test_when_input_ends_the_call_stays_waiting_and_never_runs(desk: Path) -> None:
    session = f"sqlite:///{desk / 's.db'}"
    done = invoke("run", "spec.yaml", "Note: buy milk", "--script", "write.yaml",
                  "--session", session, stdin="")
    assert done.exit_code == 0, done.output
    assert "agentspec: write_file is left waiting for approval" in done.output
    assert "[writer] Saved." not in done.output
    assert "File not found: /todo.md" in _read_back(desk, session).output


# scripted decisions -------------------------------------------------------------------------


def test_a_script_takes_the_decisions(desk: Path) -> None:
    session = f"sqlite:///{desk / 's.db'}"
    (desk / "write.yaml").write_text(textwrap.dedent(WRITE) + textwrap.dedent("""\
        decisions:
          - {edit: {file_path: /todo.md, content: buy bread}}
        """))
    done = invoke("run", "spec.yaml", "Note: buy milk", "--script", "write.yaml",
                  "--session", session)
    assert done.exit_code == 0, done.output
    assert "[writer] write_file({'file_path': '/todo.md', 'content': 'buy milk'}): scripted " \
           "edit {'file_path': '/todo.md', 'content': 'buy bread'}" in done.output
    assert "buy bread" in _read_back(desk, session).output


def test_a_script_without_enough_decisions_fails_clearly(desk: Path) -> None:
    (desk / "write.yaml").write_text(textwrap.dedent(WRITE) + "decisions: []\n")
    done = invoke("run", "spec.yaml", "Note: buy milk", "--script", "write.yaml")
    assert done.exit_code == 1
    assert "the script has no more decisions; writer asks to approve write_file(" in done.output


@pytest.mark.parametrize("decision", ["maybe", "{edit: [1]}", "{approve: yes}", "{a: 1, b: 2}"])
def test_a_malformed_decision_is_a_usage_error(desk: Path, decision: str) -> None:
    (desk / "write.yaml").write_text(textwrap.dedent(WRITE) + f"decisions: [{decision}]\n")
    done = invoke("run", "spec.yaml", "Note: buy milk", "--script", "write.yaml")
    assert done.exit_code == 2
    assert "a decision is `approve`, `reject`" in done.output
    assert "Traceback" not in done.output


# the state backend across processes ---------------------------------------------------------


def _agentspec(desk: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "agentspec", *args], cwd=desk, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_state_backend_files_are_read_back_in_a_new_process(desk: Path) -> None:
    session = f"sqlite:///{desk / 'sessions' / 'notes.db'}"
    (desk / "write.yaml").write_text(textwrap.dedent(WRITE) + "decisions: [approve]\n")
    first = _agentspec(desk, "run", "spec.yaml", "Note: buy milk", "--script", "write.yaml",
                       "--session", session)
    assert first.returncode == 0, first.stderr
    assert "[writer] Saved." in first.stdout
    _script(desk, "read.yaml", """\
        replies:
          writer:
            - call: ls
              args: {path: /}
            - call: read_file
              args: {file_path: /todo.md}
            - text: Read.
        """)
    second = _agentspec(desk, "run", "spec.yaml", "What is on my list?", "--script",
                        "read.yaml", "--session", session)
    assert second.returncode == 0, second.stderr
    assert "'/todo.md'" in second.stdout  # ls lists it
    assert "1\\tbuy milk" in second.stdout or "1\tbuy milk" in second.stdout
    # another conversation has its own files
    other = _agentspec(desk, "run", "spec.yaml", "What is on my list?", "--script",
                       "read.yaml", "--session", session, "--session-id", "other")
    assert other.returncode == 0, other.stderr
    assert "buy milk" not in other.stdout


def test_the_shipped_deep_agent_runs_with_scripted_approvals(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(textwrap.dedent("""\
        replies:
          assistant:
            - call: write_todos
              args: {todos: [{content: Try the shell, status: in_progress}]}
            - call: execute
              args: {command: "echo hello from the sandbox"}
            - call: write_file
              args: {file_path: /scratch.txt, content: x}
            - text: Ran it; did not write the file.
        decisions:
          - {edit: {command: "echo edited"}}
          - {reject: No new files today.}
        """))
    done = invoke("run", str(ROOT / "specs" / "deep_agent.yaml"), "Try the shell",
                  "--script", str(script))
    assert done.exit_code == 0, done.output
    assert "edited" in done.output and "hello from the sandbox" not in \
        done.output.split("scripted edit", 1)[1]
    assert "No new files today." in done.output
    assert not (ROOT / "specs" / "workspace" / "scratch.txt").exists()
    assert done.output.rstrip().endswith("[assistant] Ran it; did not write the file.")
