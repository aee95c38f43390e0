#!/usr/bin/env python
"""Benchmark `agentspec validate` against the import of Google ADK's `LlmAgent`.

Run from anywhere with the project's interpreter:

    .venv/bin/python bench/validate.py [--repeat N] [--agents N] [--profile]

It prints figures and asserts nothing about speed. Every subprocess runs with this script's
own interpreter (`sys.executable`), so all rows pay the same start-up cost. See bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"
FULL_EXAMPLE = "research_desk.yaml"
AIM = 0.20  # "validating the full example takes under a fifth of that import"

if str(ROOT) not in sys.path:  # normally agentspec is installed (editable) in the venv
    sys.path.insert(0, str(ROOT))


# --------------------------------------------------------------------------- measurements


@dataclass
class Timing:
    label: str
    seconds: list[float] = field(default_factory=list)
    peak_rss: int | None = None  # KiB, subprocesses only
    note: str = ""

    @property
    def min(self) -> float:
        return min(self.seconds)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


# Peak RSS needs care: on Linux, exec() keeps the high-water RSS of the process that spawned
# the child, and subprocess spawns from this (large) benchmark process, so `os.wait4` or
# RUSAGE_CHILDREN figures would never go below this process's own RSS. A tiny launcher
# (`python -S`, about 8 MiB, below any interpreter we measure) spawns the command instead and
# reports that child's own rusage.
RSS_LAUNCHER = """
import os, sys
null = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ, file_actions=null)
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


# Installed packages are byte-compiled (pip writes .pyc files), so an import reads them; with
# PYTHONDONTWRITEBYTECODE set (some shells and CI images set it) an editable or source-tree
# agentspec would be compiled from source on every run, about 150 ms a user never pays. The
# children run without it, after one untimed warm-up run that writes the .pyc files.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def peak_rss_kib(argv: list[str]) -> int | None:
    """Peak RSS (KiB) of one run of `argv`, or None where the launcher cannot work."""
    if not (hasattr(os, "posix_spawn") and hasattr(os, "wait4")):
        return None  # pragma: no cover - Windows
    done = subprocess.run([sys.executable, "-S", "-c", RSS_LAUNCHER, *argv], cwd=ROOT,
                          capture_output=True, text=True, check=False, env=CHILD_ENV)
    try:
        maxrss = int(done.stdout.split()[0])
    except (IndexError, ValueError):
        return None
    return maxrss // 1024 if sys.platform == "darwin" else maxrss  # macOS reports bytes


# The children keep their built validators and remembered runs in a cache directory of this
# run's own (filled by the warm-up runs), not the user's; COLD_ENV turns the caches off, as on
# a first run; `edited()` is an environment no run was remembered for (a remembered run is
# keyed by the whole environment), as after an edit: the validators cached, the run not.
CHILD_ENV["AGENTSPEC_CACHE_DIR"] = tempfile.mkdtemp(prefix="agentspec-bench-cache-")
COLD_ENV = {**CHILD_ENV, "AGENTSPEC_CACHE_DIR": ""}
_EDITS = iter(range(1 << 62))


def edited() -> dict[str, str]:
    return {**CHILD_ENV, "AGENTSPEC_BENCH_EDIT": str(next(_EDITS))}


Env = dict[str, str] | Callable[[], dict[str, str]]


def run_once(argv: list[str], env: Env | None = None) -> tuple[float, int, str]:
    """Wall time and exit status of one subprocess, and the last line of its stderr."""
    chosen = env() if callable(env) else env or CHILD_ENV
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        code = subprocess.call(argv, cwd=ROOT, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=err, env=chosen)
        elapsed = time.perf_counter() - start
        err.seek(0)
        lines = err.read().decode("utf-8", "replace").strip().splitlines()
    return elapsed, code, lines[-1] if lines else ""


