"""`import adk` copies no literal MCP secret (issue 21, item 18): a secret flag's value in a
server's `args` (`--api-key=...`, `--token VALUE`), a key-shaped argument, a URL's password,
lone user name or secret-named query value, and any `X-Api-*` header are read from the
environment instead, whatever the secret is."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentspec.adkimport import import_adk

secrets = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz0123456789_."), min_size=12,
                  max_size=24).map(lambda text: "S3cret" + text)
flags = st.sampled_from(["api-key", "token", "secret", "password", "auth-token", "apikey",
                         "access_token", "client-secret"])


def _convert(tmp_path: Path, tool: dict[str, object]) -> str:
    folder = tmp_path / "agent"
    folder.mkdir(exist_ok=True)
    (folder / "root_agent.yaml").write_text(json.dumps({
        "name": "lead", "model": "gemini-2.5-flash", "instruction": "Use the tools.",
        "tools": [{"name": "MCPToolset", "args": tool}]}))
    out = tmp_path / "out.yaml"
    out.unlink(missing_ok=True)
    result = import_adk(folder / "root_agent.yaml", output=out)
    assert result.written, result.diagnostics
    return out.read_text()


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(secret=secrets, flag=flags, dash=st.sampled_from(["-", "--"]),
       joined=st.booleans(), header=st.sampled_from(["X-Api-Client", "X-API-Tenant-Secret",
                                                     "x-api-anything"]))
def test_no_literal_secret_reaches_the_spec(tmp_path: Path, secret: str, flag: str, dash: str,
                                            joined: bool, header: str) -> None:
    argv = [f"{dash}{flag}={secret}"] if joined else [f"{dash}{flag}", secret]
    stdio = _convert(tmp_path, {"stdio_connection_params": {"server_params": {
        "command": "server", "args": ["--verbose", *argv, "--port=8080"]}}})
    assert secret not in stdio and "--port=8080" in stdio and "--verbose" in stdio
    remote = _convert(tmp_path, {"streamable_http_connection_params": {
        "url": f"https://bob:{secret}@mcp.example.invalid/mcp?{flag}={secret}&region=eu",
        "headers": {header: secret, "Accept": "application/json"}}})
    assert secret not in remote and "region=eu" in remote and "mcp.example.invalid" in remote
    token_user = _convert(tmp_path, {"sse_connection_params": {
        "url": f"https://{secret}@mcp.example.invalid/sse"}})
    assert secret not in token_user
