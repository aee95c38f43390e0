"""Property tests: validation never raises, whatever the file holds.

Problems are values, not exceptions: for any bytes, any YAML and any mutation of a valid spec,
`check` returns a CheckResult whose diagnostics all carry a registered code.
"""

from __future__ import annotations

import copy
import io
import math
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from agentspec.diagnostics import REGISTRY
from agentspec.language import TOP_LEVEL_KEYS, Spec
from agentspec.language.common import BY_TYPE_TAGS, TAGS
from agentspec.parse import load_text
from agentspec.validate.check import CheckResult, check
from tests.conftest import located

SETTINGS = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# words of the language, so random documents reach past the top-level checks
VOCABULARY = [
    *TOP_LEVEL_KEYS, "kind", "llm", "deep", "sequential", "parallel", "loop", "router",
    "planner", "instruction", "instruction_file", "sub_agents", "tools", "model", "python",
    "mcp", "builtin", "agent", "command", "url", "type", "state", "filesystem", "shell",
    "composite", "root", "default", "routes", "backend", "task", "agents", "skills", "memory",
    "interrupt_on", "extends", "output_key", "output_schema", "max_iterations", "route", "map",
    "trigger", "tokens", "fraction", "invocations", "keep", "events", "store", "id", "generate",
    "thinking", "context_window", "prod", "main", "worker", "x", "${vars.x}", "${env.X}",
    "../../etc/passwd", "/", ".", "",
]

text_scalars = st.one_of(
    st.text(max_size=20),
    st.sampled_from(VOCABULARY),
    st.sampled_from(["${vars.x}", "${env.HOME}", "${env.X:-d}", "$${", "${", "${vars.",
                     "{topic}", "{x?}", "{{y}}", "mod:attr", "os:system", "a.b:c.d",
                     "gemini-2.5-flash", "sqlite:///x.db", "memory://", "postgresql://u@h/d",
                     "https://example.invalid/mcp", "/scratch/", "\x00", "a\x00b"]),
)
scalars = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    text_scalars,
)
Spec.model_json_schema()  # builds the schema, which registers every union's tags
#: keys that look like the elements pydantic puts in error locations besides data keys: union
#: tags (ours and its own member names), the marker of a bad mapping key, validator names
TAG_LIKE = ["<x>", "<>", "<", ">", "[key]", "[0]", "str", "int", "float", "bool", "none",
            "function-after[f(), str]", "function-plain[f()]", "literal['a']", "model-fields",
            "dict[str,any]", "list[str]", *sorted({*TAGS, *BY_TYPE_TAGS})]
keys = st.one_of(st.sampled_from(VOCABULARY), st.sampled_from(TAG_LIKE), st.text(max_size=12),
                 st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False))
documents = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(keys, children, max_size=6),
    ),
    max_leaves=40,
)
top_level = st.dictionaries(st.sampled_from([*TOP_LEVEL_KEYS, "agnets", "x", *TAG_LIKE]),
                            documents, max_size=8)