def time_subprocess(label: str, argv: list[str], repeat: int) -> Timing:
    """One untimed warm-up run (it writes the .pyc files), `repeat` timed runs, then one
    untimed run through the launcher for peak RSS."""
    timing = Timing(label)
    run_once(argv)
    for _ in range(repeat):
        elapsed, code, last = run_once(argv)
        timing.seconds.append(elapsed)
        if code not in (0, 1):  # 1 = the spec has errors, still a complete validation
            timing.note = f"exit {code}: {last[:60]}"
        elif argv[1:3] == ["-m", "agentspec"]:
            timing.note = last.split(":", 1)[0] if last else f"exit {code}"
    timing.peak_rss = peak_rss_kib(argv)
    return timing


def paired_ratios(argv: list[str], reference: list[str], repeat: int,
                  env: Env | None = None) -> list[float]:
    """`argv`'s time (run with `env`) over `reference`'s, each pair run back to back
    (`reference` first, then the other order), so that the load of a shared machine falls on
    both sides alike."""
    run_once(argv, env)
    run_once(reference)
    ratios = []
    for index in range(repeat):
        if index % 2 == 0:
            base = run_once(reference)[0]
            own = run_once(argv, env)[0]
        else:
            own = run_once(argv, env)[0]
            base = run_once(reference)[0]
        ratios.append(own / base)
    return ratios


def time_in_process(label: str, fn: Callable[[], Any], repeat: int) -> tuple[Timing, float]:
    """Min/median over `repeat` calls after one warm-up call; also returns the warm-up time."""
    start = time.perf_counter()
    fn()
    first = time.perf_counter() - start
    timing = Timing(label)
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        timing.seconds.append(time.perf_counter() - start)
    return timing, first


# --------------------------------------------------------------------------- generated spec

# ~20 named tools: ADK builtins and MCP servers with a `filter`, so no Python module is needed
# and every tool name an agent can get is known (interrupt_on is checked against them).
BUILTINS = ["google_search", "url_context", "load_memory", "preload_memory",
            "load_artifacts", "get_user_choice"]
MCP_SERVERS: dict[str, dict[str, Any]] = {
    "github": {"stdio": ("npx", ["-y", "@modelcontextprotocol/server-github"], "GITHUB_TOKEN"),
               "filter": ["list_issues", "get_issue", "create_issue"]},
    "gitlab": {"stdio": ("npx", ["-y", "@modelcontextprotocol/server-gitlab"], "GITLAB_TOKEN"),
               "filter": ["list_merge_requests", "get_merge_request"], "prefix": "gl"},
    "fetch": {"stdio": ("uvx", ["mcp-server-fetch"], None), "filter": ["fetch"]},
    "filesystem": {"stdio": ("npx", ["-y", "@modelcontextprotocol/server-filesystem", "."],
                             None), "filter": ["read_text_file", "list_directory"]},
    "sqlite": {"stdio": ("uvx", ["mcp-server-sqlite", "--db-path", "data.db"], None),
               "filter": ["read_query", "list_tables", "describe_table"]},
    "postgres": {"stdio": ("npx", ["-y", "@modelcontextprotocol/server-postgres"],
                           "DATABASE_URL"), "filter": ["query"], "prefix": "pg"},
    "slack": {"url": "https://mcp.example.invalid/slack", "filter": ["post_message",
                                                                     "list_channels"]},
    "jira": {"url": "https://mcp.example.invalid/jira", "filter": ["search_issues",
                                                                   "create_ticket"]},
    "confluence": {"url": "https://mcp.example.invalid/confluence",
                   "filter": ["search_pages", "get_page"], "prefix": "wiki"},
    "calendar": {"url": "https://mcp.example.invalid/calendar",
                 "filter": ["list_events", "create_event"], "transport": "sse"},
    "crm": {"url": "https://mcp.example.invalid/crm", "filter": ["find_account",
                                                                 "update_account"]},
    "billing": {"url": "https://mcp.example.invalid/billing",
                "filter": ["get_invoice", "refund_invoice"]},
    "search_index": {"url": "https://mcp.example.invalid/search", "filter": ["search_docs"]},
}
# Tools that change the world: agents holding them ask a person first.
RISKY = {"create_issue", "post_message", "create_ticket", "create_event", "update_account",
         "refund_invoice", "gl_get_merge_request", "pg_query"}
