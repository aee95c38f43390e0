"""`telemetry:`: ADK's spans, with agentspec's attributes, exported over OTLP to a collector on
loopback that decodes them; an unreachable collector; secrets in exporter headers.

Each run is `agentspec run` in a process of its own: a process has one tracer provider."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.otlp_collector import Collector, collect

SPEC = """\
    agentspec: 1
    name: desk
    root: front
    telemetry:
      exporter: otlp
      endpoint: {endpoint}
      service_name: help-desk
      headers: {{x-team-key: "${{env.TEAM_KEY}}"}}
    models:
      fast: gemini-2.5-flash
    defaults:
      model: fast
    agents:
      front:
        kind: router
        sub_agents: [coder, general]
        route:
          model: fast
          instruction: Pick coder for code.
        default: general
      coder:
        kind: deep
        description: Writes code.
        instruction: Plan with todos, then answer.
      general:
        description: Anything else.
        instruction: Answer briefly.
    """
SCRIPT = """\
    messages: ["fix the PRIVATE-WORDS bug"]
    replies:
      front_classifier: [{text: '{"agent": "coder", "reason": "code"}'}]
      coder:
        - {call: write_todos, args: {todos: [{content: fix it, status: in_progress}]}}
        - {text: done with PRIVATE-ANSWER}
    """
SECRET = "team-key-7d1f3a"


def _run(tmp_path: Path, endpoint: str, *, extra_env: dict[str, str] | None = None,
         spec: str = SPEC) -> subprocess.CompletedProcess[str]:
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(spec.format(endpoint=endpoint)))
    (tmp_path / "script.yaml").write_text(textwrap.dedent(SCRIPT))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OTEL_", "ADK_CAPTURE", "ADK_EXPERIMENTAL"))}
    env.update({"TEAM_KEY": SECRET, **(extra_env or {})})
    return subprocess.run(
        [sys.executable, "-m", "agentspec", "run", "spec.yaml", "--script", "script.yaml"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)


def _one(collector: Collector, name: str) -> object:
    found = collector.named(name)
    assert len(found) == 1, (name, sorted({s.name for s in collector.spans}))
    return found[0]


@pytest.mark.slow
def test_a_routed_deep_agent_run_exports_its_span_tree(tmp_path: Path) -> None:
    with collect() as collector:
        done = _run(tmp_path, collector.url)
        assert done.returncode == 0, done.stderr
        spans = list(collector.spans)
    assert spans, done.stderr
    assert {s.service for s in spans} == {"help-desk"}
    assert len({s.trace_id for s in spans}) == 1  # one turn, one trace
    router = collector.named("invoke_agent front")
    coder = collector.named("invoke_agent coder")
    assert len(router) == 1 and len(coder) == 1, sorted({s.name for s in spans})
    assert router[0].attributes["agentspec.agent.kind"] == "router"
    assert router[0].attributes["agentspec.language.name"] == "desk"
    assert coder[0].attributes["agentspec.agent.kind"] == "deep"
    # the deep agent runs under the router, and its tool call under it
    assert "invoke_agent front" in collector.ancestors(coder[0])
    route = [attrs for name, attrs in router[0].events if name == "agentspec.route"]
    assert route == [{"agentspec.router": "front", "agentspec.route.agent": "coder",
                      "agentspec.route.reason": "the classifier: code",
                      "agentspec.route.failed": []}]
    tool = [s for s in spans if s.name == "execute_tool write_todos"]
    assert tool and "invoke_agent coder" in collector.ancestors(tool[0])
    calls = [s for s in spans if s.name.startswith(("generate_content", "call_llm"))]
    assert calls and all(
        "invoke_agent coder" in collector.ancestors(s) or
        "invoke_agent front_classifier" in collector.ancestors(s) for s in calls)
    usage = [attrs for s in coder for name, attrs in s.events if name == "agentspec.usage"]
    assert len(usage) == 2 and all(u["agentspec.model"] == "scripted" for u in usage)
    # prompt and response text stay out (record_content is off); the header's key arrived,
    # and is nowhere in what the command printed
    raw = b"".join(collector.raw)
    assert b"PRIVATE-WORDS" not in raw and b"PRIVATE-ANSWER" not in raw
    assert {h.get("x-team-key") for h in collector.headers} == {SECRET}
    assert SECRET not in done.stdout + done.stderr


@pytest.mark.slow
def test_record_content_puts_the_prompt_on_the_spans(tmp_path: Path) -> None:
    spec = SPEC.replace("service_name: help-desk",
                        "service_name: help-desk\n      record_content: true")
    with collect() as collector:
        done = _run(tmp_path, collector.url, spec=spec)
        assert done.returncode == 0, done.stderr
        raw = b"".join(collector.raw)
    assert b"PRIVATE-WORDS" in raw


@pytest.mark.slow
def test_the_otel_environment_wins(tmp_path: Path) -> None:
    with collect() as spec_collector, collect() as env_collector:
        done = _run(tmp_path, spec_collector.url, extra_env={
            "OTEL_EXPORTER_OTLP_ENDPOINT": env_collector.url, "OTEL_SERVICE_NAME": "from-env"})
        assert done.returncode == 0, done.stderr
        assert not spec_collector.spans
        assert {s.service for s in env_collector.spans} == {"from-env"}


@pytest.mark.slow
def test_an_unreachable_collector_is_one_warning_and_the_run_goes_on(tmp_path: Path) -> None:
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    done = _run(tmp_path, "${env.COLLECTOR}",  # a password in the spec is AS265
                extra_env={"COLLECTOR": f"http://user:pw-9911@127.0.0.1:{port}"})
    assert done.returncode == 0, done.stderr
    assert "[coder] done with PRIVATE-ANSWER" in done.stdout
    warnings = [line for line in done.stderr.splitlines() if "traces could not be sent" in line]
    assert len(warnings) == 1, done.stderr
    assert f"127.0.0.1:{port}/v1/traces" in warnings[0]  # the collector, without its password
    assert "pw-9911" not in done.stderr and SECRET not in done.stderr


BLOCK_OTLP = textwrap.dedent("""\
    import sys

    class Blocked:
        def find_spec(self, name, path=None, target=None):
            if name.startswith("opentelemetry.exporter.otlp"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, Blocked())
    from agentspec.cli import main
    sys.argv = ["agentspec", *sys.argv[1:]]
    main()
    """)


@pytest.mark.slow
def test_without_the_telemetry_extra_an_otlp_spec_is_as402_naming_it(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(SPEC.format(endpoint="http://x:4318")))
    done = subprocess.run([sys.executable, "-c", BLOCK_OTLP, "build", "spec.yaml"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          check=False, env={**os.environ, "TEAM_KEY": SECRET})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "AS402" in done.stdout + done.stderr
    assert "pip install 'agentspec-adk[telemetry]'" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_a_bundle_of_an_otlp_spec_installs_the_telemetry_extra(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from agentspec.cli import cli
    from agentspec.contract.extras import DISTRIBUTION

    monkeypatch.setenv("TEAM_KEY", SECRET)
    spec = tmp_path / "spec.yaml"
    for exporter, extra in (("otlp", "[telemetry]"), ("console", "")):
        spec.write_text(textwrap.dedent(SPEC.format(endpoint="http://collector:4318"))
                        .replace("exporter: otlp", f"exporter: {exporter}"))
        out = tmp_path / exporter
        done = CliRunner().invoke(cli, ["build", str(spec), "--bundle", "-o", str(out)])
        assert done.exit_code == 0, done.output
        requirements = (out / "desk" / "requirements.txt").read_text()
        assert f"{DISTRIBUTION}{extra}==" in requirements, requirements
        assert SECRET not in "".join(p.read_text(errors="replace")
                                     for p in (out / "desk").rglob("*.py"))


@pytest.mark.slow
def test_the_generated_package_traces_under_adk_api_server(tmp_path: Path) -> None:
    """`adk api_server` sets up a tracer provider of its own (for its trace view); the
    package's spans reach the spec's collector too, and the model calls go to the fake
    Gemini API."""
    import time

    import httpx

    from tests.fakegemini import FakeGemini, serve
    from tests.test_wire import adk_server

    simple = textwrap.dedent("""\
        agentspec: 1
        name: desk
        telemetry: {{exporter: otlp, endpoint: "{endpoint}"}}
        agents:
          helper:
            model: gemini-2.5-flash
            instruction: Help.
        """)
    with collect() as collector, serve(FakeGemini(
            replies={"helper": [{"text": "hello"}]})) as fake:
        (tmp_path / "spec.yaml").write_text(simple.format(endpoint=collector.url))
        from click.testing import CliRunner

        from agentspec.cli import cli

        built = CliRunner().invoke(cli, ["build", str(tmp_path / "spec.yaml"), "-o",
                                         str(tmp_path / "out")])
        assert built.exit_code == 0, built.output
        env = {"GOOGLE_GEMINI_BASE_URL": fake.url, "GOOGLE_API_KEY": "fake-key",
               "OTEL_BSP_SCHEDULE_DELAY": "100"}  # export each batch at once
        with adk_server("api_server", tmp_path / "out", env, tmp_path / "api.log") as url:
            client = httpx.Client(base_url=url, timeout=300)
            session = client.post("/apps/desk/users/u/sessions", json={}).json()["id"]
            ran = client.post("/run", json={
                "app_name": "desk", "user_id": "u", "session_id": session,
                "new_message": {"role": "user", "parts": [{"text": "hi"}]}})
            assert ran.status_code == 200, ran.text
            deadline = time.monotonic() + 120  # generous: polling, not a timing check
            while not collector.named("invoke_agent helper") and time.monotonic() < deadline:
                time.sleep(0.2)
        agent = collector.named("invoke_agent helper")
        assert agent, (tmp_path / "api.log").read_text()[-3000:]
        assert agent[0].attributes["agentspec.agent.kind"] == "llm"
        assert len(fake.requests) == 1
