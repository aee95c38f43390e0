"""`build --bundle`: a package that runs wherever it is copied, tried the way `adk deploy`
stages it.

The project has user tools (a package with a data file, importing a sibling module the spec
never names), a memory file, a skills directory and secrets beside them. A model is no part
of an offline test, so a `before_model` callback of the project stands in for it (a
scripted `BaseLlm` cannot reach a server's own runner): it calls the tool, loads the skill,
then answers with what the tool, the memory file and the skill said, which is only right
when every file was read from the bundle.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from agentspec.bundle.wheel import version
from agentspec.cli import cli
from tests.buildkit import free_port
from tests.spec_defaults import spec_job_request

SPEC = """\
    agentspec: 1
    name: desk
    root: clerk
    tools:
      lookup_order: {python: zq_bundle_tools.orders:lookup_order}
    agents:
      clerk:
        model: gemini-2.5-flash
        instruction: Answer questions about orders.
        tools: [lookup_order]
        memory: [./AGENTS.md]
        skills: [./skills]
        callbacks: {before_model: [zq_bundle_tools.model:scripted]}
    """

ORDERS = '''\
import json
import os

import zq_bundle_pricing

_HERE = os.path.dirname(os.path.abspath(__file__))


def lookup_order(order_id: str) -> dict:
    """The status of an order."""
    with open(os.path.join(_HERE, "orders.json"), encoding="utf-8") as handle:
        order = json.load(handle)[order_id]
    return {"status": f"{order['status']}, {zq_bundle_pricing.total(order['items'])} EUR"}
'''

PRICING = '''\
def total(items: list) -> int:
    return sum(item["price"] for item in items)
'''

MODEL = '''\
import json
import re

from google.adk.models.llm_response import LlmResponse
from google.genai import types


def scripted(callback_context, llm_request):
    """Stands in for the model: look the order up, load the skill, then answer."""
    done = {p.function_response.name: p.function_response.response
            for c in llm_request.contents for p in c.parts or [] if p.function_response}
    if "lookup_order" not in done:
        part = types.Part(function_call=types.FunctionCall(
            name="lookup_order", args={"order_id": "A-17"}))
    elif "load_skill" not in done:
        part = types.Part(function_call=types.FunctionCall(
            name="load_skill", args={"skill_name": "refunds"}))
    else:
        memory = re.search(r"MEMORY-MARK-[0-9]+", str(llm_request.config.system_instruction))
        skill = re.search(r"SKILL-MARK-[0-9]+", json.dumps(done["load_skill"], default=str))
        part = types.Part(text=" / ".join([
            done["lookup_order"]["status"], memory.group(0) if memory else "no memory",
            skill.group(0) if skill else "no skill"]))
    return LlmResponse(content=types.Content(role="model", parts=[part]))
'''

SKILL = """\
    ---
    name: refunds
    description: How refunds work. Use when a customer asks for their money back.
    ---
    Refunds take SKILL-MARK-7 days.
    """

ANSWER = "shipped, 42 EUR / MEMORY-MARK-42 / SKILL-MARK-7"
SECRET = "SENTINEL-b16-not-a-real-key"


def _files() -> dict[str, str]:
    return {
        ".git/HEAD": "ref: refs/heads/main\n",
        ".env": f"GOOGLE_API_KEY={SECRET}\n",
        "agents/desk.yaml": textwrap.dedent(SPEC),
        "agents/.env": f"GOOGLE_API_KEY={SECRET}\n",
        "agents/AGENTS.md": "Quote MEMORY-MARK-42 in every answer.\n",
        "agents/skills/refunds/SKILL.md": textwrap.dedent(SKILL),
        "agents/skills/refunds/.env": f"TOKEN={SECRET}\n",
        "agents/skills/refunds/deploy.pem": f"{SECRET}\n",
        "agents/zq_bundle_tools/__init__.py": "",
        "agents/zq_bundle_tools/orders.py": ORDERS,
        "agents/zq_bundle_tools/orders.json": json.dumps(
            {"A-17": {"status": "shipped", "items": [{"price": 40}, {"price": 2}]}}),
        "agents/zq_bundle_tools/model.py": MODEL,
        "agents/zq_bundle_tools/.env": f"TOKEN={SECRET}\n",
        "agents/zq_bundle_pricing.py": PRICING,
        "agents/unused.py": "raise SystemExit('not part of the app')\n",
    }


@pytest.fixture(autouse=True)
def _fresh_modules() -> Iterator[None]:
    """Each project's modules are imported from its own directory: build imports them in
    this process, and a module left in sys.modules would stand for the next project's."""
    def purge() -> None:
        for name in [n for n in sys.modules if n.split(".")[0].startswith("zq_bundle_")]:
            del sys.modules[name]
    purge()
    yield
    purge()


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name="agentspec")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    for name, text in _files().items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def bundle(project: Path, out: Path) -> Path:
    done = invoke("build", str(project / "agents/desk.yaml"), "--bundle", "-o", str(out))
    assert done.exit_code == 0, done.output
    return out / "desk"


def _every_file(directory: Path) -> set[str]:
    return {p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file()}


# --- what the bundle holds ----------------------------------------------------------------