def dump(value: Any) -> str:
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    stream = io.StringIO()
    yaml.dump(value, stream)
    return stream.getvalue()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with the files the valid specs below name."""
    root = tmp_path_factory.mktemp("hypothesis")
    (root / "prompts").mkdir()
    (root / "prompts" / "lead.md").write_text("Lead the research on {topic?}.\n")
    (root / "AGENTS.md").write_text("# Memory\n\nBe careful.\n")
    skill = root / "skills" / "cite-sources"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: cite-sources\ndescription: Cite every source.\n---\n\nCite sources.\n")
    (root / "workspace").mkdir()
    (root / "lib.yaml").write_text(LIB)
    return root


def assert_never_raises(path: Path, **kwargs: Any) -> CheckResult:
    result = check(path, environ={}, **kwargs)
    assert isinstance(result, CheckResult)
    for diag in result.diagnostics:
        assert diag.code in REGISTRY, diag
        assert REGISTRY[diag.code].name == diag.name
        if diag.span is not None:
            assert diag.span.start.line >= 1 and diag.span.start.col >= 1, diag
    return result


# --- (a) random YAML documents --------------------------------------------------------------


@SETTINGS
@given(value=documents)
def test_random_yaml_documents(workdir: Path, value: Any) -> None:
    path = workdir / "random.yaml"
    path.write_text(dump(value), encoding="utf-8")
    assert_never_raises(path)


@pytest.mark.slow
@SETTINGS
@given(value=top_level, env=st.sampled_from([None, "prod", "x"]))
@example(value={"<x>": 1}, env=None)  # found: an IndexError in validate/structural.py
def test_random_top_level_mappings(workdir: Path, value: dict[str, Any], env: str | None) -> None:
    value = {"agentspec": 1, **value}
    path = workdir / "random_top.yaml"
    path.write_text(dump(value), encoding="utf-8")
    assert_never_raises(path, environment=env)


# --- (b) random bytes and text --------------------------------------------------------------

yaml_ish = st.lists(
    st.one_of(
        st.sampled_from(["\t", "{", "}", "[", "]", "${", "$${", "&a ", "*a", "!", "!!", "---",
                         "...", ": ", "- ", "\n", "  ", "#", "'", '"', "<<: ", "? ", "|",
                         ">", "%YAML 1.2\n", "\ufeff", "\x00", "\r\n", "agentspec: 1\n",
                         "agents:\n  a:\n    ", "kind: ", "&x ", "*x"]),
        st.text(max_size=8),
    ),
    max_size=40,
).map("".join)


@SETTINGS
@given(raw=st.binary(max_size=400))
def test_random_bytes(workdir: Path, raw: bytes) -> None:
    path = workdir / "bytes.yaml"
    path.write_bytes(raw)
    assert_never_raises(path)


@SETTINGS
@given(text=yaml_ish)
def test_random_yaml_like_text(workdir: Path, text: str) -> None:
    path = workdir / "text.yaml"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    assert_never_raises(path)


@SETTINGS
@given(text=st.text(max_size=300))
def test_load_text_never_raises(text: str) -> None:
    parsed = load_text(text, path=Path("t.yaml"))
    assert all(d.code in REGISTRY for d in parsed.diagnostics)
    assert (parsed.positions is None) == (parsed.value is None)


# --- (c) mutations of valid specs -----------------------------------------------------------

LIB = """\
agentspec: 1
models:
  lib_model: gemini-2.5-flash
tools:
  lib_tool: {builtin: url_context}
agents:
  lib_agent: {instruction: Library agent., model: lib_model}
"""

DEEP = """\
agentspec: 1
name: deep_desk
description: Covers models, tools, backends, harness fields and the top level.
root: lead
imports: [./lib.yaml]
vars: {company: Acme, rounds: 3, temp: 0.2}
state: {topic: tides, "user:lang": en, facts: {n: "${vars.rounds}", xs: [1, 2.5]}}
global_instruction: You work for ${vars.company} in {user:lang}.
models:
  fast: gemini-2.5-flash
  smart:
    id: gemini-2.5-pro
    generate: {temperature: 0.2, top_p: 0.9, max_output_tokens: 2048, stop_sequences: [END]}
    thinking: {budget: 1024, include_thoughts: false}
    context_window: 1048576
  other: {id: anthropic/claude-sonnet-4-5, provider: litellm}
defaults:
  model: fast
  generate: {temperature: 0.3}
tools:
  search: {python: my_tools.search:web_search, args: {max_results: 5}}
  gh:
    mcp: {command: npx, args: [-y, server], env: {TOKEN: "${env.GH_TOKEN:-none}"}}
    filter: [list_issues]
    prefix: gh_
  remote: {mcp: {url: "https://example.invalid/mcp", transport: sse}}
  google: {builtin: google_search}
  checker: {agent: fact_checker}
backends:
  scratch: {type: state}
  disk: {type: filesystem, root: ./workspace}
  box: {type: shell, root: ./workspace, timeout: 60, env: {LANG: C}}
  files: {type: composite, default: box, routes: {/scratch/: scratch, /disk/: disk}}
