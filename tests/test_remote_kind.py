"""`kind: remote` in the compiler: `validate --online` reads each card (and only with it),
graph draws a remote with its URL, a header's secret is never written nor printed, and
`serve` says what it needs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentspec.cli import cli
from tests.buildkit import loopback_http

SPEC = """\
agentspec: 1
name: remote_app
agents:
  boss:
    model: gemini-2.5-flash
    instruction: Delegate.
    sub_agents: [billing]
  billing:
    kind: remote
    url: "{url}"
    timeout: 1
    headers: {{Authorization: "Bearer ${{env.BILLING_TOKEN}}"}}
"""

CARD = (b'{"name": "billing", "description": "Bills.", "version": "1", "supportedInterfaces": '
        b'[{"url": "http://127.0.0.1:1/", "protocolBinding": "JSONRPC"}], "skills": []}')
SECRET = "s3cr3t-token-value"


def _validate(tmp_path: Path, url: str, *flags: str) -> Any:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(url=url))
    return CliRunner().invoke(cli, ["validate", str(spec), *flags],
                              env={"BILLING_TOKEN": SECRET})


@pytest.mark.parametrize(("status", "body", "problem"), [
    (200, CARD, None),
    (200, b'{"hello": "world"}', "no `name`"),
    (200, b"<html>", "not JSON"),
    (500, b"{}", "HTTP 500"),
    (200, None, "no answer within 1 s"),
], ids=["a card", "json not a card", "not json", "an error", "never answers"])
def test_validate_online_reads_each_card(status: int, body: bytes | None, problem: str | None,
                                         tmp_path: Path) -> None:
    seen: list[str] = []
    with loopback_http(body, status=status, seen=seen) as url:
        offline = _validate(tmp_path, url)
        assert seen == []  # without --online, no request
        online = _validate(tmp_path, url, "--online")
    assert offline.exit_code == 0, offline.output
    assert seen == [f"Bearer {SECRET}"]  # the card was asked for, with the header
    assert SECRET not in online.output
    if problem is None:
        assert online.exit_code == 0 and "AS298" not in online.output, online.output
    else:
        assert online.exit_code == 1 and "AS298" in online.output \
            and problem in online.output and "`billing`" in online.output, online.output


def test_validate_online_names_a_card_nobody_serves(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/"
    done = _validate(tmp_path, url, "--online")
    assert done.exit_code == 1 and "AS298" in done.output and "cannot reach it" in done.output
    assert f"{url}.well-known/agent-card.json" in done.output


def test_graph_draws_a_remote_agent_with_its_url(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(url="http://billing:8001/"))
    done = CliRunner().invoke(cli, ["graph", str(spec)], env={"BILLING_TOKEN": SECRET})
    assert done.exit_code == 0, done.output
    assert 'billing["billing<br/>remote (A2A)<br/>http://billing:8001/"]' in done.output


def test_a_header_secret_is_never_written_into_the_package(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(url="http://billing:8001/"))
    done = CliRunner().invoke(cli, ["build", str(spec)], env={"BILLING_TOKEN": SECRET})
    assert done.exit_code == 0, done.output
    source = (tmp_path / "remote_app" / "agent.py").read_text()
    assert SECRET not in source and "expand('Bearer ${env.BILLING_TOKEN}')" in source


def test_serve_speaks_only_a2a(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(url="http://billing:8001/"))
    done = CliRunner().invoke(cli, ["serve", str(spec)])
    assert done.exit_code == 2 and "--a2a" in done.output


def test_serve_names_an_agent_the_spec_lacks(tmp_path: Path) -> None:
    pytest.importorskip("a2a")
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(url="http://billing:8001/"))
    done = CliRunner().invoke(cli, ["serve", str(spec), "--a2a", "--agent", "nobody"],
                              env={"BILLING_TOKEN": SECRET})
    assert done.exit_code == 2 and "no agent `nobody`" in done.output \
        and "`billing`, `boss`" in done.output, done.output


def test_run_ends_with_a_plain_error_naming_a_remote_that_is_down(tmp_path: Path) -> None:
    import socket

    pytest.importorskip("a2a")
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/"
    spec, script = tmp_path / "spec.yaml", tmp_path / "script.yaml"
    spec.write_text(SPEC.format(url=url))
    script.write_text("messages: [Bill me]\nreplies:\n  boss: [{transfer: billing}]\n")
    done = CliRunner().invoke(cli, ["run", str(spec), "--script", str(script)],
                              env={"BILLING_TOKEN": SECRET})
    assert done.exit_code == 1, done.output
    assert f"remote agent `billing` at {url}.well-known/agent-card.json failed" in done.output
    assert "internal error" not in done.output and SECRET not in done.output


def test_a_card_file_gives_the_description(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("a2a")
    monkeypatch.setenv("BILLING_TOKEN", SECRET)
    from agentspec.compiler import build_objects, compile_spec
    from agentspec.runtime.agents import walk

    (tmp_path / "card.json").write_bytes(CARD)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(url="x").replace('url: "x"', "card: card.json"))
    compiled = compile_spec(spec)
    assert compiled.ok, compiled.diagnostics
    app, problems = build_objects(compiled)
    assert problems == []
    billing = next(a for a in walk(app.root_agent) if a.name == "billing")
    assert billing.description == "Bills."


def test_a_package_whose_store_url_is_not_written_asks_for_it_when_served(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A URL the spec writes out may hold a password: the package's a2a_app takes it from
    AGENTSPEC_SESSIONS, and says so when it is not set, rather than serve from memory."""
    from agentspec.runtime.a2a_serve import A2aUnavailable, a2a_server

    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(url="http://billing:8001/")
                    + "sessions: postgresql://agents:hunter2@db/agents\n")
    done = CliRunner().invoke(cli, ["build", str(spec)], env={"BILLING_TOKEN": SECRET})
    assert done.exit_code == 0, done.output
    source = (tmp_path / "remote_app" / "agent.py").read_text()
    assert "a2a_app = a2a_server(app, store_elsewhere=True)" in source
    assert "hunter2" not in source
    monkeypatch.delenv("AGENTSPEC_SESSIONS", raising=False)
    with pytest.raises(A2aUnavailable, match="set AGENTSPEC_SESSIONS"):
        a2a_server(object(), store_elsewhere=True)._made()
