"""Helpers for the back-end tests: shipped specs, importing generated packages, fingerprints,
servers in a process of their own or on a loopback port."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import json
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentspec.compiler import Compiled, compile_spec

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted(ROOT.glob("specs/*.yaml")) + sorted(ROOT.glob("examples/*/*.yaml"))
#: specs that must be buildable (travel_desk once the file exists)
REQUIRED_BUILDABLE = [ROOT / "specs/pipeline.yaml", ROOT / "specs/deep_agent.yaml",
                      ROOT / "specs/support_router.yaml", ROOT / "specs/planner.yaml",
                      ROOT / "specs/offline_jobs.yaml",
                      ROOT / "examples/weather/agent.yaml",
                      *[p for p in [ROOT / "specs/travel_desk.yaml"] if p.exists()]]
#: specs that build only with environment variables set (the values are fakes)
NEEDS_ENVIRON = {"research_desk": {"GITHUB_TOKEN": "not-a-real-token"}}


def spec_id(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@cache
def compiled(path: Path) -> Compiled:
    """The spec compiled with an empty environment (the same one for every test)."""
    return compile_spec(path, environ={})


@cache
def buildable() -> list[Path]:
    return [p for p in SHIPPED if compiled(p).ok]


def buildable_params() -> list[Any]:
    return [pytest.param(p, id=spec_id(p)) for p in buildable()]


# importing generated packages ---------------------------------------------------------------


def purge(package: str) -> None:
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]


@contextlib.contextmanager
def package_loader(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """`load(out_dir, name)`: the App of a generated package, imported through ADK's own
    loader (as `adk run` / `adk web` do); modules and sys.path are restored afterwards."""
    from google.adk.cli.utils.agent_loader import AgentLoader

    monkeypatch.setenv("ADK_DISABLE_LOAD_DOTENV", "1")
    saved = list(sys.path)
    loaded: list[str] = []

    def load(out_dir: Path, name: str) -> Any:
        purge(name)
        importlib.invalidate_caches()
        loaded.append(name)
        return AgentLoader(agents_dir=str(out_dir)).load_agent(name)

    try:
        yield load
    finally:
        for name in loaded:
            purge(name)
        sys.path[:] = saved


# fingerprints -------------------------------------------------------------------------------


def _qualified(function: Any) -> str:
    function = inspect.unwrap(function)
    module = getattr(function, "__module__", None) or type(function).__module__
    name = getattr(function, "__qualname__", None) or type(function).__qualname__
    return f"{module}.{name}"


def _callbacks(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, list):
        return [_qualified(v) for v in value]
    return _qualified(value)


def _model(model: Any) -> Any:
    if model is None or isinstance(model, str):
        return model
    return f"{type(model).__name__}:{getattr(model, 'model', None)}"


def _instruction(value: Any) -> Any:
    from agentspec.runtime.instructions import Template

    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Template):
        return {"template": value.text}
    if hasattr(value, "model_dump"):  # types.Content
        return value.model_dump(exclude_none=True, mode="json")
    return _qualified(value)


def _schema(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, type) and hasattr(value, "model_json_schema"):
        return {"class": value.__name__, "schema": value.model_json_schema()}
    return repr(value)


def _planner(planner: Any) -> Any:
    if planner is None:
        return None
    thinking = getattr(planner, "thinking_config", None)
    return {"class": type(planner).__name__,
            "thinking": thinking.model_dump(exclude_none=True) if thinking else None}


def tool_fingerprint(tool: Any) -> dict[str, Any]:
    from google.adk.tools import BaseTool, FunctionTool
    from google.adk.tools.base_toolset import BaseToolset

    if isinstance(tool, BaseToolset):
        return {"toolset": type(tool).__name__}
    if not isinstance(tool, BaseTool):
        tool = FunctionTool(tool)
    declaration = tool._get_declaration()
    found: dict[str, Any] = {"class": type(tool).__name__, "name": tool.name,
                             "declaration": declaration.model_dump(exclude_none=True, mode="json")
                             if declaration is not None else None}
    if hasattr(tool, "func"):
        found["func"] = _qualified(tool.func)
    if getattr(tool, "agent", None) is not None:
        found["agent"] = tool.agent.name
    return found


CALLBACK_FIELDS = ("before_agent_callback", "after_agent_callback", "before_model_callback",
                   "after_model_callback", "on_model_error_callback", "before_tool_callback",
                   "after_tool_callback", "on_tool_error_callback")


def agent_fingerprint(agent: Any) -> dict[str, Any]:
    from google.adk.agents import LlmAgent

    found: dict[str, Any] = {"class": type(agent).__name__, "name": agent.name,
                             "description": agent.description,
                             "parent": agent.parent_agent.name if agent.parent_agent else None}
    if isinstance(agent, LlmAgent):
        config = agent.generate_content_config
        found.update(
            model=_model(agent.model),
            instruction=_instruction(agent.instruction),
            global_instruction=_instruction(agent.global_instruction),
            static_instruction=_instruction(agent.static_instruction),
            mode=agent.mode, output_key=agent.output_key,
            include_contents=agent.include_contents,
            disallow_transfer_to_parent=agent.disallow_transfer_to_parent,
            disallow_transfer_to_peers=agent.disallow_transfer_to_peers,
            generate_content_config=config.model_dump(exclude_none=True) if config else None,
            planner=_planner(agent.planner),
            code_executor=type(agent.code_executor).__name__ if agent.code_executor else None,
            output_schema=_schema(agent.output_schema),
            input_schema=_schema(agent.input_schema),
            tools=[tool_fingerprint(t) for t in agent.tools])
    found.update({name: _callbacks(getattr(agent, name, None)) for name in CALLBACK_FIELDS})
    found["max_iterations"] = getattr(agent, "max_iterations", None)
    found["sub_agents"] = [agent_fingerprint(a) for a in agent.sub_agents]
    return found


def _plugin(plugin: Any) -> dict[str, Any]:
    found = {"class": _qualified(type(plugin)), "name": getattr(plugin, "name", None)}
    instruction = getattr(plugin, "global_instruction", None)
    if instruction is not None:
        found["global_instruction"] = _instruction(instruction)
    public = {k: v for k, v in vars(plugin).items() if not k.startswith("_") and
              isinstance(v, (str, int, float, bool, type(None), dict, list))}
    found["settings"] = public
    return found


def _compaction(config: Any) -> Any:
    if config is None:
        return None
    found = config.model_dump(exclude={"summarizer"}, exclude_none=True)
    summarizer = config.summarizer
    if summarizer is not None:
        found["summarizer"] = {"class": type(summarizer).__name__,
                               "llm": _model(getattr(summarizer, "_llm", None))}
    return found


def fingerprint(app: Any) -> dict[str, Any]:
    """Everything about an App that the spec decides, as plain data."""
    return {"name": app.name,
            "plugins": [_plugin(p) for p in app.plugins],
            "events_compaction_config": _compaction(app.events_compaction_config),
            "context_cache_config": repr(app.context_cache_config),
            "resumability_config": repr(app.resumability_config),
            "root_agent": agent_fingerprint(app.root_agent)}


def walk(agent: Any) -> Iterator[Any]:
    """`agent` and every agent under it (the runtime's own walk)."""
    from agentspec.runtime.agents import walk as every_agent

    return every_agent(agent)


def llm_agents(agent: Any) -> list[Any]:
    from google.adk.agents import LlmAgent

    return [a for a in walk(agent) if isinstance(a, LlmAgent)]


# one scripted conversation turn ------------------------------------------------------------


@dataclass
class Said:
    """What one scripted user turn produced."""

    said: list[tuple[str, str]]  # (author, text) of the final (non-partial) texts, in order
    state: dict[str, Any]
    models: dict[str, Any]  # agent -> ScriptedModel
    results: list[tuple[str, Any]]  # (tool, response) of the function responses


def scripted_turn(app: Any, replies: dict[str, list[Any]], message: str = "Hi", *,
                  state: dict[str, Any] | None = None,
                  prepare: Callable[[Any], None] | None = None, user: str = "u") -> Said:
    """Run `message` through `app` in a fresh in-memory session of `user`, every LLM agent
    replaying its `replies` (`prepare(app)` runs after the script is installed)."""
    from agentspec.testing.scripted import install_script

    async def main() -> Said:
        from google.adk.runners import InMemoryRunner
        from google.genai import types

        models = install_script(app.root_agent, replies)
        if prepare is not None:
            prepare(app)
        runner = InMemoryRunner(app=app)
        try:
            session = await runner.session_service.create_session(
                app_name=app.name, user_id=user, state=state or {})
            said, results = [], []
            content = types.Content(role="user", parts=[types.Part(text=message)])
            async for event in runner.run_async(user_id=user, session_id=session.id,
                                                new_message=content):
                for part in (event.content.parts if event.content else None) or []:
                    if part.text and not event.partial:
                        said.append((event.author, part.text))
                    if part.function_response:
                        results.append((part.function_response.name,
                                        part.function_response.response))
            stored = await runner.session_service.get_session(
                app_name=app.name, user_id=user, session_id=session.id)
        finally:
            await runner.close()
        assert stored is not None
        return Said(said, dict(stored.state), models, results)

    return asyncio.run(main())


# servers -------------------------------------------------------------------------------------


def free_port() -> int:
    """A loopback port nothing listens on now (the kernel's choice)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def served(what: str, command: list[str], *, ready: str, log: Path, env: Mapping[str, str],
           cwd: Path | None = None) -> Iterator[None]:
    """`command` (`what` it is, for a failure) in a process of its own with the environment
    `env`, its output in `log`; entered once a GET of the URL `ready` succeeds, stopped on
    leaving. A process that exits first, or does not answer in 180 s, fails the test with
    the end of its log."""
    with log.open("wb") as output:
        process = subprocess.Popen(command, env=dict(env), cwd=cwd,
                                   stdout=output, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 180  # a generous readiness deadline, not a check
            while True:
                if process.poll() is not None:
                    pytest.fail(f"{what} exited: {log.read_text()[-3000:]}")
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(ready, timeout=5).is_success:
                        break
                if time.monotonic() > deadline:
                    pytest.fail(f"{what} never answered: {log.read_text()[-3000:]}")
                time.sleep(0.2)
            yield
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextlib.contextmanager
def loopback_http(body: bytes | None, *, status: int = 200,
                  seen: list[str] | None = None) -> Iterator[str]:
    """A loopback server answering every GET with `status` and `body` (JSON), or never
    (None); the Authorization headers it gets go into `seen`. Its URL."""
    release = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802
            if seen is not None:
                seen.append(self.headers.get("Authorization") or "")
            if body is None:
                release.wait(60)
                return
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        release.set()
        server.shutdown()
def approved_turn(app: Any, replies: dict[str, list[Any]], decision: Any) -> list[Any]:
    """Run one turn of `app` with scripted `replies`, answering every approval request with
    `decision` (a `Decision`); the requests asked (`PendingApproval`), in order."""
    from google.adk.runners import InMemoryRunner

    from agentspec.testing.conversation import turn
    from agentspec.testing.scripted import install_script

    asked: list[Any] = []

    def decide(pending: Any) -> Any:
        asked.append(pending)
        return decision

    async def main() -> None:
        install_script(app.root_agent, replies)
        runner = InMemoryRunner(app=app)
        try:
            session = await runner.session_service.create_session(app_name=app.name,
                                                                  user_id="user")
            assert await turn(runner, session.id, "Go", decide=decide) == []
        finally:
            await runner.close()

    asyncio.run(main())
    return asked


def service_account_key(token_uri: str) -> tuple[str, bytes]:
    """A fresh RSA service-account key whose token endpoint is `token_uri`, and its public
    key (a fresh key id: ADK caches tokens per key id, process-wide)."""
    import secrets

    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = private.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo)
    key = {"type": "service_account", "project_id": "pets-project",
           "private_key_id": secrets.token_hex(8), "private_key": pem,
           "client_email": "agent@pets-project.iam.gserviceaccount.com", "client_id": "1",
           "auth_uri": "https://accounts.example.invalid/auth", "token_uri": token_uri}
    return json.dumps(key), public
# a project with one offline agent, for the job tests and bench/jobs_failover.py ------------

OFFLINE_SPEC = """\
agentspec: 1
name: crunch
root: lead
agents:
  lead:
    model: gemini-2.5-flash
    instruction: Delegate.
    tools: [{{agent: cruncher}}]
  cruncher:
    description: Crunches numbers.
    model: gemini-2.5-flash
    instruction: Crunch.
    execution_mode: offline
    tools: [{tools}]
{agent_fields}jobs:
  store: "${{env.JOBS_URL}}"
{jobs_fields}"""
#: the offline agent's tools. Each appends `NAME PID TIME` to $CRUNCH_LOG before it does
#: anything else; the first run of the tool named by $CRUNCH_HANG hangs (until its worker is
#: killed); while $CRUNCH_GO names a file that does not exist, `crunch` blocks the event loop
#: (it is sync) until it does
OFFLINE_TOOLS = '''\
import os, time
from pathlib import Path


def _log(name: str) -> None:
    log = Path(os.environ["CRUNCH_LOG"])
    first = not log.exists() or name not in [line.split()[0] for line in
                                             log.read_text().splitlines()]
    with log.open("a") as f:
        f.write(f"{name} {os.getpid()} {time.time()}\\n")
    if first and os.environ.get("CRUNCH_HANG") == name:
        time.sleep(600)


def crunch() -> dict:
    """Crunches."""
    _log("crunch")
    go = os.environ.get("CRUNCH_GO")
    while go and not Path(go).exists():
        time.sleep(0.05)
    return {"crunched": True}


def step_one() -> dict:
    """First step."""
    _log("step_one")
    return {"one": True}


def step_two() -> dict:
    """Second step."""
    _log("step_two")
    return {"two": True}
'''


def offline_project(directory: Path, *, tools: tuple[str, ...] = ("crunch",),
                    agent_fields: str = "", jobs_fields: str = "") -> Path:
    """`directory` with `spec.yaml`: a root `lead` that delegates to the offline `cruncher`,
    which has `tools` of `crunch_tools.py` (OFFLINE_TOOLS), jobs in $JOBS_URL. `agent_fields`
    and `jobs_fields`: more YAML lines of the cruncher (indented 4) and of `jobs:` (2)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "spec.yaml").write_text(OFFLINE_SPEC.format(
        tools=", ".join(f"{{python: crunch_tools:{name}}}" for name in tools),
        agent_fields=agent_fields, jobs_fields=jobs_fields))
    (directory / "crunch_tools.py").write_text(OFFLINE_TOOLS)
    return directory


def tool_runs(log: Path) -> list[tuple[str, int]]:
    """(tool, process id) of each run of an offline project's tools ($CRUNCH_LOG), in
    order."""
    lines = log.read_text().splitlines() if log.exists() else []
    return [(name, int(pid)) for name, pid, _ in (line.split() for line in lines)]


def project_files(root: Path) -> list[tuple[Any, ...]]:
    """The `type: store` files in the project's own database (`.agentspec/sessions.db`
    under `root`, the specs' `sessions:`): none when it or its table does not exist."""
    database = root / ".agentspec" / "sessions.db"
    if not database.exists():
        return []
    with sqlite3.connect(database) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master")]
        return list(db.execute("SELECT * FROM agentspec_files")) \
            if "agentspec_files" in tables else []