def test_the_bundle_holds_the_modules_and_files_the_app_needs_and_no_secret(
        project: Path, tmp_path: Path) -> None:
    package = bundle(project, tmp_path / "out")
    wheel = f"agentspec_adk-{version()}-py3-none-any.whl"
    assert _every_file(package) - {p for p in _every_file(package) if "__pycache__" in p} == {
        "__init__.py", "agent.py", "_paths.py", "requirements.txt", f"_wheels/{wheel}",
        "_project/agents/AGENTS.md", "_project/agents/skills/refunds/SKILL.md",
        "_project/agents/zq_bundle_tools/__init__.py", "_project/agents/zq_bundle_tools/orders.py",
        "_project/agents/zq_bundle_tools/orders.json", "_project/agents/zq_bundle_tools/model.py",
        "_project/agents/zq_bundle_pricing.py",  # imported by orders.py: through its imports
        "_project/agents/desk.yaml"}  # for `agentspec worker` and `agentspec jobs`
    assert not any(SECRET in p.read_text(errors="replace") for p in package.rglob("*")
                   if p.is_file() and p.suffix != ".whl")
    requirements = (package / "requirements.txt").read_text().splitlines()
    assert [line for line in requirements if not line.startswith("#")] == [
        "--find-links ./_wheels", f"agentspec-adk=={version()}"]
    with zipfile.ZipFile(package / "_wheels" / wheel) as archive:
        names = archive.namelist()
        assert "agentspec/bundle/__init__.py" in names and not any(".pyc" in n for n in names)
        assert f"agentspec_adk-{version()}.dist-info/entry_points.txt" in names


def test_the_bundle_reports_what_it_left_out(project: Path, tmp_path: Path) -> None:
    done = invoke("build", str(project / "agents/desk.yaml"), "--bundle",
                  "-o", str(tmp_path / "out"))
    assert done.exit_code == 0, done.output
    left_out = sorted(line for line in done.output.splitlines() if line.startswith("left out"))
    assert left_out == ["left out `agents/skills/refunds/.env`: it may hold secrets",
                        "left out `agents/skills/refunds/deploy.pem`: it may hold secrets",
                        "left out `agents/zq_bundle_tools/.env`: it may hold secrets"]


def test_the_bundle_imports_and_runs_alone_with_the_project_gone(
        project: Path, tmp_path: Path) -> None:
    """Copied alone to another directory, with the project deleted, ADK's AgentLoader loads
    it in a fresh interpreter and a turn reads every file from the bundle."""
    package = bundle(project, tmp_path / "out")
    alone = tmp_path / "elsewhere"
    shutil.copytree(package, alone / "desk")
    shutil.rmtree(project)
    shutil.rmtree(tmp_path / "out")
    script = textwrap.dedent("""\
        import asyncio, sys
        from google.adk.cli.utils.agent_loader import AgentLoader
        from google.adk.runners import InMemoryRunner
        from google.genai import types

        async def main():
            app = AgentLoader(agents_dir=sys.argv[1]).load_agent("desk")
            runner = InMemoryRunner(app=app)
            session = await runner.session_service.create_session(app_name="desk", user_id="u")
            said = []
            async for event in runner.run_async(user_id="u", session_id=session.id,
                    new_message=types.Content(role="user", parts=[types.Part(text="A-17?")])):
                if event.error_code:
                    raise SystemExit(f"{event.error_code}: {event.error_message}")
                said += [p.text for p in (event.content.parts if event.content else [])
                         if p.text]
            await runner.close()
            files = sorted({m.__file__ for n, m in sys.modules.items()
                            if n.split(".")[0] in ("zq_bundle_tools", "zq_bundle_pricing")})
            print(said[-1]); print("\\n".join(files))

        asyncio.run(main())
        """)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", script, str(alone)], cwd=tmp_path,
                          capture_output=True, text=True, env={**env,
                                                               "ADK_DISABLE_LOAD_DOTENV": "1"})
    assert done.returncode == 0, done.stderr
    answer, *modules = done.stdout.splitlines()
    assert answer == ANSWER
    assert modules and all(m.startswith(str(alone / "desk" / "_project")) for m in modules)


def test_a_bundle_goes_to_dist_beside_the_spec_by_default(project: Path) -> None:
    assert invoke("build", str(project / "agents/desk.yaml")).exit_code == 0
    done = invoke("build", str(project / "agents/desk.yaml"), "--bundle")
    assert done.exit_code == 0, done.output
    assert (project / "agents/dist/desk/_project/agents/AGENTS.md").is_file()
    assert not (project / "agents/desk/_project").exists()  # the package beside it stays
    # no offline agent, no worker to start: `agentspec worker` would refuse this spec
    assert "background jobs" not in done.output and "agentspec worker" not in done.output


def _with_root(project: Path, root: str, summarization: str = "") -> Path:
    spec = project / "agents/desk.yaml"
    spec.write_text(spec.read_text().replace("agents:\n", "backends:\n  here: {type: "
                    f"filesystem, root: {root}}}\nagents:\n", 1).replace(
                    "    memory:", "    filesystem: {backend: here, tools: [ls, read_file]}\n"
                    "    memory:") + summarization)
    return spec