agents:
  lead:
    kind: deep
    description: Leads.
    model: smart
    instruction_file: prompts/lead.md
    tools: [search, gh, remote, checker, lib_tool, {builtin: load_memory}]
    filesystem: files
    todos: true
    task: {general_purpose: true, agents: [researcher]}
    skills: {paths: [./skills], discovery: lazy}
    memory: [./AGENTS.md]
    interrupt_on:
      write_file: true
      execute: {decisions: [approve, reject], hint: Run it?}
    tool_result_limit: {tokens: 20000}
    callbacks: {before_model: [my_tools.guards:redact], after_tool: [my_tools.guards:log]}
    output_key: draft
    sub_agents: [publish, lib_agent]
    planner: plan_react
  researcher:
    description: Researches.
    instruction: Research {topic?} for ${vars.company}.
    tools: [search]
    output_key: notes
    execution_mode: offline
    filesystem: {backend: disk, tools: [ls, read_file]}
  fact_checker:
    description: Checks a claim.
    instruction: Check the claim.
    model: other
    output_schema:
      type: object
      properties: {ok: {type: boolean}}
      required: [ok]
    input_schema: {python: my_tools.models:Claim}
  publish:
    kind: sequential
    description: Publishes.
    sub_agents:
      - {name: formatter, instruction: "Format {draft}.", output_key: final}
      - {name: announcer, instruction: "Announce {final}.", extends: formatter,
         output_key: note}
summarization:
  trigger: {fraction: 0.8}
  keep: {events: 8}
  model: fast
jobs:
  store: sqlite:///.agentspec/jobs.db
  max_attempts: 3
  lease_seconds: 60
  notify: {webhook: "https://example.invalid/hook", headers: {X-Key: abc}}
plugins:
  - {python: my_tools.plugins:audit, args: {level: 2}}
environments:
  prod:
    models: {fast: gemini-2.5-pro}
    agents: {lead: {todos: null}}
  test:
    jobs: {store: "memory://"}
"""

WORKFLOWS = """\
agentspec: 1
name: workflows
root: flow
vars: {n: 4}
models: {fast: gemini-2.5-flash}
defaults: {model: fast}
tools:
  stop: {builtin: exit_loop}
agents:
  flow:
    kind: sequential
    sub_agents: [fan, refine, triage, plan]
  fan:
    kind: parallel
    sub_agents:
      - {name: a, instruction: A., output_key: a_out}
      - {name: b, instruction: B., output_key: b_out}
  refine:
    kind: loop
    max_iterations: ${vars.n}
    sub_agents: [critic]
  critic:
    instruction: "Critique {a_out} and {b_out}; stop when done."
    tools: [stop]
    generate: {temperature: 0.1, seed: 7}
    thinking: {level: low}
    include_contents: none
    disallow_transfer_to_parent: true
    mode: chat
  triage:
    kind: router
    description: Routes.
    sub_agents: [billing, tech]
    route: {state: ticket_type, map: {money: billing, bug: tech}}
    default: tech
    fallback: [tech]
  billing: {description: Billing., instruction: Billing.}
  tech: {description: Tech., instruction: Tech.}
  plan:
    kind: planner
    description: Plans.
    model: fast
    max_depth: 2
    max_subtasks: 3
    instruction: Plan it.
    worker: {model: fast, instruction: Work., tools: [stop]}
    synthesizer: {model: fast, instruction: Merge.}
summarization:
  trigger: {invocations: 5}
  keep: {invocations: 1}
environments:
  prod: {defaults: {model: gemini-2.5-pro}}