TOPICS = ["market sizing", "competitor pricing", "regulatory changes", "customer churn",
          "release notes", "incident reviews", "hiring plans", "supplier risk",
          "security advisories", "quarterly forecasts", "support backlog", "product feedback"]
VERBS = {"Summarise": "Summarises", "Analyse": "Analyses", "Draft": "Drafts",
         "Review": "Reviews", "Classify": "Classifies", "Extract": "Extracts",
         "Compare": "Compares", "Verify": "Verifies", "Rank": "Ranks", "Outline": "Outlines"}


def tool_names_of(tool: str) -> list[str]:
    """The tool names an agent gets from the named tool (what `interrupt_on` may name)."""
    if tool in BUILTINS or tool == "exit_loop":
        return [tool]
    server = MCP_SERVERS[tool]
    prefix = server.get("prefix")
    return [f"{prefix}_{n}" if prefix else n for n in server["filter"]]


class SpecWriter:
    """Builds a spec with exactly `count` agents as plain data, then emits YAML."""

    def __init__(self, count: int, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.count = count
        self.agents: dict[str, dict[str, Any]] = {}
        self.made = 0

    # -- agents

    def _instruction(self, verb: str, topic: str, reads: list[str]) -> str:
        rng = self.rng
        lines = [f"{verb} the {topic} for ${{vars.company}}.",
                 "Work from the material below; cite the source of every figure you use."]
        for key in reads:
            lines.append(f"Input from an earlier step: {{{key}}}")
        lines.append("The customer's request, if there is one: {request?}")
        if rng.random() < 0.3:
            lines.append("Answer in JSON like {{\"status\": \"ok\"}} when nothing needs doing.")
        lines.append(f"Keep the answer under {rng.choice([150, 300, 500])} words and say "
                     "plainly when the material is not enough.")
        return "\n".join(lines) + "\n"

    def llm(self, name: str, reads: list[str], *, tools: list[str] | None = None,
            extends: str | None = None) -> dict[str, Any]:
        rng = self.rng
        self.made += 1
        verb, topic = rng.choice(list(VERBS)), rng.choice(TOPICS)
        agent: dict[str, Any] = {
            "description": f"{VERBS[verb]} the {topic}.",
            "instruction": self._instruction(verb, topic, reads),
            "output_key": name,
        }
        if extends is not None:  # inherits tools, interrupt_on, model, ... from its base
            return {"extends": extends, **agent}
        roll = rng.random()
        if roll < 0.15:
            agent["model"] = "smart"
        elif roll < 0.22:
            agent["model"] = "claude"
        elif roll < 0.27:
            agent["model"] = "gemini-2.5-flash-lite"  # a literal model id
        if tools is None:
            pool = BUILTINS + list(MCP_SERVERS)
            tools = rng.sample(pool, rng.randint(1, 3))
        agent["tools"] = tools
        names = [n for t in tools for n in tool_names_of(t)]
        risky = [n for n in names if n in RISKY]
        if risky:
            agent["interrupt_on"] = {
                n: (True if i % 2 else {"decisions": ["approve", "reject"],
                                        "hint": f"Allow {n}?"})
                for i, n in enumerate(risky)}
        elif rng.random() < 0.2 and any(t in MCP_SERVERS for t in tools):
            agent["interrupt_on"] = {rng.choice([n for t in tools if t in MCP_SERVERS
                                                 for n in tool_names_of(t)]): True}
        if rng.random() < 0.1:
            agent["generate"] = {"temperature": 0.1, "max_output_tokens": 2048}
        return agent

    def add(self, name: str, agent: dict[str, Any]) -> str:
        self.agents[name] = agent
        return name

    def workflow(self, prefix: str, kind: str, budget: int, reads: list[str]) -> str:
        """A `kind` workflow named `prefix` that uses exactly `budget` agents (>= 2)."""
        name = prefix
        self.made += 1
        self.agents[name] = {}  # parents come before their children in the file
        children: list[Any] = []
        outputs: list[str] = []
        base: str | None = None
        left = budget - 1
        index = 0
        while left > 0:
            child = f"{prefix}_{index}"
            if kind == "sequential" and left >= 6 and index % 3 == 1:
                size = min(left - 2, self.rng.randint(3, 5))
                nested = "parallel" if index % 2 else "loop"
                children.append(self.workflow(child, nested, size, outputs[-1:] or reads))
                outputs.append(f"{child}_0")
                left -= size
            else:
                # sequential steps read the previous step; parallel branches read the inputs
                step_reads = (outputs[-1:] or reads) if kind != "parallel" else reads
                tools = None
                if kind == "loop" and left == 1 and index % 2 == 0:
                    tools = ["exit_loop", self.rng.choice(BUILTINS)]
                if base is not None and tools is None and self.rng.random() < 0.25:
                    agent = self.llm(child, step_reads, extends=base)
                else:
                    agent = self.llm(child, step_reads, tools=tools)
                    base = base or child
                if left == 1 and index % 4 == 3:  # some children are written inline
                    children.append({"name": child, **agent})
                else:
                    children.append(self.add(child, agent))
                outputs.append(child)
                left -= 1
            index += 1
        workflow: dict[str, Any] = {"kind": kind,
                                    "description": f"The {prefix} {kind} workflow."}
        if kind == "loop":
            has_exit = any(isinstance(c, str) and "exit_loop" in self.agents[c].get("tools", ())
                           or isinstance(c, dict) and "exit_loop" in c.get("tools", ())
                           for c in children)
            if not has_exit:
                workflow["max_iterations"] = self.rng.randint(2, 5)
        workflow["sub_agents"] = children
        self.agents[name].update(workflow)
        return name

    def build(self) -> dict[str, Any]:
        if self.count < 1:
            raise ValueError("--agents must be at least 1")
        coordinator: dict[str, Any] = {
            "description": "Takes the request, plans the work and hands it to the teams.",
            "model": "smart",
            "instruction": "You coordinate the ${vars.company} operations desk.\n"
                           "Restate the request as a brief for the teams, then delegate.\n",
            "tools": ["google_search", "jira"],
            "interrupt_on": {"create_ticket": {"decisions": ["approve", "edit", "reject"],
                                               "hint": "Open this ticket?"}},
            "output_key": "brief",
            "sub_agents": [],
        }
        self.agents["coordinator"] = coordinator
        self.made = 1
        kinds = ["sequential", "parallel", "loop", "sequential"]
        team = 0
        while self.count - self.made >= 2:
            size = min(self.count - self.made, self.rng.randint(5, 14))
            if self.count - self.made - size == 1:
                size += 1  # do not leave a single agent over
            kind = kinds[team % len(kinds)]
            coordinator["sub_agents"].append(self.workflow(f"team{team}", kind, size, ["brief"]))
            team += 1
        if self.count - self.made == 1:
            coordinator["sub_agents"].append(self.add("helper", self.llm("helper", ["brief"])))
        if not coordinator["sub_agents"]:
            del coordinator["sub_agents"]
        assert self.made == self.count, (self.made, self.count)
        return self.document()

    def document(self) -> dict[str, Any]:
        tools: dict[str, Any] = {name: {"builtin": name} for name in BUILTINS}
        tools["exit_loop"] = {"builtin": "exit_loop"}
        for name, server in MCP_SERVERS.items():
            if "stdio" in server:
                command, args, secret = server["stdio"]
                mcp: dict[str, Any] = {"command": command, "args": args, "timeout": 30}
                if secret:
                    mcp["env"] = {secret: f"${{env.{secret}:-unset}}"}
            else:
                mcp = {"url": server["url"], "transport": server.get("transport", "http"),
                       "headers": {"Authorization": "Bearer ${env.MCP_TOKEN:-none}"}}
            tool: dict[str, Any] = {"mcp": mcp, "filter": server["filter"]}
            if "prefix" in server:
                tool["prefix"] = server["prefix"]
            tools[name] = tool
        return {
            "agentspec": 1,
            "name": "generated_ops",
            "description": f"A generated spec with {self.count} agents, for benchmarks.",
            "root": "coordinator",
            "vars": {"company": "Acme"},
            "global_instruction": "You work for ${vars.company}. Never invent figures.",
            "models": {
                "fast": "gemini-2.5-flash",
                "smart": {"id": "gemini-2.5-pro",
                          "generate": {"temperature": 0.2, "max_output_tokens": 8192},
                          "thinking": {"budget": 2048}, "context_window": 1048576},
                "claude": {"id": "anthropic/claude-sonnet-4-5", "provider": "litellm"},
            },
            "defaults": {"model": "fast", "generate": {"temperature": 0.4}},
            "tools": tools,
            "agents": self.agents,
            "summarization": {"trigger": {"tokens": 120000}, "keep": {"events": 8},
                              "model": "fast"},
            "environments": {"prod": {"models": {"fast": "gemini-2.5-pro"}}},
        }


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    text = str(value)
    if text and (text[0].isalnum() or text[0] in "_./") and all(
            c.isalnum() or c in "_-./@ " for c in text) and text.strip() == text and \
            text.lower() not in ("true", "false", "null", "yes", "no", "on", "off", "~"):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return _scalar(value)


def _small(value: Any) -> bool:
    if isinstance(value, (dict, list)):
        return len(_flow(value)) <= 70 and all(_small(v) for v in (
            value.values() if isinstance(value, dict) else value))
    return not (isinstance(value, str) and "\n" in value)


def to_yaml(value: Any, indent: int = 0) -> Iterable[str]:
    """Block-style YAML for the generator's plain data (flow style for short collections)."""
    pad = " " * indent
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str) and "\n" in item:
                yield f"{pad}{key}: |"
                yield from (f"{pad}  {line}" for line in item.rstrip("\n").split("\n"))
            elif isinstance(item, (dict, list)) and item and not _small(item):
                yield f"{pad}{key}:"
                yield from to_yaml(item, indent + 2)
            else:
                yield f"{pad}{key}: {_flow(item)}"
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict) and not _small(item):
                lines = list(to_yaml(item, indent + 2))
                yield f"{pad}- {lines[0].lstrip()}"
                yield from lines[1:]
            else:
                yield f"{pad}- {_flow(item)}"


