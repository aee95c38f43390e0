#!/usr/bin/env python
"""Benchmark the back end: compile a spec, build its ADK objects, emit and import its source.

Run from anywhere with the project's interpreter:

    .venv/bin/python bench/build.py [--repeat N] [--agents N]

It prints figures and asserts nothing about speed. Every subprocess runs with this script's
own interpreter (`sys.executable`), so all rows pay the same start-up cost. See bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"
EXAMPLES = ROOT / "examples"

if str(ROOT) not in sys.path:  # normally agentspec is installed (editable) in the venv
    sys.path.insert(0, str(ROOT))


# bench/validate.py's timing, YAML and table helpers (this script's directory is on sys.path
# when it runs as a script; the insert covers other ways of loading it)
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from validate import (  # noqa: E402
    TOPICS,
    VERBS,
    Timing,
    fmt_seconds,
    peak_rss_kib,
    print_table,
    run_once,
    time_in_process,
    to_yaml,
)

REFERENCE = "from google.adk.agents import LlmAgent"


# --------------------------------------------------------------------------- generated spec

# Only what this release can build: no harness fields (`interrupt_on`, `memory`, ...), no
# router/planner kinds, no offline agents, no MCP servers (the `mcp` extra) and no LiteLLM
# models (the `litellm` extra), so nothing outside google-adk is imported.
BUILTINS = ["load_memory", "preload_memory", "load_artifacts", "get_user_choice",
            "url_context", "google_search"]


class BuildableSpecWriter:
    """Like bench/validate.py's SpecWriter, with exactly `count` agents, all buildable:
    a root coordinator over sequential, parallel and loop teams (some nested), `extends`,
    inline sub-agents, `{agent: x}` tools, `output_key` -> `{key}` hand-offs, `{{key}}`
    escapes, `vars`, a global instruction, models and defaults."""

    def __init__(self, count: int, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.count = count
        self.agents: dict[str, dict[str, Any]] = {}
        self.made = 0

    # -- agents

    def _instruction(self, verb: str, topic: str, reads: list[str]) -> str:
        lines = [f"{verb} the {topic} for ${{vars.company}}.",
                 "Work from the material below; cite the source of every figure you use."]
        lines += [f"Input from an earlier step: {{{key}}}" for key in reads]
        lines.append("The customer's request, if there is one: {request?}")
        if self.rng.random() < 0.3:
            lines.append("Answer in JSON like {{\"status\": \"ok\"}} when nothing needs doing.")
        if self.rng.random() < 0.15:  # an escape: the instruction is built with template()
            lines.append("Leave the marker {{ticket_id}} as it is; a later step fills it in.")
        lines.append(f"Keep the answer under {self.rng.choice([150, 300, 500])} words and say "
                     "plainly when the material is not enough.")
        return "\n".join(lines) + "\n"

    def llm(self, name: str, reads: list[str], *, tools: list[Any] | None = None,
            extends: str | None = None, output_key: bool = True) -> dict[str, Any]:
        rng = self.rng
        self.made += 1
        verb, topic = rng.choice(list(VERBS)), rng.choice(TOPICS)
        agent: dict[str, Any] = {"description": f"{VERBS[verb]} the {topic}.",
                                 "instruction": self._instruction(verb, topic, reads)}
        if output_key:
            agent["output_key"] = name
        if extends is not None:  # inherits tools, model, generate, ... from its base
            return {"extends": extends, **agent}
        roll = rng.random()
        if roll < 0.15:
            agent["model"] = "smart"
        elif roll < 0.22:
            agent["model"] = "gemini-2.5-flash-lite"  # a literal model id
        agent["tools"] = tools if tools is not None else rng.sample(BUILTINS, rng.randint(1, 2))
        if rng.random() < 0.1:
            agent["generate"] = {"temperature": 0.1, "max_output_tokens": 2048}
        return agent

    def specialist(self, name: str) -> None:
        """The top-level agent `name` that another agent calls as a tool (`{agent: name}`)."""
        self.agents[name] = self.llm(name, [], tools=[self.rng.choice(BUILTINS)],
                                     output_key=False)

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
                index += 1
                continue
            # sequential steps read the previous step; parallel branches read the inputs
            step_reads = (outputs[-1:] or reads) if kind != "parallel" else reads
            tools: list[Any] | None = None
            if kind == "loop" and left == 1 and index % 2 == 0:
                tools = ["exit_loop", self.rng.choice(BUILTINS)]
            elif left >= 3 and self.rng.random() < 0.12:  # a helper called as a tool
                tools = [self.rng.choice(BUILTINS)]
            if base is not None and tools is None and self.rng.random() < 0.25:
                agent = self.llm(child, step_reads, extends=base)
            else:
                agent = self.llm(child, step_reads, tools=tools)
            helper = None
            if tools is not None and "exit_loop" not in tools:
                helper = f"{child}_helper"
                agent["tools"].append({"agent": helper})
                left -= 1
            elif base is None and "extends" not in agent:
                base = child  # a base never calls a helper: that helper would get two parents
            if left == 1 and index % 4 == 3:  # some children are written inline
                children.append({"name": child, **agent})
            else:
                children.append(self.add(child, agent))
            if helper is not None:
                self.specialist(helper)  # after its caller in the file
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
            "tools": ["load_memory"],
            "output_key": "brief",
            "sub_agents": [],
        }
        self.agents["coordinator"] = coordinator
        self.made = 1
        if self.count >= 2:
            coordinator["tools"].append({"agent": "coordinator_helper"})
            self.specialist("coordinator_helper")
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
        return {
            "agentspec": 1,
            "name": "generated_build",
            "description": f"A generated spec with {self.count} buildable agents, for "
                           "benchmarks.",
            "root": "coordinator",
            "vars": {"company": "Acme"},
            "global_instruction": "You work for ${vars.company}. Never invent figures.",
            "models": {
                "fast": "gemini-2.5-flash",
                "smart": {"id": "gemini-2.5-pro",
                          "generate": {"temperature": 0.2, "max_output_tokens": 8192},
                          "thinking": {"budget": 2048}},
            },
            "defaults": {"model": "fast", "generate": {"temperature": 0.4}},
            "tools": {name: {"builtin": name} for name in [*BUILTINS, "exit_loop"]},
            "agents": self.agents,
        }


def write_generated_spec(directory: Path, count: int) -> Path:
    data = BuildableSpecWriter(count).build()
    path = directory / f"generated_build_{count}.yaml"
    header = f"# Generated by bench/build.py: {count} buildable agents.\n"
    path.write_text(header + "\n".join(to_yaml(data)) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------- measurements


@dataclass
class Built:
    """The figures of one buildable spec."""

    label: str
    agents: int
    compile: Timing
    build: Timing
    build_first: float
    emit: Timing
    lines: int
    kib: float
    package: str
    out_dir: Path


def count_agents(compiled: Any) -> int:
    """Agents in the tree that gets built (sub-agents and agents called as tools)."""
    found, todo = 0, [compiled.app.root]
    while todo:
        node = todo.pop()
        found += 1
        todo.extend(node.children)
        todo.extend(t.agent for t in node.tools if t.agent is not None)
    return found


def refusal(compiled: Any) -> str:
    errors = [d for d in compiled.diagnostics if d.is_error]
    if not errors:
        return "refused (no plan and no error diagnostic)"
    first = errors[0]
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"refused ({first.code} {first.message}){more}"


def measure(label: str, path: Path, out_dir: Path, repeat: int) -> Built | str:
    """In-process figures for one spec (also writes its package to `out_dir`), or why the spec
    was not measured."""
    from agentspec.compiler import build_objects, compile_spec, emit_package, write_package

    compiled = compile_spec(path)
    if not compiled.ok:
        return refusal(compiled)
    compile_timing, _ = time_in_process(f"compile {label}", lambda: compile_spec(path), repeat)
    problems: list[Any] = []

    def build() -> None:
        _, found = build_objects(compiled)
        problems.extend(found)

    build_timing, build_first = time_in_process(f"build_objects {label}", build, repeat)
    if problems:
        first = problems[0]
        return f"build_objects failed ({first.code} {first.message})"
    holder: dict[str, Any] = {}

    def emit() -> None:
        holder["files"] = emit_package(compiled, out_dir)

    emit_timing, _ = time_in_process(f"emit_package {label}", emit, repeat)
    files = holder["files"]
    assert compiled.plan is not None
    package = compiled.plan.app_name
    agent_py = files[PurePosixPath(package) / "agent.py"]
    refused = write_package(files, out_dir)
    if refused:
        return f"write_package refused ({refused[0].code} {refused[0].message})"
    return Built(label, count_agents(compiled), compile_timing, build_timing, build_first,
                 emit_timing, agent_py.count("\n"), len(agent_py.encode()) / 1024, package,
                 out_dir)


def time_import(label: str, argv: list[str], repeat: int) -> Timing:
    """`repeat` timed runs of a fresh interpreter, then one untimed run for peak RSS; any
    non-zero exit is a failure and shows in the note."""
    timing = Timing(label)
    for _ in range(repeat):
        elapsed, code, last = run_once(argv)
        timing.seconds.append(elapsed)
        if code != 0:
            timing.note = f"FAILED exit {code}: {last[:70]}"
    if not timing.note:
        timing.note = "ok"
    timing.peak_rss = peak_rss_kib(argv)
    return timing


# --------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement (5)")
    parser.add_argument("--agents", type=int, default=500,
                        help="agents in the generated spec (500)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the generated spec and packages and print where they are")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.agents < 1:
        parser.error("--agents must be at least 1")

    tmp = Path(tempfile.mkdtemp(prefix="agentspec-bench-build-"))
    status = 1
    try:
        status = run(args, tmp)
    finally:
        if args.keep or status != 0:
            print(f"\ngenerated spec and packages kept in {tmp}")
        else:
            shutil.rmtree(tmp)
    return status


def shipped_specs() -> list[Path]:
    found = sorted(p for p in SPECS.glob("*.yaml") if p.is_file()) if SPECS.is_dir() else []
    if EXAMPLES.is_dir():
        found += sorted(p for p in EXAMPLES.glob("*/*.yaml") if p.is_file())
    return found


def adk_modules() -> int:
    return sum(m == "google.adk" or m.startswith("google.adk.") for m in sys.modules)


def run(args: argparse.Namespace, tmp: Path) -> int:
    adk_at_start = adk_modules()
    start = time.perf_counter()
    from agentspec.compiler import compile_spec
    import_build = time.perf_counter() - start
    adk_after_import = adk_modules()
    from agentspec.diagnostics import render

    python = sys.executable
    generated = write_generated_spec(tmp, args.agents)
    gen = compile_spec(generated)
    errors = [d for d in gen.diagnostics if d.is_error]
    if errors or not gen.ok or gen.check.spec is None:
        print(f"ERROR: the generated {args.agents}-agent spec does not compile; this is a bug "
              "in bench/build.py's generator (or a rule change in agentspec).\n",
              file=sys.stderr)
        print(render(errors[:20], gen.check.sources, "concise"), file=sys.stderr, end="")
        return 1
    agent_count = len(gen.check.spec.agents)
    if agent_count != args.agents:
        print(f"ERROR: the generated spec has {agent_count} agents, not {args.agents}",
              file=sys.stderr)
        return 1
    warnings = len(gen.diagnostics)
    if warnings:  # not fatal, but say what they are
        print(render(gen.diagnostics[:10], gen.check.sources, "concise"), end="")

    print(f"agentspec build benchmark  (python {sys.version.split()[0]}, {sys.platform}, "
          f"{os.cpu_count()} CPUs, repeat={args.repeat})")
    print(f"interpreter: {python}")
    kinds: dict[str, int] = {}
    for agent in gen.check.spec.agents.values():
        kinds[agent.kind] = kinds.get(agent.kind, 0) + 1
    text = generated.read_text(encoding="utf-8")
    print(f"generated: {agent_count} agents ({', '.join(f'{n} {k}' for k, n in kinds.items())};"
          f" {text.count(' extends: ')} with extends, {text.count('- name: ')} inline, "
          f"{text.count('{agent: ')} called as tools), {len(gen.check.spec.tools or {})} "
          f"builtin tools, {len(text.encode()) / 1024:.0f} KiB, {text.count(chr(10))} lines: "
          f"0 err, {warnings} warn")

    print(f"in process: `import agentspec.compiler` took {import_build * 1000:.0f} ms and loaded "
          f"{adk_after_import - adk_at_start} google.adk modules (before: {adk_at_start})")

    targets = [(p.relative_to(ROOT).as_posix(), p) for p in shipped_specs()]
    targets.append((f"<generated {args.agents} agents>", generated))
    adk_before_build = adk_modules()
    built: list[Built] = []
    skipped: list[tuple[str, str]] = []
    for index, (label, path) in enumerate(targets):
        out_dir = tmp / f"out{index}"
        out_dir.mkdir()
        try:
            result = measure(label, path, out_dir, args.repeat)
        except Exception as error:  # a spec being written right now may trip a bug
            result = f"raised {type(error).__name__}: {error}"
        if isinstance(result, str):
            skipped.append((label, result))
        else:
            built.append(result)

    if skipped:
        print("\nNot built:")
        width = max(len(label) for label, _ in skipped)
        for label, why in skipped:
            print(f"  {label.ljust(width)}  {why}")

    print("\nIn process, after one warm-up call (medians; `build first` = the warm-up call of "
          "build_objects)")
    if built:
        print(f"the first `build first` ({built[0].label}) includes importing the rest of "
              f"google.adk: {adk_before_build} google.adk modules were loaded before it, "
              f"{adk_modules()} after all builds")
    headers = ["spec", "agents", "compile", "build first", "build", "emit", "agent.py",
               "KiB"]
    rows = [[b.label, str(b.agents), fmt_seconds(b.compile.median), fmt_seconds(b.build_first),
             fmt_seconds(b.build.median), fmt_seconds(b.emit.median), f"{b.lines} lines",
             f"{b.kib:.1f}"] for b in built]
    if rows:
        print_table(headers, rows, right=set(range(1, len(headers))))
    else:
        print("  (no spec could be built)")

    reference = time_import(f'python -c "{REFERENCE}"', [python, "-c", REFERENCE], args.repeat)
    startup = time_import('python -c "pass"', [python, "-c", "pass"], args.repeat)
    backend = time_import('python -c "import agentspec.compiler"',
                          [python, "-c", "import agentspec.compiler"], args.repeat)
    imports = [time_import(f"import {b.package}.agent  ({b.label})",
                           [python, "-c", f"import sys; sys.path.insert(0, {str(b.out_dir)!r}); "
                            f"import {b.package}.agent"], args.repeat)
               for b in built]

    ref = reference.median

    def rss(t: Timing) -> str:
        return f"{t.peak_rss / 1024:.0f} MiB" if t.peak_rss is not None else "n/a"

    print("\nFresh subprocesses (wall time; `x import` = median / median of the LlmAgent "
          "import; `+ import` = median - that median)")
    rows = [[t.label, fmt_seconds(t.min), fmt_seconds(t.median), f"{t.median / ref:.2f}",
             f"{(t.median - ref) * 1000:+.1f} ms", rss(t), t.note]
            for t in (reference, startup, backend, *imports)]
    print_table(["measurement", "min", "median", "x import", "+ import", "peak RSS",
                 "result"], rows, right={1, 2, 3, 4, 5})
    return 1 if any(t.note != "ok" for t in (reference, startup, backend, *imports)) else 0


if __name__ == "__main__":
    sys.exit(main())