"""

VALID_SPECS = {"deep": DEEP, "workflows": WORKFLOWS}


@pytest.mark.parametrize("name", list(VALID_SPECS))
def test_valid_specs_are_valid(workdir: Path, name: str) -> None:
    path = workdir / f"{name}.yaml"
    path.write_text(VALID_SPECS[name])
    result = assert_never_raises(path)
    errors = [(d.code, d.span, d.message) for d in result.diagnostics if d.is_error]
    assert errors == []
    assert result.spec is not None


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _parent(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        data = data[key]
    return data


MUTATIONS = ("delete", "replace", "rename", "insert")


@st.composite
def mutated_specs(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(sorted(VALID_SPECS)))
    data = load_text(textwrap.dedent(VALID_SPECS[name]), path=Path("x.yaml")).value
    data = copy.deepcopy(data)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = _paths(data)
        path = draw(st.sampled_from(paths))
        mutation = draw(st.sampled_from(MUTATIONS))
        if not path:  # the root: insert a random key
            data[draw(keys)] = draw(documents)
            continue
        parent, last = _parent(data, path), path[-1]
        if mutation == "delete":
            del parent[last]
        elif mutation == "replace":
            parent[last] = draw(documents)
        elif mutation == "rename" and isinstance(parent, dict):
            new = draw(keys)
            parent[new] = parent.pop(last)
        else:
            target = parent[last]
            if isinstance(target, dict):
                target[draw(keys)] = draw(documents)
            elif isinstance(target, list):
                target.insert(draw(st.integers(0, len(target))), draw(documents))
            else:
                parent[last] = draw(documents)
    return dump(data)


@pytest.mark.slow
@SETTINGS
@given(text=mutated_specs(), env=st.sampled_from([None, "prod", "test"]))
def test_mutated_valid_specs(workdir: Path, text: str, env: str | None) -> None:
    path = workdir / "mutated.yaml"
    path.write_text(text, encoding="utf-8")
    assert_never_raises(path, environment=env)


@SETTINGS
@given(value=documents)
def test_random_imported_file(workdir: Path, value: Any) -> None:
    """Whatever an imported file holds, the importing spec is checked without raising."""
    (workdir / "imported.yaml").write_text(dump(value), encoding="utf-8")
    path = workdir / "importer.yaml"
    path.write_text("agentspec: 1\nname: app\nimports: [./imported.yaml]\n"
                    "agents:\n  main: {instruction: Hi, model: gemini-2.5-flash}\n")
    assert_never_raises(path)


def test_nan_and_inf_values_are_diagnosed(workdir: Path) -> None:
    path = workdir / "floats.yaml"
    path.write_text(dump({"agentspec": 1, "name": "app", "agents": {"main": {
        "instruction": "Hi", "model": "gemini-2.5-flash",
        "generate": {"temperature": math.nan, "top_p": math.inf}}}}))
    result = assert_never_raises(path)
    assert not result.ok


# --- (d) keys that look like pydantic's location elements, everywhere -----------------------

#: a spec with every kind of mapping; `@` marks where a key is inserted
CLOSED = """\
agentspec: 1
name: app
@
models:
  fast: {id: gemini-2.5-flash, generate: {temperature: 0.1, @}, @}
tools:
  search: {python: tools:search, @}
  gh: {mcp: {command: npx, @}}
backends:
  disk: {type: filesystem, root: ., @}
summarization: {trigger: {tokens: 100, @}, @}
agents:
  main:
    model: fast
    instruction: Hi.
    tools: [search, gh, {builtin: url_context, @}]
    sub_agents: [triage, plan, {name: inline, instruction: In., @}]
    filesystem: {backend: disk, @}
    thinking: {budget: 1, @}
    @
  triage:
    kind: router
    sub_agents: [a, b]
    route: {state: x, @}
    @
  plan: {kind: planner, worker: {model: fast, @}, synthesizer: {@}, @}
  a: {instruction: A., @}
  b: {kind: deep, instruction: B., @}
"""


@pytest.mark.parametrize("key", TAG_LIKE)
def test_tag_like_keys_are_unknown_keys_where_they_are(
        check_yaml: Any, key: str) -> None:
    """Each inserted key is reported as unknown at its own position: a data key is never
    read as a union tag or a key marker (`<x>` crashed validate)."""
    quoted = "'" + key.replace("'", "''") + "'"
    text = CLOSED.replace("@", f"{quoted}: 1")
    result = check_yaml(text)
    assert all(d.code in REGISTRY for d in result.diagnostics)
    inserted = {(row, found.start() + 1) for row, line in enumerate(text.splitlines(), 1)
                for found in re.finditer(re.escape(quoted), line)}
    reported = {(row, col) for _, row, col, code in located(result)
                if code in ("AS101", "AS108")}
    assert len(inserted) == CLOSED.count("@")
    assert inserted <= reported, sorted(inserted - reported)


@pytest.mark.parametrize("key", [k for k in TAG_LIKE if not k.isidentifier()])
def test_tag_like_names_are_invalid_names(check_yaml: Any, key: str) -> None:
    quoted = "'" + key.replace("'", "''") + "'"
    result = check_yaml(f"""\
        agentspec: 1
        name: app
        models: {{{quoted}: gemini-2.5-flash}}
        tools: {{{quoted}: {{builtin: url_context}}}}
        backends: {{{quoted}: {{type: state}}}}
        agents:
          main: {{instruction: Hi., model: gemini-2.5-flash}}
        """)
    assert [(line, code) for _, line, _, code in located(result)] == [
        (3, "AS106"), (4, "AS106"), (5, "AS106")]