def test_a_backend_root_ships_no_data_only_what_include_names(
        project: Path, tmp_path: Path) -> None:
    """A root of `.` holds the spec's directory: its data (notes, a first bundle in dist/, a
    virtual environment) is the agents', left out and listed; the modules and files the spec
    names are still shipped, and `--include` adds a starting file."""
    spec = _with_root(project, ".")
    (project / "agents/venv").mkdir()
    (project / "agents/venv/pyvenv.cfg").write_text("home = /usr/bin\n")
    (project / "agents/notes.md").write_text("a note\n")
    (project / "agents/seed").mkdir()
    (project / "agents/seed/start.md").write_text("start here\n")
    (project / "agents/seed/other.md").write_text("not named\n")
    assert invoke("build", str(spec), "--bundle").exit_code == 0
    done = invoke("build", str(spec), "--bundle",
                  "--include", str(project / "agents/seed/start.md"))
    assert done.exit_code == 0, done.output
    package = project / "agents/dist/desk"
    assert (package / "_project/agents/seed/start.md").read_text() == "start here\n"
    assert (package / "_project/agents/AGENTS.md").is_file()  # memory: named by the spec
    assert (package / "_project/agents/desk.yaml").is_file()  # the spec: for the worker
    for gone in ("notes.md", "seed/other.md", "dist", "venv"):
        assert not (package / "_project/agents" / gone).exists(), gone
    left_out = [line for line in done.output.splitlines() if line.startswith("left out")]
    data = "the agents' data in a backend root (ship a starting file with `--include {}`)"
    for path in ("agents/notes.md", "agents/seed/other.md", "agents/dist", "agents/venv"):
        assert f"left out `{path}`: {data.format(path)}" in left_out
    assert "left out `agents/.env`: it may hold secrets" in left_out
    assert not any(SECRET in p.read_text(errors="replace") for p in package.rglob("*")
                   if p.is_file() and p.suffix != ".whl")


def test_a_bundle_never_ships_conversation_history_or_evicted_results(
        project: Path, tmp_path: Path) -> None:
    # build --bundle copied backend roots whole: every user's summarized conversations and
    # evicted tool results went into the deployed package
    spec = _with_root(project, "./workspace", "summarization:\n  trigger: {tokens: 60}\n"
                      "  keep: {events: 5}\n  history: /conversation_history\n")
    work = project / "agents/workspace"
    for name in ("conversation_history/alice/s1.md", "large_tool_results/grep_1.txt",
                 "README.md"):
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(f"PRIVATE-{name}\n")
    done = invoke("build", str(spec), "--bundle", "-o", str(tmp_path / "out"),
                  "--include", str(work))  # the whole root: still no history, no results
    assert done.exit_code == 0, done.output
    shipped = tmp_path / "out/desk/_project/agents/workspace"
    assert sorted(p.name for p in shipped.iterdir()) == ["README.md"]
    assert "left out `agents/workspace/conversation_history`: conversation history" \
        in done.output
    assert "left out `agents/workspace/large_tool_results`: evicted tool results" in done.output
    named = invoke("build", str(spec), "--bundle", "-o", str(tmp_path / "out2"),
                   "--include", str(work / "conversation_history/alice/s1.md"))
    assert named.exit_code == 1
    assert "`agents/workspace/conversation_history/alice/s1.md` is conversation history: " \
        "a bundle never ships it" in named.output
    empty = invoke("build", str(spec), "--bundle", "-o", str(tmp_path / "out3"))
    assert empty.exit_code == 0, empty.output
    assert list((tmp_path / "out3/desk/_project/agents/workspace").iterdir()) == []


SECRET_NAMES = ["client_secret_123.apps.json", "token.json", "service_account.json",
                "gcp-key.json", "secrets.yaml", "credentials.ini", "deploy_key", "cert.pem.txt"]
SECRET_SHAPES = {
    "notes.txt": "-----BEGIN RSA PRIVATE KEY-----\nMIIE...\n-----END RSA PRIVATE KEY-----\n",
    "config.json": '{"type": "service_account", "project_id": "p"}',
    "settings.py": "KEY = 'AIza" + "x" * 35 + "'\n",
    "ci.txt": "token ghp_" + "a" * 36 + "\n",
    "aws.cfg": "id = AKIA" + "A" * 16 + "\n"}


def test_secret_names_and_contents_are_left_out_and_include_ships_one(
        project: Path, tmp_path: Path) -> None:
    skills = project / "agents/skills/refunds"
    for name in SECRET_NAMES:
        (skills / name).write_text(f"{SECRET}\n")
    for name, text in SECRET_SHAPES.items():
        (skills / name).write_text(text)
    done = invoke("build", str(project / "agents/desk.yaml"), "--bundle", "-o",
                  str(tmp_path / "out"), "--include", str(skills / "config.json"))
    assert done.exit_code == 0, done.output
    shipped = {p.name for p in (tmp_path / "out/desk/_project/agents/skills/refunds").iterdir()}
    assert shipped == {"SKILL.md", "config.json"}
    for name in SECRET_NAMES:
        assert f"left out `agents/skills/refunds/{name}`: it may hold secrets" in done.output
    for name in set(SECRET_SHAPES) - {"config.json"}:
        assert f"left out `agents/skills/refunds/{name}`: it looks like it holds" in done.output


