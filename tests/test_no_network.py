"""`validate` and `build` never reach the network (issue 21, item 15): ADK's model registry
imports LiteLLM for a `provider/model` id, and LiteLLM fetches its cost map from GitHub when
it is imported unless `LITELLM_LOCAL_MODEL_COST_MAP` is set first. Each case runs in a fresh
interpreter with every socket refused and counts the attempts."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

_BLOCKED = """
import socket, sys
attempts = []
def refuse(*args, **kwargs):
    attempts.append(args)
    raise OSError("network blocked by the test")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.getaddrinfo = refuse
socket.create_connection = refuse
sys.argv = ["agentspec", *sys.argv[1:]]
try:
{body}
except SystemExit as stop:
    print("exit", stop.code)
print("attempts", len(attempts), attempts[:1])
"""

SPEC = """\
agentspec: 1
name: netcheck
models:
  main: {{id: {model}}}
agents:
  helper:
    model: main
    instruction: Help.
"""


def _run(body: str, cwd: Path, *args: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd)}  # no LITELLM_LOCAL_MODEL_COST_MAP
    script = _BLOCKED.format(body=textwrap.indent(textwrap.dedent(body), "    "))
    result = subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                            text=True, env=env, cwd=cwd, timeout=600, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


@pytest.mark.slow
@pytest.mark.parametrize("model", ["acme/unknown-model", "openai/gpt-4o"])
def test_validate_and_build_open_no_socket(tmp_path: Path, model: str) -> None:
    (tmp_path / "spec.yaml").write_text(SPEC.format(model=model))
    cli = "from agentspec.cli import main\nmain()\n"
    assert _run(cli, tmp_path, "validate", "spec.yaml") == "attempts 0 []"
    assert _run(cli, tmp_path, "build", "spec.yaml", "-o", "out") == "attempts 0 []"
    if model == "openai/gpt-4o":  # built: the generated package resolves it at import
        loads = ("sys.path.insert(0, 'out')\nimport netcheck.agent\n"
                 "print(type(netcheck.agent.root_agent.canonical_model).__name__)\n")
        assert _run(loads, tmp_path) == "attempts 0 []"
