"""Models made of models: fallback chains and routes, and LiteLLM endpoints for real (a fake
OpenAI-compatible server on loopback)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from agentspec.compiler import build_objects, compile_spec, emit_package, write_package
from agentspec.runtime.model_routing import FallbackLlm, ModelsFailed, RoutedLlm
from tests.buildkit import package_loader
from tests.openai_server import closed_port, openai_server

KEY = "sk-test-7f3a9c-not-a-real-key"

SPEC = """\
agentspec: 1
name: chain
models:
  down:
    id: openai/local-model
    provider: litellm
    base_url: http://127.0.0.1:{down}/v1
    api_key: ${{env.LOCAL_LLM_KEY}}
    args: {{num_retries: 0, timeout: 10}}
  up:
    id: openai/local-model
    provider: litellm
    base_url: {up}
    api_key: ${{env.LOCAL_LLM_KEY}}
    args: {{num_retries: 0, timeout: 10}}
  resilient: {{fallback: [down, up]}}
agents:
  helper:
    model: resilient
    instruction: Answer briefly.
"""


async def _ask(app: Any, text: str, streaming: bool = False,
               state: dict[str, Any] | None = None) -> list[str]:
    from google.adk.agents.run_config import RunConfig, StreamingMode
    from google.adk.runners import InMemoryRunner

    runner = InMemoryRunner(app=app)
    try:
        session = await runner.session_service.create_session(app_name=app.name, user_id="u",
                                                              state=state)
        said = []
        config = RunConfig(streaming_mode=StreamingMode.SSE if streaming else StreamingMode.NONE)
        async for event in runner.run_async(
                user_id="u", session_id=session.id, run_config=config,
                new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            if event.error_code:
                raise AssertionError(f"{event.error_code}: {event.error_message}")
            said += [p.text for p in (event.content.parts if event.content else None) or []
                     if p.text and not event.partial]
        return said
    finally:
        await runner.close()


@pytest.mark.slow  # two fake servers and a refused connection per case (about 5 s of CPU)
@pytest.mark.parametrize("streaming", [False, True], ids=["json", "sse"])
def test_chain_answers_through_second_server_when_first_is_down(
        spec_dir: Any, monkeypatch: pytest.MonkeyPatch, streaming: bool) -> None:
    monkeypatch.setenv("LOCAL_LLM_KEY", KEY)
    with openai_server(KEY, "Hello from the second server") as up:
        path = spec_dir(SPEC.format(down=closed_port(), up=up.url))
        compiled = compile_spec(path, environ={"LOCAL_LLM_KEY": KEY})
        assert compiled.ok, compiled.diagnostics
        app, problems = build_objects(compiled)
        assert not problems
        said = asyncio.run(_ask(app, "Say hello", streaming))
    assert said == ["Hello from the second server"]
    assert not up.problems  # every request carried `Authorization: Bearer <key>`
    assert len(up.requests) == 1 and up.requests[0]["model"] == "local-model"
    assert bool(up.requests[0].get("stream")) == streaming
    assert up.requests[0]["messages"][-1]["content"] in ("Say hello",
                                                         [{"type": "text", "text": "Say hello"}])
    assert KEY not in repr(app)  # the key is no field of the model objects


def test_generated_package_reads_the_key_at_run_time(
        spec_dir: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_LLM_KEY", KEY)
    with openai_server(KEY, "Hello from the package") as up:
        path = spec_dir(SPEC.format(down=closed_port(), up=up.url))
        compiled = compile_spec(path, environ={"LOCAL_LLM_KEY": KEY})
        out = tmp_path / "out"
        assert not write_package(emit_package(compiled, out), out)
        built = [p for p in out.rglob("*") if p.is_file()]
        assert built and not [p for p in built if KEY.encode() in p.read_bytes()]
        assert "expand('${env.LOCAL_LLM_KEY}')" in (out / "chain" / "agent.py").read_text()
        with package_loader(monkeypatch) as load:
            app = load(out, "chain")
            said = asyncio.run(_ask(app, "Say hello"))
    assert said == ["Hello from the package"]
    assert not up.problems and len(up.requests) == 1


def test_a_wrong_key_is_refused_by_the_server(spec_dir: Any,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's check can fail: a chain whose every member is refused says so."""
    monkeypatch.setenv("LOCAL_LLM_KEY", "wrong")
    with openai_server(KEY, "never") as up:
        compiled = compile_spec(spec_dir(SPEC.format(down=closed_port(), up=up.url)),
                                environ={"LOCAL_LLM_KEY": "wrong"})
        app, _ = build_objects(compiled)
        # ADK turns the model's error into an error event, which `_ask` raises
        with pytest.raises(AssertionError, match=r"ModelsFailed: agent `helper`: model "
                           r"`resilient` failed: every model failed before answering \(`down` "
                           r"at http://127.0.0.1:\d+/v1: connection refused .*; `up` at "
                           r"http://127.0.0.1:\d+/v1: HTTP 401: .*bad key"):
            asyncio.run(_ask(app, "Say hello"))
    assert up.problems == ["Authorization was 'Bearer wrong'"]