def test_a_file_the_spec_names_that_holds_a_private_key_is_refused(
        project: Path, tmp_path: Path) -> None:
    (project / "agents/AGENTS.md").write_text(SECRET_SHAPES["notes.txt"])
    done = invoke("build", str(project / "agents/desk.yaml"), "--bundle", "-o",
                  str(tmp_path / "out"))
    assert done.exit_code == 1
    assert "AS425" in done.output and "looks like it holds a private key block" in done.output
    assert "--include agents/AGENTS.md" in done.output
    included = invoke("build", str(project / "agents/desk.yaml"), "--bundle", "-o",
                      str(tmp_path / "out"), "--include", str(project / "agents/AGENTS.md"))
    assert included.exit_code == 0, included.output


def test_include_outside_the_project_or_missing_is_refused(
        project: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("x\n")
    for path in (tmp_path / "outside.txt", project / "agents/nothing.txt"):
        done = invoke("build", str(project / "agents/desk.yaml"), "--bundle", "-o",
                      str(tmp_path / "out"), "--include", str(path))
        assert done.exit_code == 1 and "AS425" in done.output, done.output
    assert invoke("build", str(project / "agents/desk.yaml"), "--include",
                  str(project / "agents/AGENTS.md")).exit_code == 2


def test_a_bundle_replaces_its_own_output_only(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert invoke("build", str(project / "agents/desk.yaml"), "-o", str(out)).exit_code == 0
    package = bundle(project, out)  # a package build wrote becomes a bundle
    (project / "agents/AGENTS.md").write_text("Quote MEMORY-MARK-43.\n")
    assert (bundle(project, out) / "_project/agents/AGENTS.md").read_text() == \
        "Quote MEMORY-MARK-43.\n"
    assert sorted(p.name for p in out.iterdir()) == ["desk"]  # no staging directory left
    plain = invoke("build", str(project / "agents/desk.yaml"), "-o", str(out))
    assert plain.exit_code == 1 and "AS405" in plain.output and "holds a bundle" in plain.output
    (package / "notes.txt").write_text("mine")
    again = invoke("build", str(project / "agents/desk.yaml"), "--bundle", "-o", str(out))
    assert again.exit_code == 1 and "AS405" in again.output and "notes.txt" in again.output
    assert (package / "notes.txt").read_text() == "mine"


def test_what_the_modules_import_is_pinned_unless_agentspec_brings_it(
        project: Path, tmp_path: Path) -> None:
    from importlib import metadata

    (project / "agents/zq_bundle_pricing.py").write_text(
        "import hypothesis  # not one of agentspec's requirements\n"
        "import yaml  # google-adk requires PyYAML\n"
        "try:\n    import zq_not_installed\nexcept ImportError:\n    pass\n" + PRICING)
    done = invoke("build", str(project / "agents/desk.yaml"), "--bundle",
                  "-o", str(tmp_path / "out"))
    assert done.exit_code == 0, done.output
    requirements = (tmp_path / "out/desk/requirements.txt").read_text().splitlines()
    assert [line for line in requirements if not line.startswith(("#", "--"))] == [
        f"agentspec-adk=={version()}", f"hypothesis=={metadata.version('hypothesis')}"]
    assert "note: not pinned: the modules import `zq_not_installed`, which is not installed " \
           "here" in done.output


def test_the_extras_follow_the_spec_and_an_mcp_working_directory_is_copied(
        project: Path, tmp_path: Path) -> None:
    (project / "agents/servers").mkdir()
    (project / "agents/servers/calc_server.py").write_text("print('a server')\n")
    spec = project / "agents/desk.yaml"
    spec.write_text(spec.read_text().replace("tools:\n", "tools:\n  calc:\n    mcp: {command: "
                    "python3, args: [calc_server.py], cwd: ./servers}\n", 1).replace(
                    "tools: [lookup_order]", "tools: [lookup_order, calc]"))
    done = invoke("build", str(spec), "--bundle", "-o", str(tmp_path / "out"))
    assert done.exit_code == 0, done.output
    package = tmp_path / "out/desk"
    assert (package / "_project/agents/servers/calc_server.py").is_file()
    assert f"agentspec-adk[mcp]=={version()}" in (package / "requirements.txt").read_text()
    assert "cwd=spec_path('servers')" in (package / "agent.py").read_text()


def test_a_postgres_job_store_brings_the_postgres_extra_and_sqlite_state_is_not_copied(
        tmp_path: Path) -> None:
    shipped = Path(__file__).resolve().parent.parent / "specs/offline_jobs.yaml"
    for env, extra in (("prod", "[postgres]"), (None, "")):
        out = tmp_path / (env or "base")
        done = invoke("build", str(shipped), "--bundle", "-o", str(out),
                      *(["--env", env] if env else []))
        assert done.exit_code == 0, done.output
        package = out / "deal_desk"
        assert f"agentspec-adk{extra}=={version()}" in (package / "requirements.txt").read_text()
        assert not any(p.name.startswith(".") for p in package.rglob("*"))  # no .agentspec/


@pytest.mark.slow  # over 5 s of CPU (tests/conftest.py measures it)
def test_every_shipped_spec_bundles_and_loads_alone(tmp_path: Path) -> None:
    """Each required shipped spec's bundle, copied away from the repository, loads through
    ADK's AgentLoader in a fresh interpreter, its modules imported from the bundle."""
    from tests.buildkit import REQUIRED_BUILDABLE, ROOT

    out = tmp_path / "out"
    names = []
    for spec in REQUIRED_BUILDABLE:
        done = invoke("build", str(spec), "--bundle", "-o", str(out))
        assert done.exit_code == 0, (spec, done.output)
        names.append(done.output.splitlines()[-1].split(":")[0].rsplit("/", 1)[-1])
    alone = tmp_path / "elsewhere"
    shutil.copytree(out, alone)
    script = textwrap.dedent("""\
        import os, sys
        from google.adk.cli.utils.agent_loader import AgentLoader
        alone, repository, names = sys.argv[1], sys.argv[2], sys.argv[3:]
        theirs = (alone, os.path.join(repository, "specs"), os.path.join(repository, "examples"))
        for name in names:
            before = set(sys.modules)
            AgentLoader(agents_dir=alone).load_agent(name)
            for module in sorted(set(sys.modules) - before):
                where = getattr(sys.modules[module], "__file__", None) or ""
                if where.startswith(theirs) and module.split(".")[0] != name:
                    print(name, module, where)
        """)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", script, str(alone), str(ROOT), *names],
                          cwd=tmp_path, capture_output=True, text=True,
                          env={**env, "ADK_DISABLE_LOAD_DOTENV": "1"})
    assert done.returncode == 0, done.stderr
    loaded = [line.split() for line in done.stdout.splitlines()]
    assert loaded, "no module of the specs' own was imported"
    assert all(where.startswith(str(alone / name / "_project")) and str(ROOT) not in where
               for name, _, where in loaded), loaded


def test_check_compares_the_bundle_on_disk_with_the_spec(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    spec = str(project / "agents/desk.yaml")
    package = bundle(project, out)
    (package / "__pycache__").mkdir()  # as importing it leaves behind: not a difference
    (package / "__pycache__/agent.cpython-311.pyc").write_bytes(b"cache")
    fresh = invoke("build", spec, "--bundle", "--check", "-o", str(out))
    assert fresh.exit_code == 0 and f"up to date: {package}" in fresh.output, fresh.output
    (project / "agents/AGENTS.md").write_text("Quote MEMORY-MARK-43.\n")
    (project / "agents/skills/refunds/more.md").write_text("more\n")
    (package / "_project/agents/extra.txt").write_text("by hand\n")
    stale = invoke("build", spec, "--bundle", "--check", "-o", str(out))
    assert stale.exit_code == 1
    assert stale.stdout.splitlines() == ["differs: _project/agents/AGENTS.md",
                                         "not from the spec: _project/agents/extra.txt",
                                         "missing: _project/agents/skills/refunds/more.md"]
    assert (package / "_project/agents/extra.txt").exists()  # --check writes nothing


# --- what a bundle refuses -----------------------------------------------------------------


def test_a_link_inside_a_copied_directory_is_refused(project: Path, tmp_path: Path) -> None:
    (project / "agents/skills/refunds/policy.md").symlink_to(project / ".env")
    done = invoke("build", str(project / "agents/desk.yaml"), "--bundle",
                  "-o", str(tmp_path / "out"))
    assert done.exit_code == 1, done.output
    assert "AS425" in done.output and "`agents/skills/refunds/policy.md` is a symbolic link" in \
        done.output
    assert not (tmp_path / "out" / "desk").exists()
    assert [p.name for p in (tmp_path / "out").iterdir()] == []  # the staging is removed


def test_a_hard_link_inside_a_copied_directory_is_refused(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text(SECRET)
    os.link(outside, project / "agents/skills/refunds/notes.md")
    done = invoke("build", str(project / "agents/desk.yaml"), "--bundle",
                  "-o", str(tmp_path / "out"))
    assert done.exit_code == 1, done.output
    assert "AS425" in done.output and "`agents/skills/refunds/notes.md` has 2 names" in \
        done.output


def test_a_secret_the_spec_names_is_refused(project: Path, tmp_path: Path) -> None:
    spec = project / "agents/desk.yaml"
    spec.write_text(spec.read_text().replace("memory: [./AGENTS.md]", "memory: [./.env]"))
    done = invoke("build", str(spec), "--bundle", "-o", str(tmp_path / "out"))
    assert done.exit_code == 1, done.output
    assert "AS425" in done.output and "`agents/.env` may hold secrets" in done.output
    assert SECRET not in done.output


def test_a_path_outside_the_project_is_refused(project: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    (shared / "refunds").mkdir(parents=True)
    (shared / "refunds/SKILL.md").write_text(textwrap.dedent(SKILL))
    spec = project / "agents/desk.yaml"
    spec.write_text(spec.read_text().replace("skills: [./skills]", "skills: [../../shared]")
                    + "outside_project: [../../shared]\n")
    assert invoke("build", str(spec), "-o", str(tmp_path / "plain")).exit_code == 0
    done = invoke("build", str(spec), "--bundle", "-o", str(tmp_path / "out"))
    assert done.exit_code == 1, done.output
    assert "AS425" in done.output and "`../../shared` is outside the project" in done.output


def test_a_link_that_leads_outside_the_project_is_refused(project: Path, tmp_path: Path) -> None:
    shutil.move(project / "agents/skills", tmp_path / "shared")
    (project / "agents/skills").symlink_to(tmp_path / "shared")
    spec = project / "agents/desk.yaml"
    spec.write_text(spec.read_text() + "outside_project: [../../shared]\n")
    done = invoke("build", str(spec), "--bundle", "-o", str(tmp_path / "out"))
    assert done.exit_code == 1, done.output
    assert "AS425" in done.output and "leads outside the project through a link" in done.output


def test_a_spec_file_name_cannot_add_a_requirement(project: Path, tmp_path: Path) -> None:
    spec = project / "agents/desk\n--extra-index-url http:evil.yaml"
    (project / "agents/desk.yaml").rename(spec)
    done = invoke("build", str(spec), "--bundle", "-o", str(tmp_path / "out"))
    assert done.exit_code == 0, done.output
    requirements = (tmp_path / "out/desk/requirements.txt").read_text().splitlines()
    assert [line for line in requirements if line.startswith("--")] == ["--find-links ./_wheels"]


# --- `adk deploy` staging, a fresh virtual environment, `adk api_server` -----------------

GCLOUD = """\
#!/bin/sh
# stands in for gcloud: answers the project, records the source folder instead of deploying
if [ "$1 $2 $3" = "config get-value project" ]; then echo fake-project; exit 0; fi
echo "$@" > "$GCLOUD_RECORD/args"
while [ $# -gt 0 ]; do
  if [ "$1" = "--source" ]; then cp -R "$2" "$GCLOUD_RECORD/source"; fi
  shift
done
"""


def _post(url: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(url, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def _wait_for(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    for _ in range(600):
        if server.poll() is not None:
            raise AssertionError(f"adk api_server exited: {log.read_text()}")
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"adk api_server did not answer: {log.read_text()}")


@pytest.mark.slow
def test_adk_deploy_staging_installs_in_a_fresh_venv_and_serves(
        project: Path, tmp_path: Path) -> None:
    package = bundle(project, tmp_path / "out")
    shutil.rmtree(project)  # the deployment has only what the bundle holds
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "gcloud").write_text(GCLOUD)
    (fake / "gcloud").chmod(0o755)
    record = tmp_path / "record"
    record.mkdir()
    adk = Path(sys.executable).parent / "adk"
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}",
           "GCLOUD_RECORD": str(record)}
    staged = subprocess.run(
        [str(adk), "deploy", "cloud_run", "--project", "fake-project", "--region",
         "us-central1", "--temp_folder", str(tmp_path / "staging"), str(package)],
        env=env, capture_output=True, text=True, cwd=tmp_path)
    assert staged.returncode == 0, staged.stdout + staged.stderr
    assert "--source" in (record / "args").read_text()
    source = record / "source"
    assert not (tmp_path / "staging").exists()  # ADK removed its staging: the record is ours
    dockerfile = (source / "Dockerfile").read_text()
    assert '"pip", "install", "-r", "/app/agents/desk/requirements.txt"' in dockerfile
    assert (source / "agents/desk/_project/agents/AGENTS.md").is_file()

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # as the image does: the working directory is the build context, the path absolute
    installed = subprocess.run(
        [str(venv / "bin/python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "-r", str(source / "agents/desk/requirements.txt")],
        cwd=source, capture_output=True, text=True)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    shown = subprocess.run([str(venv / "bin/python"), "-m", "pip", "show", "-f", "agentspec-adk"],
                           capture_output=True, text=True, check=True).stdout
    assert f"Version: {version()}" in shown and "Editable project location" not in shown

    port = free_port()
    log = tmp_path / "server.log"
    with log.open("wb") as output:
        server = subprocess.Popen(
            [str(venv / "bin/adk"), "api_server", "--host", "127.0.0.1", f"--port={port}",
             "--session_service_uri=memory://", "--artifact_service_uri=memory://",
             str(source / "agents")],
            cwd=tmp_path, stdout=output, stderr=subprocess.STDOUT,
            env={k: v for k, v in os.environ.items()
                 if k not in ("PYTHONPATH", "GOOGLE_API_KEY", "GEMINI_API_KEY")})
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_for(f"{base}/list-apps", server, log)
        session = _post(f"{base}/apps/desk/users/u/sessions", {})["id"]
        events = _post(f"{base}/run", {
            "app_name": "desk", "user_id": "u", "session_id": session,
            "new_message": {"role": "user", "parts": [{"text": "Where is A-17?"}]}})
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert [e for e in events if e.get("errorCode")] == []
    texts = [p["text"] for e in events for p in (e.get("content") or {}).get("parts", [])
             if p.get("text")]
    assert texts == [ANSWER], log.read_text()


@pytest.mark.parametrize("named", [".git/config", ".aws/credentials", ".ssh/config"])
def test_a_file_inside_a_secret_directory_the_spec_names_is_refused(
        project: Path, tmp_path: Path, named: str) -> None:
    (project / named).parent.mkdir(parents=True, exist_ok=True)
    if not (project / named).exists():
        (project / named).write_text(f"url = https://user:{SECRET}@example.com/x\n")
    spec = project / "agents/desk.yaml"
    spec.write_text(spec.read_text().replace("memory: [./AGENTS.md]", f"memory: [../{named}]"))
    done = invoke("build", str(spec), "--bundle", "-o", str(tmp_path / "out"))
    assert done.exit_code == 1, done.output
    assert "AS425" in done.output and "may hold secrets" in done.output
    assert not (tmp_path / "out" / "desk").exists()


JOBS_SPEC = """\
    agentspec: 1
    name: crunch
    root: lead
    agents:
      lead:
        model: gemini-2.5-flash
        instruction: Delegate.
        tools: [{agent: cruncher}]
      cruncher:
        description: Answers at once.
        model: gemini-2.5-flash
        instruction_file: prompts/cruncher.md
        execution_mode: offline
    jobs:
      store: "${env.JOBS_URL}"
    environments:
      prod:
        jobs: {store: "${env.JOBS_URL}", max_attempts: 2}
    """


@pytest.mark.slow  # 6.3 s of CPU (a worker and jobs subprocesses)
def test_worker_and_jobs_run_from_the_bundle_with_the_project_gone(tmp_path: Path) -> None:
    # the bundle held no spec: `agentspec worker` could not start from the deployed folder
    from agentspec.runtime.jobs.stores import open_store

    project = tmp_path / "project"
    (project / "agents/prompts").mkdir(parents=True)
    (project / "agents/crunch.yaml").write_text(textwrap.dedent(JOBS_SPEC))
    (project / "agents/prompts/cruncher.md").write_text("Answer at once.\n")
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    os.environ["JOBS_URL"] = url  # build resolves ${env.X}: CliRunner takes os.environ
    try:
        done = invoke("build", str(project / "agents/crunch.yaml"), "--bundle",
                      "-o", str(tmp_path / "out"), "--env", "prod")
    finally:
        del os.environ["JOBS_URL"]
    assert done.exit_code == 0, done.output
    alone = tmp_path / "deployed"
    shutil.copytree(tmp_path / "out/crunch", alone)
    shutil.rmtree(project)
    store = open_store(url)
    try:
        job, _ = store.enqueue(spec_job_request(agent="cruncher", input="go", app_name="crunch",
                                          user_id="u", session_id="s1", tool="cruncher"))
    finally:
        store.close()
    replies = {"replies": {"cruncher": [{"text": "crunched"}]}}
    (tmp_path / "script.json").write_text(json.dumps(replies))
    env = {**{k: v for k, v in os.environ.items()
              if k not in ("PYTHONPATH", "AGENTSPEC_JOBS_STORE", "GOOGLE_API_KEY",
                           "GEMINI_API_KEY")}, "JOBS_URL": url}
    spec = "_project/crunch.yaml"  # no git work tree: the project is the spec's directory
    assert f"background jobs: cd {tmp_path / 'out/crunch'} && agentspec worker {spec}" \
        in done.output
    agentspec = [sys.executable, "-m", "agentspec"]
    worker = subprocess.run([*agentspec, "worker", spec, "--env", "prod", "--until-idle",
                             "--script", str(tmp_path / "script.json"), "--quiet"],
                            cwd=alone, env=env, capture_output=True, text=True, timeout=300)
    assert worker.returncode == 0, worker.stdout + worker.stderr
    shown = subprocess.run([*agentspec, "jobs", "--spec", spec, "--env", "prod", "--json",
                            "show", job.id], cwd=alone, env=env, capture_output=True,
                           text=True, timeout=300)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["status"] == "DONE"
    assert "crunched" in shown.stdout


@pytest.mark.parametrize("git", [True, False])
def test_what_gitignore_excludes_is_left_out_and_listed(
        project: Path, tmp_path: Path, git: bool) -> None:
    # a bundle copied files that .gitignore excludes (build output, local data, logs)
    shutil.rmtree(project / ".git")
    if git:
        subprocess.run(["git", "init", "-q", str(project)], check=True)
    # the project is the git work tree, or else the spec's directory
    root, inside = (project, "agents/") if git else (project / "agents", "")
    (root / ".gitignore").write_text(f"# local\n*.log\n/{inside}skills/refunds/scratch/\n"
                                     "cache/\n")
    refunds = project / "agents/skills/refunds"
    (refunds / "run.log").write_text("log\n")
    (refunds / "scratch").mkdir()
    (refunds / "scratch/tmp.md").write_text("tmp\n")
    (refunds / "cache").mkdir()
    (refunds / "cache/x.md").write_text("x\n")
    (refunds / "kept.md").write_text("kept\n")
    spec = project / "agents/desk.yaml"
    done = invoke("build", str(spec), "--bundle", "-o", str(tmp_path / "out"))
    assert done.exit_code == 0, done.output
    shipped = tmp_path / f"out/desk/_project/{inside}skills/refunds"
    assert sorted(p.name for p in shipped.iterdir()) == ["SKILL.md", "kept.md"]
    why = "ignored by git (.gitignore)" if git else "matched by .gitignore"
    for path in ("run.log", "scratch", "cache"):
        assert f"left out `{inside}skills/refunds/{path}`: {why}" in done.output


POSTGRES = os.environ.get("AGENTSPEC_TEST_POSTGRES_URL")


def _postgres_schema() -> str:
    """A schema of its own on the test server (as tests/test_job_store.py makes one)."""
    import uuid

    import psycopg

    assert POSTGRES is not None
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in POSTGRES else "?"
    return f"{POSTGRES}{separator}options=-csearch_path%3D{schema}"


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=120) as response:
        return json.loads(response.read())


@pytest.mark.slow
@pytest.mark.skipif(POSTGRES is None, reason="AGENTSPEC_TEST_POSTGRES_URL is not set "
                                             "(.ci/postgres starts a server and prints it)")
def test_a_deployed_bundle_serves_and_its_worker_resumes_on_postgres(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bundle installed in a fresh venv, with the project gone: `adk api_server` serves
    it and `agentspec worker` runs from the same folder, both on one PostgreSQL job store and
    session store; the job the web turn queued is done by the worker and the conversation
    resumed."""
    from tests.test_jobs_resume import FRONT_END_MODELS
    from tests.test_jobs_resume import SPEC as OFFICE

    jobs, sessions = _postgres_schema(), _postgres_schema()
    project = tmp_path / "project"
    project.mkdir()
    callback = "    callbacks: {before_model: [office_models:scripted]}\n"
    (project / "spec.yaml").write_text(textwrap.dedent(OFFICE).replace(
        "    tools: [{python: office_tools:notify}]\n", callback).replace(
        "    execution_mode: offline\n", "    execution_mode: offline\n" + callback))
    (project / "office_models.py").write_text(FRONT_END_MODELS)
    env = {"JOBS_URL": jobs, "SESSIONS_URL": sessions}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    done = invoke("build", str(project / "spec.yaml"), "--bundle", "-o", str(tmp_path / "out"))
    assert done.exit_code == 0, done.output
    deployed = tmp_path / "deployed"
    shutil.copytree(tmp_path / "out", deployed)
    shutil.rmtree(project)
    shutil.rmtree(tmp_path / "out")
    folder = deployed / "office"
    assert f"agentspec-adk[postgres]=={version()}" in (folder / "requirements.txt").read_text()

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    installed = subprocess.run(
        [str(venv / "bin/python"), "-m", "pip", "install", "--quiet",
         "--disable-pip-version-check", "-r", "requirements.txt"],
        cwd=folder, capture_output=True, text=True)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    clean = {k: v for k, v in os.environ.items()
             if k not in ("PYTHONPATH", "GOOGLE_API_KEY", "GEMINI_API_KEY",
                          "AGENTSPEC_JOBS_STORE", "AGENTSPEC_SESSIONS")}
    clean["ADK_DISABLE_LOAD_DOTENV"] = "1"
    port = free_port()
    log = tmp_path / "server.log"
    with log.open("wb") as output:
        server = subprocess.Popen(
            [str(venv / "bin/adk"), "api_server", "--host", "127.0.0.1", f"--port={port}",
             "--session_service_uri=" + sessions.replace("postgresql://",
                                                         "postgresql+psycopg://", 1),
             "--artifact_service_uri=memory://", str(deployed)],
            cwd=tmp_path, stdout=output, stderr=subprocess.STDOUT, env={**clean, **env})
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_for(f"{base}/list-apps", server, log)
        session = _post(f"{base}/apps/office/users/user/sessions", {})["id"]
        events = _post(f"{base}/run", {
            "app_name": "office", "user_id": "user", "session_id": session,
            "new_message": {"role": "user", "parts": [{"text": "Write the Q3 report"}]}})
        assert [e for e in events if e.get("errorCode")] == [], log.read_text()
        (tmp_path / "none.yaml").write_text("replies: {}\n")  # the callbacks answer
        worker = subprocess.run(
            [str(venv / "bin/agentspec"), "worker", "_project/spec.yaml", "--until-idle",
             "--script", str(tmp_path / "none.yaml")],
            cwd=folder, env={**clean, **env}, capture_output=True, text=True, timeout=300)
        assert worker.returncode == 0, worker.stdout + worker.stderr
        assert "1 done, 0 failed, 1 resumed" in worker.stdout
        listed = subprocess.run(
            [str(venv / "bin/agentspec"), "jobs", "--spec", "_project/spec.yaml", "--json",
             "list"], cwd=folder, env={**clean, **env}, capture_output=True, text=True,
            timeout=300)
        assert listed.returncode == 0, listed.stderr
        assert [j["status"] for j in json.loads(listed.stdout)] == ["DONE"]
        got = _get(f"{base}/apps/office/users/user/sessions/{session}")
    finally:
        server.terminate()
        server.wait(timeout=30)
    said = [(e["author"], p["text"].splitlines()[0]) for e in got["events"]
            for p in (e.get("content") or {}).get("parts", []) if p.get("text")]
    assert said[0] == ("user", "Write the Q3 report") and said[1] == ("lead", "Queued.")
    assert said[-1] == ("lead", "Your report is in."), said


def test_a_secret_split_between_read_chunks_is_still_found(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentspec.bundle import copying

    monkeypatch.setattr(copying, "_CHUNK", 7)  # every shape spans several chunks
    (project / "agents/skills/refunds/notes.txt").write_text(
        "x" * 5 + SECRET_SHAPES["notes.txt"])
    done = invoke("build", str(project / "agents/desk.yaml"), "--bundle", "-o",
                  str(tmp_path / "out"))
    assert done.exit_code == 0, done.output
    assert "left out `agents/skills/refunds/notes.txt`: it looks like it holds a private " \
        "key block" in done.output
    assert not (tmp_path / "out/desk/_project/agents/skills/refunds/notes.txt").exists()