def write_generated_spec(directory: Path, count: int) -> Path:
    data = SpecWriter(count).build()
    path = directory / f"generated_{count}.yaml"
    header = f"# Generated by bench/validate.py: {count} agents.\n"
    path.write_text(header + "\n".join(to_yaml(data)) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------- reporting


def fmt_seconds(value: float) -> str:
    return f"{value * 1000:8.1f} ms"


def print_table(headers: list[str], rows: list[list[str]], right: set[int]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    print(line(headers))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print(line(row))


def diag_summary(result: Any) -> str:
    errors = sum(d.is_error for d in result.diagnostics)
    warnings = len(result.diagnostics) - errors
    return f"{errors} err, {warnings} warn"


def profile(label: str, fn: Callable[[], Any], top: int = 25) -> None:
    import cProfile
    import io
    import pstats

    fn()  # warm-up, like the timed runs
    profiler = cProfile.Profile()
    profiler.enable()
    fn()
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs().sort_stats("cumulative")
    stats.print_stats(top)
    print(f"\n=== cProfile: check({label}), one warm call, by cumulative time ===")
    print(out.getvalue().strip())


# --------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement (5)")
    parser.add_argument("--agents", type=int, default=500,
                        help="agents in the generated spec (500)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the generated spec and print its path")
    parser.add_argument("--profile", action="store_true",
                        help="also print a cProfile of check() for the generated spec and the "
                        "full example")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.agents < 1:
        parser.error("--agents must be at least 1")

    tmp = Path(tempfile.mkdtemp(prefix="agentspec-bench-"))
    generated = write_generated_spec(tmp, args.agents)
    status = 1
    try:
        status = run(args, generated)
    finally:
        if args.keep or status != 0:
            print(f"\ngenerated spec kept at {generated}")
        else:
            generated.unlink()
            tmp.rmdir()
    return status


def run(args: argparse.Namespace, generated: Path) -> int:
    from agentspec.diagnostics import render
    from agentspec.validate.check import check

    python = sys.executable
    specs = sorted(p for p in SPECS.glob("*.yaml") if p.is_file()) if SPECS.is_dir() else []
    gen_result = check(generated)
    if not gen_result.ok or gen_result.spec is None:
        print(f"ERROR: the generated {args.agents}-agent spec does not validate; this is a bug "
              "in bench/validate.py's generator (or a rule change in agentspec).\n",
              file=sys.stderr)
        shown = [d for d in gen_result.diagnostics if d.is_error][:20]
        print(render(shown, gen_result.sources, "concise"), file=sys.stderr, end="")
        return 1
    agent_count = len(gen_result.spec.agents)
    if agent_count != args.agents:
        print(f"ERROR: the generated spec has {agent_count} agents, not {args.agents}",
              file=sys.stderr)
        return 1

    print(f"agentspec validate benchmark  (python {sys.version.split()[0]}, {sys.platform}, "
          f"{os.cpu_count()} CPUs, repeat={args.repeat})")
    print(f"interpreter: {python}")
    if specs:
        print(f"specs/: {', '.join(p.name for p in specs)}")
    else:
        print("specs/: no *.yaml specs yet; measuring only the generated spec")
    kinds: dict[str, int] = {}
    for agent in gen_result.spec.agents.values():
        kinds[agent.kind] = kinds.get(agent.kind, 0) + 1
    text = generated.read_text(encoding="utf-8")
    print(f"generated: {agent_count} agents ({', '.join(f'{n} {k}' for k, n in kinds.items())};"
          f" {text.count(' extends: ')} with extends, {text.count('- name: ')} inline, "
          f"{text.count(' interrupt_on:')} with interrupt_on), "
          f"{len(gen_result.spec.tools or {})} tools, {len(text.encode()) / 1024:.0f} KiB, "
          f"{text.count(chr(10))} lines: {diag_summary(gen_result)}")
    print("note: check() validates the base spec and then each environment overlay "
          "(the generated spec has one, `prod`)\n")

    reference = time_subprocess('python -c "from google.adk.agents import LlmAgent"',
                                [python, "-c", "from google.adk.agents import LlmAgent"],
                                args.repeat)
    startup = time_subprocess('python -c "pass"', [python, "-c", "pass"], args.repeat)
    imports = time_subprocess('python -c "import agentspec.validate.check"',
                              [python, "-c", "import agentspec.validate.check"], args.repeat)

    targets = [(p.relative_to(ROOT).as_posix(), p) for p in specs]
    targets.append((f"<generated {args.agents} agents>", generated))
    cli: list[tuple[str, Timing]] = []
    inproc: list[tuple[str, Timing | None, float, str]] = []
    for label, path in targets:
        cli.append((label, time_subprocess(f"CLI validate {label}",
                                           [python, "-m", "agentspec", "validate", str(path)],
                                           args.repeat)))
        holder: dict[str, Any] = {}

        def call(path: Path = path, holder: dict[str, Any] = holder) -> None:
            holder["result"] = check(path)

        try:
            timing, first = time_in_process(f"check() {label}", call, args.repeat)
        except Exception as error:  # a spec being written right now may trip a bug
            inproc.append((label, None, 0.0, f"check() raised {type(error).__name__}"))
            continue
        inproc.append((label, timing, first, diag_summary(holder["result"])))

    ref = reference.median

    def rss(t: Timing) -> str:
        return f"{t.peak_rss / 1024:.0f} MiB" if t.peak_rss is not None else "n/a"

    headers = ["measurement", "min", "median", "x import", "peak RSS", "result"]
    rows = []
    for t in (reference, startup, imports):
        rows.append([t.label, fmt_seconds(t.min), fmt_seconds(t.median),
                     f"{t.median / ref:.2f}", rss(t), t.note])
    for _, t in cli:
        rows.append([t.label, fmt_seconds(t.min), fmt_seconds(t.median),
                     f"{t.median / ref:.2f}", rss(t), t.note])
    print("Subprocesses (wall time; `x import` = median / median of the LlmAgent import; "
          "after the warm-up run, an unchanged spec's validate is replayed)")
    print_table(headers, rows, right={1, 2, 3, 4})

    print("\nIn process: agentspec.validate.check.check(path), after one warm-up call "
          "(`first` = that warm-up call)")
    rows = [[t.label, fmt_seconds(first), fmt_seconds(t.min), fmt_seconds(t.median), summary]
            if t is not None else [f"check() {label}", "-", "-", "-", summary]
            for label, t, first, summary in inproc]
    print_table(["measurement", "first", "min", "median", "diagnostics"], rows,
                right={1, 2, 3})

    print()
    full = next((t for label, t in cli if label == f"specs/{FULL_EXAMPLE}"), None)
    if full is None:
        print(f"verdict: specs/{FULL_EXAMPLE} not found; no verdict on the aim "
              f"(CLI validate < {AIM:.2f} x LlmAgent import)")
    else:
        validate = [python, "-m", "agentspec", "validate", str(SPECS / FULL_EXAMPLE)]
        adk = [python, "-c", "from google.adk.agents import LlmAgent"]
        whens: tuple[tuple[str, Env], ...] = (
            ("caches off (a first run)", COLD_ENV),
            ("after an edit (validators cached, the run not remembered)", edited),
            ("unchanged since the last run (the run replayed)", CHILD_ENV))
        for when, env in whens:
            ratios = paired_ratios(validate, adk, args.repeat, env)
            ratio = statistics.median(ratios)
            verdict = "MEETS" if ratio < AIM else "MISSES"
            print(f"side by side, {when}, {len(ratios)} interleaved pairs: CLI validate "
                  f"specs/{FULL_EXAMPLE} / LlmAgent import = "
                  + " ".join(f"{r:.2f}" for r in ratios))
            print(f"verdict, {when}: median ratio {ratio:.2f} (min {min(ratios):.2f}) -> "
                  f"{verdict} the aim (< {AIM:.2f}; budget {ref * AIM * 1000:.0f} ms, "
                  f"interpreter start-up alone {startup.median * 1000:.0f} ms)")
        print(f"(from the table, replayed: {full.median * 1000:.0f} ms / {ref * 1000:.0f} ms = "
              f"{full.median / ref:.2f})")
    gen_cli = cli[-1][1]
    print(f"peak RSS of CLI validate, generated {args.agents}-agent spec: {rss(gen_cli)} "
          f"(LlmAgent import: {rss(reference)}, bare interpreter: {rss(startup)})")

    if args.profile:
        profile(f"<generated {args.agents} agents>", lambda: check(generated))
        full_path = SPECS / FULL_EXAMPLE
        if full_path.is_file():
            profile(f"specs/{FULL_EXAMPLE}", lambda: check(full_path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