ROUTED = """\
agentspec: 1
name: tiers
models:
  basic: {{id: openai/small, provider: litellm, base_url: "{basic}",
          api_key: "${{env.LOCAL_LLM_KEY}}"}}
  gold: {{id: openai/large, provider: litellm, base_url: "{gold}",
         api_key: "${{env.LOCAL_LLM_KEY}}"}}
  down: {{id: openai/large, provider: litellm, base_url: "http://127.0.0.1:{down}/v1",
         api_key: "${{env.LOCAL_LLM_KEY}}", args: {{num_retries: 0}}}}
  picked:
    route: {{state: tier, map: {{gold: gold, platinum: down}}}}
    models: [basic, gold, down]
    fallback: [gold]
agents:
  helper:
    model: picked
    instruction: Answer briefly.
"""


def test_a_routed_model_picks_by_state_per_call(spec_dir: Any, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_LLM_KEY", KEY)
    with openai_server(KEY, "basic answer") as basic, openai_server(KEY, "gold answer") as gold:
        compiled = compile_spec(spec_dir(ROUTED.format(basic=basic.url, gold=gold.url,
                                                       down=closed_port())),
                                environ={"LOCAL_LLM_KEY": KEY})
        assert compiled.ok, compiled.diagnostics
        app, problems = build_objects(compiled)
        assert not problems
        out = tmp_path / "out"
        assert not write_package(emit_package(compiled, out), out)
        with package_loader(monkeypatch) as load:
            for built in (app, load(out, "tiers")):
                assert asyncio.run(_ask(built, "hi", state={"tier": "gold"})) == ["gold answer"]
                assert asyncio.run(_ask(built, "hi", state={"tier": "other"})) == [
                    "basic answer"]  # not in the map: the first of `models`
                # the chosen model's server is down: the route's fallback answers
                assert asyncio.run(_ask(built, "hi", state={"tier": "platinum"})) == [
                    "gold answer"]
    assert [r["model"] for r in basic.requests] == ["small", "small"]
    assert [r["model"] for r in gold.requests] == ["large"] * 4
    assert not basic.problems and not gold.problems


# importing LiteLLM stays offline -------------------------------------------------------------

_BLOCKED_IMPORT = """
import socket, sys
attempts = []
def refuse(*args, **kwargs):
    attempts.append(args)
    raise OSError("network blocked by the test")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.getaddrinfo = refuse
socket.create_connection = refuse
{imports}
print("attempts", len(attempts))
"""


def _import_with_sockets_blocked(imports: str, env: dict[str, str]) -> str:
    result = subprocess.run([sys.executable, "-c", _BLOCKED_IMPORT.format(imports=imports)],
                            capture_output=True, text=True, env=env, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


@pytest.mark.slow  # over 5 s of CPU (tests/conftest.py measures it)
def test_importing_litellm_through_agentspec_reaches_no_network() -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    imports = textwrap.dedent("""
        from agentspec.runtime.models import litellm
        model = litellm("openai/x", base_url="http://127.0.0.1:9/v1")
        import litellm as module
        assert module.model_cost, "the bundled cost map is loaded"
    """)
    assert _import_with_sockets_blocked(imports, env) == "attempts 0"
    # the control: LiteLLM imported on its own does try to fetch its cost map
    assert _import_with_sockets_blocked("import litellm", env) != "attempts 0"


# the failover rules ----------------------------------------------------------------------------


class _Fake(BaseLlm):
    """Raises `error` before answering, or answers `text` (then raises `after`, if set)."""

    error: str | None = None
    text: str = ""
    after: str | None = None
    calls: int = 0

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        self.calls += 1
        assert llm_request.model == self.model  # each member sees its own id
        if self.error:
            raise ConnectionError(self.error)
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=self.text)]))
        if self.after:
            raise RuntimeError(self.after)


async def _answers(model: BaseLlm) -> list[str]:
    request = LlmRequest(model=model.model, contents=[types.Content(
        role="user", parts=[types.Part(text="hi")])])
    return [r.content.parts[0].text or "" async for r in model.generate_content_async(request)
            if r.content and r.content.parts]


def test_fallback_moves_on_only_before_the_first_response() -> None:
    a, b = _Fake(model="a", error="refused"), _Fake(model="b", text="from b")
    chain = FallbackLlm(model="chain", members={"a": a, "b": b}, fallback=["a", "b"])
    assert asyncio.run(_answers(chain)) == ["from b"]
    late = _Fake(model="late", text="partial", after="cut off")
    spare = _Fake(model="spare", text="never")
    chain = FallbackLlm(model="chain", members={"late": late, "spare": spare},
                        fallback=["late", "spare"])
    with pytest.raises(RuntimeError, match="cut off"):
        asyncio.run(_answers(chain))
    assert spare.calls == 0


def test_every_option_failing_names_each_failure() -> None:
    chain = FallbackLlm(model="chain", members={
        "a": _Fake(model="a", error="refused"), "b": _Fake(model="b", error="429")},
        fallback=["a", "b"])
    with pytest.raises(ModelsFailed, match=r"`a`: ConnectionError: refused; `b`: "
                       r"ConnectionError: 429"):
        asyncio.run(_answers(chain))


def test_python_route_is_asked_again_with_the_failed_names() -> None:
    asked: list[set[str]] = []

    def pick(names: list[str], ctx: Any, failed: set[str]) -> str | None:
        asked.append(set(failed))
        return next((n for n in ["strong", "fast"] if n not in failed), None)

    strong, fast = _Fake(model="strong", error="503"), _Fake(model="fast", text="fast one")
    routed = RoutedLlm(model="r", members={"strong": strong, "fast": fast},
                       choices=["fast", "strong"], route_function=pick)
    assert asyncio.run(_answers(routed)) == ["fast one"]
    assert asked == [set(), {"strong"}]
