"""The registry of diagnostic codes: `AS` + three digits + a kebab-case name.

Grouped by stage: 0xx read/YAML, 1xx structure, 2xx semantics, 3xx resolution, 4xx build,
5xx diff, 6xx import (`agentspec import adk`), 7xx scenario files (`agentspec test`).
Numbers are never reused; `agentspec explain CODE` prints the explanation.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agentspec.diagnostics.model import Category, Diagnostic, Related, Risk, Severity, State
from agentspec.source import Span

__all__ = ["REGISTRY", "Code", "define", "lookup"]

REGISTRY: dict[str, Code] = {}


@dataclass(frozen=True, slots=True)
class Code:
    code: str
    name: str
    severity: Severity
    summary: str
    explanation: str
    #: the risk class of a diff change (5xx): `high`, `medium`, `low`, or two of them with
    #: the condition that picks one
    risk: str | None = None
    #: what a diff change concerns (5xx)
    category: Category | None = None
    state: State = State.STABLE

    @property
    def level(self) -> str:
        """What it is, for `explain` and the reference: `error`, `warning`, `info`, or `diff
        change, risk R, CATEGORY`; with its state when it is not stable."""
        kind = f"diff change, risk {self.risk}, {self.category}" if self.risk else \
            self.severity.value
        return kind if self.state is State.STABLE else f"{kind}; {self.state}"

    @property
    def risks(self) -> tuple[Risk, ...]:
        """The risk classes a diff change of this code may have, highest first."""
        named = set((self.risk or "").replace(",", " ").split())
        return tuple(risk for risk in Risk if risk.value in named)

    def __call__(self, message: str, span: Span | None, *, hint: str | None = None,
                 related: Iterable[Related] = ()) -> Diagnostic:
        return Diagnostic(self.code, self.name, self.severity, _sentence(message), span,
                          _sentence(hint) if hint else None, tuple(related))


MAX_MESSAGE = 500


def _sentence(text: str) -> str:
    """Sentence case, no final period, bounded length (a message may quote a huge value)."""
    text = text.rstrip(".")
    if len(text) > MAX_MESSAGE:
        text = text[: MAX_MESSAGE - 1] + "…"
    return text[:1].upper() + text[1:]


def _code(code: str, name: str, summary: str, explanation: str, *,
          warning: bool = False, info: bool = False, risk: str | None = None,
          category: Category | None = None, state: State = State.STABLE) -> Code:
    assert code not in REGISTRY, code
    severity = Severity.INFO if info or risk else Severity.WARNING if warning else \
        Severity.ERROR
    entry = Code(code, name, severity, summary, " ".join(explanation.split()), risk,
                 category, state)
    assert (risk is None) == (category is None) and (risk is None or entry.risks), code
    REGISTRY[code] = entry
    return entry


def define(code: str, name: str, summary: str, explanation: str, *, warning: bool = False,
           risk: str | None = None, category: Category | None = None) -> Code:
    """A code an agent kind defines in its own module (and lists in its `codes`), registered
    like the codes below, in its place in the ascending order; a diff code (`risk`) names
    its category."""
    entry = _code(code, name, summary, explanation, warning=warning, risk=risk,
                  category=category)
    ordered = sorted(REGISTRY.items())
    REGISTRY.clear()
    REGISTRY.update(ordered)
    return entry


def lookup(code_or_name: str) -> Code | None:
    """Find a code by `AS201`, `as201` or its name `unknown-agent`."""
    key = code_or_name.strip()
    if key.upper() in REGISTRY:
        return REGISTRY[key.upper()]
    return next((c for c in REGISTRY.values() if c.name == key.lower()), None)


# 0xx: reading files and YAML
FILE_NOT_FOUND = _code("AS001", "file-not-found", "The spec file does not exist", """
    The path given on the command line does not name a file. Check the path and the current
    directory; globs that match nothing are reported the same way.""")
FILE_UNREADABLE = _code("AS002", "file-unreadable", "The spec file cannot be read", """
    The path exists but cannot be read: it is a directory, or permissions forbid reading it.""")
NOT_UTF8 = _code("AS003", "not-utf8", "The file is not valid UTF-8", """
    Spec files must be UTF-8 text. The diagnostic points at the first byte that cannot be
    decoded; re-save the file as UTF-8.""")
YAML_SYNTAX = _code("AS004", "yaml-syntax", "The file is not valid YAML", """
    The YAML parser stopped at the position shown. Common causes: a missing space after a
    colon, unbalanced quotes or brackets, or wrong indentation.""")
DUPLICATE_KEY = _code("AS005", "duplicate-key", "A mapping has the same key twice", """
    YAML mappings must not repeat a key; most parsers silently keep the last value, which hides
    mistakes. Remove or rename one of the two keys; the related location shows the first.""")
TAB_INDENT = _code("AS006", "tab-indentation", "A tab character is used for indentation", """
    YAML forbids tabs in indentation. Replace the tab with spaces.""")
EMPTY_FILE = _code("AS007", "empty-file", "The file holds no spec", """
    The file is empty or holds only comments. A spec needs at least `agentspec: 1` and an
    agent.""")
NOT_A_MAPPING = _code("AS008", "not-a-mapping", "The top level is not a mapping", """
    A spec is a YAML mapping of top-level keys (`agentspec`, `name`, `agents`, ...), not a list
    or a scalar.""")
CUSTOM_TAG = _code("AS009", "custom-tag", "A YAML tag that agentspec refuses", """
    Tags such as `!!python/object` or `!include` can make a YAML loader construct objects or
    read files. agentspec accepts only the standard scalar, sequence and mapping tags; use
    `imports` to combine files and `python:` references for code.""")
FILE_TOO_LARGE = _code("AS010", "file-too-large", "The file is larger than a spec can be", """
    Spec files are limited to 2 MiB so that validation stays fast and bounded. Split the spec
    with `imports`.""")
ALIAS_EXPANSION = _code("AS011", "alias-expansion", "Anchors and aliases expand too far", """
    YAML aliases can make a small file expand to an enormous document (the "billion laughs"
    attack), or refer to themselves. agentspec stops once expanding aliases would produce more
    than 100,000 nodes, or when an alias contains itself.""")
MULTIPLE_DOCUMENTS = _code("AS012", "multiple-documents", "The file holds several documents", """
    A spec file holds exactly one YAML document. Remove the `---` separator, or move the second
    document to its own file and list it in `imports`.""")
INVALID_KEY = _code("AS013", "invalid-key", "A mapping key is not a string", """
    Keys in a spec are names, so they must be plain strings. Quote keys such as `1` or `null`
    if you really mean them as names.""")
YAML_INDENTATION = _code("AS014", "yaml-indentation",
    "A line indented unlike the lines above it", """
    YAML reads structure from indentation: the keys of one mapping, and the items of one
    list, start in the same column, and a line indented more than the `key: value` above it
    continues that value. The diagnostic points at the line whose indentation fits nothing
    above it (the parser often notices a line later) and names the lines it could be lined
    up with.""")
CONFIG_INVALID = _code("AS015", "config-invalid", "A setting of the project's config file "
    "agentspec cannot use", """
    `agentspec.toml`, or the `[tool.agentspec]` table of `pyproject.toml`, in the spec's
    directory or one above it in its project, sets `select` and `ignore` (codes, their names
    or prefixes such as `AS2`) and, under `diff`, `fail-on` and `except` (risks, categories
    or diff codes). The file is not valid TOML, a key is unknown, a value is not a list of
    strings, or an entry names no code. The other settings still apply; fix the one shown.
    A warning for `validate` (the file only chooses what is reported); `diff` refuses to
    judge a change with it, since its `fail-on` may be lost.""", warning=True)
NUMBER_TOO_LARGE = _code("AS016", "number-too-large", "A number with too many digits", """
    Integers in a spec have at most 100 digits: no count, limit or size needs more, and a
    number of thousands of digits only costs time (Python refuses to convert decimal text of
    more than 4300 digits). Quote the value if it is text.""")
TAG_MISMATCH = _code("AS017", "tag-mismatch", "A value its YAML tag does not fit", """
    A standard tag such as `!!int`, `!!float`, `!!bool` or `!!null` says what type a value
    is; the text after it must be a value of that type (`!!int 3`, not `!!int offline`).
    Remove the tag (agentspec reads plain values by their text), or fix the value.""")
UNUSED_SUPPRESSION = _code("AS018", "unused-suppression",
    "A suppression comment that suppresses nothing", """
    `# agentspec: ignore[CODE]` on a line hides the warnings and information of that code
    reported at that line. This one hid nothing: the problem is fixed, or it is reported on
    another line, or under another code. Remove the code from the comment (a comment left
    behind would hide the next problem of that code on the line).""", warning=True,
    state=State.PREVIEW)
INVALID_SUPPRESSION = _code("AS019", "invalid-suppression",
    "A suppression comment agentspec cannot apply", """
    `# agentspec: ignore[CODE, ...]` names the codes it hides, by code (`AS215`), by name
    (`interrupt-unknown-tool`) or by prefix (`AS2`). This one names no code, names a code
    that does not exist, or names an error: errors are never hidden, since `build` refuses
    a spec that has one, and `validate` must say so. Nor does a comment hide a diff change
    (AS5xx): a change's author must not hide it from its reviewer (`diff --except` is the
    reviewer's choice).""", warning=True, state=State.PREVIEW)

# 1xx: structure (the shape of the language)
UNKNOWN_KEY = _code("AS101", "unknown-key", "A key the language does not define", """
    Every mapping in a spec has a fixed set of keys (see the JSON Schema in
    `schemas/agentspec.schema.json`). The hint suggests the closest valid key.""")
MISSING_KEY = _code("AS102", "missing-key", "A required key is missing", """
    The mapping lacks a key the language requires, such as `agentspec` at the top level or `id`
    in a model definition.""")
WRONG_TYPE = _code("AS103", "wrong-type", "A value has the wrong type", """
    The value is not of the type the key takes, for example a list where a mapping is expected
    or text where a number is expected.""")
INVALID_VALUE = _code("AS104", "invalid-value", "A value is outside what the key accepts", """
    The value has the right type but is not accepted: a word not in the allowed set, a number
    out of range, or text that does not match the required form.""")
UNSUPPORTED_VERSION = _code("AS105", "unsupported-version", "An unsupported language version", """
    `agentspec:` names the language version of the file. Version 1 is the only one this
    release understands.""")
INVALID_NAME = _code("AS106", "invalid-name", "A name is not a valid identifier", """
    Names of agents, models, tools and backends, and the spec's `name`, become Python
    identifiers in generated code and ADK names. Use letters, digits and underscores, not
    starting with a digit; `user` is reserved by ADK for agents and apps, and ADK's app
    name (the spec's `name`) starts with a letter. The keys of `args` are
    keyword arguments of a call in generated code, so they cannot be Python's reserved words
    (`class`, `from`, `None`, ...) either.""")
ONE_OF = _code("AS107", "one-of", "Keys that exclude each other, or none of them", """
    Some mappings take exactly one of several keys: a tool is `python`, `mcp`, `builtin` or
    `agent`; an agent has `instruction` or `instruction_file`; a summarization trigger is
    `tokens`, `fraction` or `invocations`. Keep exactly one.""")
FIELD_NOT_FOR_KIND = _code("AS108", "field-not-for-kind",
    "A field that this agent kind does not take", """
    Agent kinds take different fields: harness fields (`todos`, `filesystem`, `task`,
    `skills`, `memory`, `interrupt_on`, `tool_result_limit`) and LLM settings apply only to
    `kind: llm` and `kind: deep`; `max_iterations` only to `kind: loop`; `route` only to
    `kind: router`. Remove the field or change the kind.""")
UNKNOWN_KIND = _code("AS109", "unknown-kind", "An agent kind the language does not define", """
    `kind` is one of llm (the default), deep, sequential, parallel, loop, router, planner.""")
INVALID_STATE_KEY = _code("AS110", "invalid-state-key",
    "A `state` key a session cannot start with", """
    `state:` keys are what `{key}` placeholders name: letters, digits and underscores (not
    starting with a digit), optionally after ADK's `app:` prefix (state shared by every user
    of the app) or `user:` prefix (shared by one user's sessions). `temp:` state lasts a
    single invocation, so a session cannot start with it: set it from a tool or callback, and
    write `{temp:key?}` where an instruction reads it.""")

# 2xx: semantics (references, the agent tree, kind rules, files)
UNKNOWN_AGENT = _code("AS201", "unknown-agent", "A reference to an agent that is not defined", """
    `root`, `sub_agents`, `extends`, `{agent: ...}` tools, `task.agents` and router `default` /
    `fallback` / `route.map` name agents defined under `agents` (or inline, or in an imported
    file). The hint suggests the closest defined name.""")
UNKNOWN_MODEL = _code("AS202", "unknown-model", "A reference to a model that is not defined", """
    `model:` takes a name from `models` or a literal model id. A value that looks like a name
    (no dash, slash or dot) but is not defined is reported, with the closest defined name.""")
UNKNOWN_TOOL = _code("AS203", "unknown-tool", "A reference to a tool that is not defined", """
    An agent's `tools` list names tools defined under `tools` (or in an imported file), or
    defines them inline.""")
UNKNOWN_BACKEND = _code("AS204", "unknown-backend",
    "A reference to a backend that is not defined", """
    `filesystem:` and composite `default` / `routes` name backends defined under
    `backends`.""")
DUPLICATE_NAME = _code("AS205", "duplicate-name", "A name defined twice", """
    Names are unique per section across the spec and everything it imports, and inline agents
    join the same namespace as `agents`. Both definitions are shown; rename one.""")
AGENT_CYCLE = _code("AS206", "agent-cycle", "Agents that delegate to each other in a circle", """
    Through `sub_agents`, `{agent: ...}` tools, `task.agents` or router children an agent
    eventually reaches itself. Agent trees must be finite; break the cycle.""")
MULTIPLE_PARENTS = _code("AS207", "multiple-parents",
    "An agent listed as a sub-agent of two parents", """
    ADK allows one parent per agent. To use the same agent under two parents, define a second
    agent with `extends: <name>` and list that one under the second parent.""")
ROOT_MISSING = _code("AS208", "root-missing", "No single entry agent", """
    `root` is required when more than one agent is not anybody's child (not a sub-agent, agent
    tool, task agent or router child). Set `root:` to the entry agent.""")
ROOT_HAS_PARENT = _code("AS209", "root-has-parent", "The root agent is another agent's child", """
    The agent named by `root` is also listed as a child of another agent. The root must be the
    top of the tree.""")
ROUTER_ROUTE = _code("AS210", "router-route", "A router without exactly one route method", """
    `route` takes exactly one of `state` (optionally with `map`), `model` (optionally with
    `instruction`) or `python`; `routes` (key -> agent) goes with any of them, never beside
    `map`.""")
ROUTER_MEMBER = _code("AS211", "router-member",
    "A router option that is not one of its children", """
    A router's `default`, `fallback` entries and `route.map` / `route.routes` values must be
    among its `sub_agents`: the router runs only its own children.""")
PLANNER_BOUNDS = _code("AS212", "planner-bounds", "A planner whose limits are out of range", """
    `max_depth` must be between 1 and 6 and `max_subtasks` between 1 and 16; the number of leaf
    calls grows as max_subtasks ** max_depth, which must stay at or below 1024.""")
LOOP_ITERATIONS = _code("AS213", "loop-iterations",
    "A loop whose iteration limit is not at least 1", """
    `max_iterations` must be 1 or more; a loop with 0 iterations would run nothing.""")
WORKFLOW_NO_CHILDREN = _code("AS214", "workflow-no-children",
    "A workflow or router with no sub-agents", """
    `sequential`, `parallel`, `loop` and `router` agents run their `sub_agents`; without any
    they do nothing.""")
INTERRUPT_UNKNOWN_TOOL = _code(
    "AS215", "interrupt-unknown-tool", "Approval asked for a tool the agent will not have", """
    `interrupt_on` keys name tools of the same agent: entries of its `tools` (by spec name or
    by the name the model sees), harness tools (`ls`, `read_file`, `write_file`, `edit_file`,
    `glob`, `grep`, `execute`, `write_todos`, `read_todos`, `task`) and agent tools. A key that
    names none of them would never gate anything, which silently drops an approval.""")
EXECUTE_WITHOUT_SHELL = _code(
    "AS216", "execute-without-shell", "`execute` asked of a backend that cannot run commands", """
    Only `shell` and `sandbox` backends (or a `composite` whose default is one) can run
    commands. Use one of them or drop `execute`.""")
FRACTION_NEEDS_WINDOW = _code(
    "AS217", "fraction-needs-context-window", "A fraction trigger with no context window", """
    `summarization.trigger.fraction` is a share of a model's context window. Declare
    `context_window` on the named models the LLM agents use (the smallest one is used), or use
    a `tokens` trigger.""")
PATH_NOT_FOUND = _code("AS218", "path-not-found",
    "A file or directory the spec names does not exist", """
    `instruction_file`, `memory`, `skills` and `imports` paths are relative to the file that
    names them.""")
SKILL_INVALID = _code("AS219", "skill-invalid", "A SKILL.md that ADK would refuse", """
    Each skill is a folder holding `SKILL.md`, which starts with YAML frontmatter between `---`
    lines with `name` (kebab-case, at most 64 characters, equal to the folder name) and
    `description` (1 to 1024 characters).""")
PYTHON_REF_MALFORMED = _code(
    "AS220", "python-ref-malformed", "A python reference not of the form module:attribute", """
    Python references are written `package.module:attribute` (the attribute may be dotted).""")
PYTHON_REF_STDLIB = _code("AS221", "python-ref-stdlib",
    "A python reference into the standard library", """
    References into the Python standard library (`os:system`, `subprocess:run`, ...) are
    refused: a spec must not be able to call arbitrary library functions. That includes
    references that reach it through a module of yours: `mytools:os.system` where `mytools`
    imports `os`, or `mytools:system` after `from os import system` (validate reads the
    modules' source, without importing them, as far as it tells). Wrap what you need in a
    function of your own module.""")
PYTHON_MODULE_NOT_FOUND = _code("AS222", "python-module-not-found",
    "A python module that cannot be found", """
    The module is neither beside the spec nor on the Python path. `validate` looks for the file
    without importing anything; build and run will fail to import it.""", warning=True)
UNKNOWN_PLACEHOLDER = _code("AS223", "unknown-placeholder",
    "An instruction placeholder nothing in the spec provides", """
    `{key}` in an instruction is replaced from session state when the agent runs, and a
    session without `key` stops the run. The spec provides a key when the top-level `state:`
    gives it an initial value or an agent writes it through `output_key`; this one is
    neither, which is usually a typo (the hint names the closest key). State set another way
    (a tool or callback writing `tool_context.state`, a caller creating the session with it)
    is invisible to `validate`: declare the key under `state:` with an initial value, or write
    `{key?}` to make it optional. Write `{{key}}` for the literal text `{key}`. `temp:` keys
    and `{artifact.NAME}` are not checked.""")
UNREACHABLE_AGENT = _code("AS224", "unreachable-agent", "An agent the root never reaches", """
    The agent is defined but neither the root nor any agent it reaches uses it, so it never
    runs. Remove it or reference it.""", warning=True)
INVALID_JSON_SCHEMA = _code(
    "AS225", "invalid-json-schema", "An output or input schema that is not valid JSON Schema", """
    `output_schema` and `input_schema` take a JSON Schema mapping (checked against the JSON
    Schema meta-schema) or `{python: module:Model}`.""")
LOOP_UNBOUNDED = _code("AS226", "loop-unbounded", "A loop that may never stop", """
    The loop has no `max_iterations` and none of its children has the `exit_loop` tool, so
    nothing ends it.""", warning=True)
INVALID_STORE_URL = _code("AS227", "invalid-store-url", "A job store URL agentspec cannot use", """
    `jobs.store` is `memory://`, `sqlite:///path` or `postgresql://user@host/db`.""")
SKILLS_EMPTY = _code("AS228", "skills-empty", "A skills directory with no skills", """
    A `skills` entry is a directory that holds skill folders, each with a `SKILL.md`. This one
    holds none. If the path is itself a skill folder, name its parent directory.""",
    warning=True)
DELEGATION_OUTSIDE_LLM = _code("AS229", "delegation-outside-llm",
    "A `mode` that has no effect here", """
    `mode` says how an LLM parent invokes a sub-agent. The agent's parent is not an LLM agent
    (or it has none), so `mode` does nothing.""", warning=True)
OFFLINE_NOT_DELEGATED = _code(
    "AS230", "offline-not-delegated",
    "An offline agent that nobody delegates to", """
    `execution_mode: offline` queues a background job when a parent delegates a task to the
    agent: through an `{agent: name}` tool, the `task` tool, or as a sub-agent with
    `mode: single_turn` or `mode: task` under an LLM agent. This agent is reached in none of
    those ways (a root, a transfer target or a workflow step runs in real time), so the
    setting would do nothing.""")
INPUT_SCHEMA_UNUSED = _code(
    "AS231", "input-schema-unused",
    "An input schema on an agent that is never called as a tool", """
    `input_schema` declares the arguments of an agent called like a tool: through an
    `{agent: name}` tool or as a sub-agent with `mode: single_turn` or `mode: task`. This
    agent is never called that way, so the schema would do nothing.""")
NESTED_APPROVAL = _code(
    "AS232", "nested-approval",
    "An approval on a delegation whose sub-agent asks for approvals too", """
    The approval asks a person before this agent delegates (the `task` tool, an
    `{agent: name}` tool or a `single_turn`/`task` sub-agent), and an agent the delegation
    starts asks for approvals of its own. ADK 2.13 records the paused delegation as answered,
    so after the outer approval an inner one could never resume the sub-agent: its work
    would be lost. Ask for approval at one level: remove this entry, or the `interrupt_on`
    entries of the sub-agents it starts (the general-purpose agent of `task` has its
    caller's approvals).""")

STATE_INPUT_NOT_REQUIRED = _code(
    "AS233", "state-input-not-required", "A state entry with `required: false`", """
    A `state:` entry that is a mapping with `required` declares a key the session's creator
    supplies, without a value; `required: false` would declare a key that nobody gives a
    value. Give the key an initial value instead (`tone: friendly`), write `required: true`,
    or write `{key?}` in instructions that may run without it.""")
PLANNER_RESULTS_KEY = _code(
    "AS234", "planner-results-key-clash", "A planner's `results_key` equal to its `output_key`",
    """
    `output_key` receives the plan's final answer and `results_key` every node's task and
    result; on one key the later write replaces the earlier. Give each its own key.""")
PROMPT_SECTION_UNUSED = _code(
    "AS235", "prompt-section-unused", "A `prompts` entry for a section the agent does not have",
    """
    The harness adds a section to an agent's system prompt for each feature it has: `base`
    for `kind: deep`, `filesystem` and `execute` with file tools, `todos`, `task`, `skills`,
    `memory`. Switching off or replacing a section of a feature the agent lacks does nothing,
    so the entry is a mistake (a feature turned off, or the wrong agent).""", warning=True)
SUMMARY_WINDOW_UNKNOWN = _code(
    "AS236", "summary-window-unknown",
    "A deep agent whose model's context window is unknown, so it is not summarized", """
    A spec with `kind: deep` agents and no `summarization:` is summarized at 85% of the
    smallest context window of their models, as deepagents does. The window comes from
    `context_window:` on the model's definition, or from agentspec's table of known models;
    when a deep agent's is neither, the spec runs as before, without summarization. Add
    `context_window:` to the model under `models:`, or set `summarization:` yourself.""",
    info=True)
AGENT_TREE_TOO_DEEP = _code("AS240", "agent-tree-too-deep", "Agents nested too deeply", """
    Agents may nest at most 100 levels below the root (through sub-agents, `{agent: ...}`
    tools and `task`). ADK and agentspec walk the tree recursively; a deeper tree would fail
    when it is built or run. A workflow agent takes any number of steps: flatten the tree.""")
AGENT_TREE_TOO_LARGE = _code("AS241", "agent-tree-too-large",
    "Build would make too many agents", """
    An agent reached through several delegations (`{agent: ...}` tools, `task` lists, and the
    general-purpose copy that `task` makes of its caller) is built once for each, so sharing
    agents at every level multiplies them. Build makes at most 10,000 agents from the root.""")
PATH_OUTSIDE_PROJECT = _code("AS242", "path-outside-project",
    "A path the spec names is outside the project", """
    Every path a spec names (`imports`, `instruction_file`, `memory`, `skills` and the skill
    folders in them, backend `root`s, an MCP server's `cwd`, an SQLite `jobs.store`) must
    resolve inside the project: the git work tree holding the spec, or the spec's own
    directory when it is in none. `..`, absolute paths and symbolic links leading out all
    count, and nothing outside is read. So must a scenario file (`scenarios/<stem>.yaml`,
    or one given to `validate` or `test`): one outside is refused unread. A spec that
    really needs a directory outside lists it in the top-level `outside_project`, where
    every reviewer sees it: `validate` notes
    each path it allows (AS244) and `diff` reports adding or widening it as a high risk.""")
IMPORT_NOT_A_SPEC = _code("AS243", "import-not-a-spec", "An imported file that is not a spec", """
    `imports` takes spec files: YAML (`.yaml` or `.yml`) mappings with at least one of
    `models`, `tools`, `backends`, `agents` or `imports`. Anything else (a `.env` file, a
    credentials file, a key) is refused without showing its content, so an import can never
    echo a secret into diagnostics or a pull-request comment.""")
OUTSIDE_PROJECT_USED = _code("AS244", "outside-project-used",
    "A path outside the project, allowed by `outside_project`", """
    The spec names a path outside its project, and the top-level `outside_project` allows
    it. This is information for reviewers, not a problem (it never fails `--strict`): the
    spec reads or writes files that the project's history does not hold.""", info=True)
ADK_BRACES = _code("AS245", "adk-double-braces",
    "`{{key}}` around a state key: literal text here, state in ADK", """
    In agentspec `{{key}}` is the escape for the literal text `{key}`: the model sees the
    braces. In an ADK instruction (and in ADK Agent Config files) any run of braces around a
    state name reads state, so `{{key}}` copied from ADK code reads the value there and the
    literal text here. This key is one the spec declares under `state:` or an agent writes
    through `output_key`, so the literal text is probably not what was meant. Write `{key}`
    to read the state, or keep `{{key}}` when the literal braces are intended (then the
    warning is the price of the ambiguity; `--strict` turns it into an error).""",
    warning=True)
CODE_EXECUTOR_BACKEND = _code("AS246", "code-executor-backend",
    "A code executor whose backend is not a sandbox", """
    `code_executor: {backend: NAME}` runs the Python blocks the model writes inside that
    backend. The model's code is as trustworthy as whatever steers the model (a user, a
    fetched page, a tool result), so it runs only in a `type: sandbox` backend, where
    bubblewrap confines it to the backend's root, mounts and limits, without the network
    unless the backend allows it. A `filesystem`, `shell`, `state` or `composite` backend,
    or a name no backend has, is refused. Define a sandbox backend and name it.""")
BUILTIN_CODE_EXECUTOR_MODEL = _code("AS247", "builtin-code-executor-model",
    "The built-in code executor with a model that is not Gemini", """
    `code_executor: builtin` is ADK's `BuiltInCodeExecutor`: it asks the model's API to run
    the code (Gemini's code execution tool), and ADK refuses every request of an agent whose
    model is not a Gemini model ("Gemini code execution tool is not supported"). Give the
    agent a `gemini-*` model, or run the code in a sandbox backend with
    `code_executor: {backend: NAME}`.""")
BACKEND_SOURCE_WITHOUT_BACKEND = _code("AS248", "backend-source-without-backend",
    "A `backend:` memory file or skills directory on an agent without file tools", """
    A `memory:` or `skills:` entry written `backend:/path` is read through the agent's own
    file-tools backend (`filesystem:`, or the state backend of `kind: deep`) when the agent
    runs, so a `state` or `sandbox` backend can hold it. This agent has no such backend.
    Give it `filesystem: BACKEND`, or name a file beside the spec (without `backend:`).""")
BACKEND_SOURCE_PATH = _code("AS249", "backend-source-path",
    "A `backend:` entry that is not a path of the backend", """
    After `backend:` comes the absolute path the agent's file tools see, such as
    `backend:/memories/AGENTS.md`: it starts with `/`, does not climb above `/` with `..`,
    and has no NUL bytes or over-long names.""")
UNRESOLVABLE_MODEL_ID = _code("AS250", "unresolvable-model-id",
    "A model id ADK's model registry never resolves", """
    With `provider: adk` (the default) ADK's model registry picks the model class from the
    id: `gemini-*`, `gemma-*`, `claude-*`, `gpt-*`, `o1-*`-style ids, `model-optimizer-*`,
    Oracle Cloud ids (`meta.llama-*`, `xai.grok-*`, ...) and `provider/model` ids (Vertex AI
    endpoints, Apigee, LiteLLM providers). This id has no `/`
    and matches none of them, so `build` would fail (AS404) wherever it runs. Whether an id
    that needs an optional package resolves depends on the installation; `build` checks
    those.""")
UNKNOWN_MODEL_ID = _code("AS251", "unknown-model-id",
    "A Gemini model id that no known model has", """
    ADK's registry resolves every `gemini-*` id, so a misspelled one (`gemini-2.5-flsh`)
    builds and fails only when the model's server refuses the first request. agentspec keeps
    a table of the Gemini models google-genai and ADK name (`agentspec.contract.known_models`,
    with the date it was taken), and warns about an id that is neither one of them nor a
    release of one (`-001`, `-preview-MM-DD`, `-exp-...`), naming the closest. A model newer
    than the table is a warning to ignore (or to report, so the table is refreshed). Other
    providers' ids are not judged: no installed library lists them.""", warning=True)
PYTHON_NAME_NOT_FOUND = _code("AS252", "python-name-not-found",
    "A python reference to a name its module does not define", """
    `validate` reads the source of the spec's own modules (beside the spec), without
    importing them: the name after `:` must be bound when the module's top level runs, by
    `def`, `class`, an assignment or an import (`from x import y as name`), as Python finds
    the module (a package `m/__init__.py` before a module `m.py`). An annotation alone
    (`name: int`), an import under `if TYPE_CHECKING:` and a name deleted with `del` bind
    nothing. A submodule is an attribute of its package only once something imports it
    (`from . import sub` in `__init__.py`), since `build` imports the package and takes the
    attribute. A module that star-imports (`from x import *`), defines `__getattr__` or
    writes its names another way (`globals()`, `exec`, `sys.modules[__name__]`, `vars()`)
    can bind any name, so it is not judged; nor are modules installed elsewhere on the Python
    path. `build` would fail to import the name.""")
PYTHON_MODULE_SYNTAX = _code("AS253", "python-module-syntax",
    "A module that a python reference names does not parse", """
    The module's source has a syntax error (its file, line and column are in the message),
    so importing it fails when the agent is built or loaded. `validate` parses the spec's own
    modules with Python's `ast`, without running them.""")
PYTHON_MODULE_CLASH = _code("AS254", "python-module-clash",
    "Python references from two directories to different modules of one name", """
    The spec's python references are looked up beside the file they are written in, and
    `build` (and the generated package) puts each of those directories on one `sys.path`.
    Python imports a module name once per process, from the first directory that holds it,
    so when a spec and a file it imports each have their own `tools.py`, every reference to
    `tools` gets the same one and the other's names fail to import (AS403). The same holds
    for a module beside one file and an installed module of that name used from another.
    Rename one of the modules, or keep the spec's python code in one directory.""")
AUTH_SECRET_LITERAL = _code("AS255", "auth-secret-literal",
    "A tool's credential written into the spec", """
    A tool's `auth` carries a secret (an API key's `value`, a `bearer` token, an OAuth
    `client_secret`). Secrets come only from the environment: write `${env.NAME}` (the whole
    value), and set NAME where the agent runs. The value is then read when the app is loaded,
    and neither the spec, its history, `diff`, nor the generated package ever holds it.""")
AUTH_TOOL_KIND = _code("AS256", "auth-tool-kind",
    "`auth` on a tool that cannot carry a credential", """
    `auth` compiles to ADK's auth scheme and credential: a python tool becomes an
    `AuthenticatedFunctionTool`, whose function receives the credential as its
    `credential` argument, and an MCP toolset sends it in the headers of each request. A
    python entry with `args` calls a factory whose result is no function, and an MCP server
    started as a local command (stdio) receives no headers: give a factory's tool its
    credential itself, and a stdio server its secret through `env`.""")
SERVICE_ACCOUNT_SOURCE = _code("AS257", "service-account-source",
    "A `service_account` auth without exactly one source of credentials", """
    A `service_account` signs in with a JSON key or with Application Default Credentials:
    `key: ${env.NAME}` (the variable holds the whole JSON key) or `default: true` (the
    metadata server on Google Cloud, or the file `GOOGLE_APPLICATION_CREDENTIALS` names),
    one of them. A key file path is not offered: a key inside the project would sit in its
    history and in every bundle, and one outside it is what `GOOGLE_APPLICATION_CREDENTIALS`
    with `default: true` already reads, without agentspec ever opening it.""")
SANDBOX_MOUNT_TARGET = _code("AS260", "sandbox-mount-target",
    "A sandbox mount placed where the sandbox's own layout lives", """
    A `sandbox` backend's `mounts` bind host directories read-only at absolute paths of the
    sandbox. A source may not be or lie in any backend's root (compared as written and
    resolved, so an absolute path or a link counts): a command there could swap it for a link
    to any host directory. A target may not be `/`, `/workspace` or below it (that would
    create the mount point inside the backend's root, on the host), `/proc`, `/dev`, `/tmp`,
    `/usr`, `/etc`,
    the system directories (`/bin`, `/lib`, ...) or below them, and two mounts may not use
    the same target or one inside the other; `.` and `..` are not allowed in it. Use a path
    such as `/data` or `/mnt/reference`.""")
SANDBOX_NETWORK = _code("AS261", "sandbox-network",
    "A sandbox whose commands reach the network", """
    `network: true` gives the sandbox the host's network: commands can reach the internet and
    every service listening on the host's loopback interface (databases, metadata endpoints,
    the agent's own servers). Leave it off unless the commands need it.""", info=True)
INTERNAL_KEY_PLACEHOLDER = _code("AS262", "internal-key-placeholder",
    "An instruction naming one of agentspec's own state keys, which is never filled", """
    ADK fills `{key}` only when the key is a name (letters, digits, underscores), optionally
    after `app:`, `user:` or `temp:`. agentspec keeps its own bookkeeping under `agentspec:`
    keys (a planner's node records under `agentspec:plan:<node>`, todos, state-backend
    files), so `{agentspec:plan:lead}` reaches the model as that very text. To use a
    planner's answer, give the planner `output_key: report` and write `{report}`; for
    other data, have a tool or an agent write it under a key of your own.""", warning=True)
SANDBOX_SOCKETS = _code("AS263", "sandbox-sockets",
    "A sandbox whose mounts may hold Unix sockets and FIFOs", """
    `allow_sockets: true` lets the sandbox's read-only `mounts` hold Unix sockets and FIFOs
    (named pipes): through a socket a command talks to the host service behind it (a
    container engine's `docker.sock`, a database, an agent's control socket) with that
    service's trust in the host user, network or not, and through a FIFO it writes to (or
    reads from) the host process at its other end, read-only mount or not. Without it a
    mount holding either is refused when a command runs. Leave it off unless the commands
    need such a service.""", info=True)
SANDBOX_ENV_NAME = _code("AS264", "sandbox-env-name",
    "A sandbox environment variable that cannot be set", """
    A `sandbox` backend's `env` names must be non-empty and hold neither `=` nor a NUL
    byte, and values may not hold a NUL byte: the sandbox receives them NUL-separated
    (`bwrap --args`, kept off every command line), and no program's environment can carry
    them. Rename the variable or drop the NUL.""")
TELEMETRY_ENDPOINT = _code(
    "AS265", "telemetry-endpoint", "A `telemetry.endpoint` that is no collector's URL", """
    `telemetry.endpoint` is where spans are sent (OTLP over HTTP or gRPC): an `http://` or
    `https://` URL with a host, such as `http://localhost:4318`, or `${env.NAME}`. A URL
    that names a user and password puts them in the spec's history: write them as
    `${env.NAME}`, or send a header.""")
TELEMETRY_FIELD_UNUSED = _code(
    "AS266", "telemetry-field-unused", "A `telemetry` field the chosen exporter does not read", """
    `endpoint`, `protocol` and `headers` are read by the `otlp` exporter only; with
    `exporter: console` or `none` they do nothing. Remove them, or use `exporter: otlp`
    (the `OTEL_TRACES_EXPORTER` environment variable can still choose another at run
    time).""", warning=True)
TELEMETRY_HEADER_SECRET = _code(
    "AS267", "telemetry-header-secret", "An exporter header with a key written in the spec", """
    A `telemetry.headers` value that carries a credential (`authorization`, an API key, a
    token) is written in the spec, so it is in the project's history, in the generated
    package and in every copy of the file. Write it as `${env.NAME}`: it is read when the app
    runs, and never written to generated files or printed.""", warning=True)
BUDGET_PRICE_UNKNOWN = _code(
    "AS268", "budget-price-unknown", "A cost budget with a model whose price is unknown", """
    `budget.run.cost` and `budget.job.cost` are kept from each model call's price: a
    model's `price:` (US dollars per million input, output and cached tokens), or
    agentspec's dated table of Gemini prices. A model neither knows (another provider, a
    preview, a LiteLLM model) has no known cost, and agentspec never guesses one: give the
    model definition a `price:`, or budget `tokens` instead.""")
PRICE_CONFLICT = _code(
    "AS269", "price-conflict", "One model id with two different prices", """
    A call is priced by its model id, so every model definition with the same `id` must
    give the same `price:` (or only one of them a price).""")
INVALID_SESSIONS_URL = _code("AS270", "invalid-sessions-url",
    "A `sessions` value that is not a session store URL", """
    `sessions` names the conversation store that `agentspec run`, `agentspec worker` and
    ADK front ends (`adk api_server --session_service_uri`) share: a URL one of ADK's session
    services takes, `scheme://...`: `sqlite:///path` (relative to the spec),
    `postgresql://user@host/db`, `mysql://...`, `agentengine://...` or `memory://`.""")
SESSIONS_NOT_SHARED = _code("AS271", "sessions-not-shared",
    "Jobs that resume their parent in a conversation no worker can reach", """
    With `jobs.on_done: resume`, the worker (another process, perhaps another machine) runs
    the parent's turn in the conversation the job came from, so the conversations must be
    kept where both reach them. `memory://` keeps them inside one process. Name a shared
    store (`sqlite:///.agentspec/sessions.db` on one machine, `postgresql://...` for many),
    or leave `sessions` out (an SQLite file beside the spec).""")
RESUME_ROOT_NOT_LLM = _code("AS272", "resume-root-not-llm",
    "Jobs that resume a root agent that cannot take a turn without a message", """
    `jobs.on_done: resume` runs the root agent for one turn with no user message, so it can
    act on the job that finished. ADK runs an LLM root that way (it reads the delivered
    job from the conversation), but a workflow root (sequential, parallel, loop, router,
    planner) starts only from a user's message. Make the root an LLM agent that delegates
    to the workflow, or use `on_done: wait` (the job is delivered on the next turn).""")
PASSWORD_IN_URL = _code("AS273", "password-in-url",
    "A store URL with a password written in the spec", """
    The password of a `sessions` or `jobs.store` URL is written in the spec, so it is in the
    project's history, in `diff` output and in every copy of the file. Write it as
    `${env.NAME}` (read when the app runs, never written to generated files or printed).""",
    warning=True)
MODEL_URL_INVALID = _code(
    "AS274", "model-url-invalid", "A model `base_url` that is no model server's URL", """
    `base_url` is where a LiteLLM model's requests, with the conversation and its key, are
    sent: an `http://` or `https://` URL with a host. Other schemes (`file://`, `gopher://`)
    and link-local or cloud metadata addresses (`169.254.169.254`, `fe80::1`,
    `metadata.google.internal`, in any spelling), where a machine's own credentials are
    served, are refused. A URL given whole by `${env.NAME}` is the environment's.""")
CONVERSATION_FILES_EXECUTE = _code(
    "AS275", "conversation-files-execute",
    "Per-user large tool results on a backend whose commands read every user's", """
    Large tool results are saved under `/large_tool_results/<user>/`, and one user's file
    tools cannot reach another user's folder (`conversation_files: private`, the default). A
    command run by `execute` is not confined that way: it reads whatever the backend's root
    holds, other users' results included. Keep results on a backend without `execute`, or
    set `conversation_files: shared` on the backend to say that users may read each other's
    (a single-user app, say).""", info=True)

BUDGET_WITHOUT_JOBS = _code(
    "AS276", "budget-without-jobs", "A `budget.job` in a spec that runs no background job", """
    `budget.job` limits what each background job (an agent with `execution_mode: offline`)
    may spend. No agent of this spec runs as a job, so the limit never applies: remove it,
    or put it under `budget.run`.""", warning=True)

HISTORY_NEEDS_FILES = _code(
    "AS280", "history-needs-files",
    "`summarization.history` without file tools on the root agent", """
    `summarization.history` is a directory of the root agent's file tools: the events each
    summary replaces are written there, one Markdown file per conversation, so the agent can
    read them back with `read_file`. The root agent must be an LLM agent with `filesystem`
    (and a model, or `summarization.model`, to summarize).""")
HISTORY_NOT_ON_DISK = _code(
    "AS281", "history-not-on-disk",
    "`summarization.history` on a backend that is no directory", """
    The history is written outside any tool call, between model calls, so it must land on a
    `filesystem` or `shell` backend (a `composite` route to one is fine). A `state` backend
    keeps files in session state, which only changes through a tool call or an event; a
    `store` backend keeps them in a database table, a `sandbox` in a root its commands change.""")
HISTORY_PATH = _code(
    "AS282", "history-path", "A `summarization.history` that is no directory path", """
    `summarization.history` is a virtual path of the root agent's file tools, such as
    `/conversation_history`: absolute, not `/` itself, not climbing above `/` with `..`.""")

MODEL_CYCLE = _code(
    "AS283", "model-cycle", "Models that fall back to or route to each other in a circle", """
    A `{fallback: [...]}` or `{route: ..., models: [...]}` model lists named models; following
    those names must never lead back to the model itself, or a call could try it forever.""")
MODEL_MEMBER_UNKNOWN = _code(
    "AS284", "model-member-unknown",
    "A fallback chain or route that names a model not defined in `models`", """
    The models of `fallback`, a route's `models` and its `fallback` are names from the spec's
    `models` section (define an id there as `name: gemini-2.5-flash`), so each one's provider,
    endpoint and key are known.""")
ROUTE_MAP_OUTSIDE = _code(
    "AS285", "route-map-outside", "A model route's `map` names a model it does not pick among",
    """
    `route.map` turns a state value into one of the route's `models`. A name listed only in
    `fallback`, or nowhere, is never picked first: add it to `models`.""")
ENDPOINT_NEEDS_LITELLM = _code(
    "AS286", "endpoint-needs-litellm", "`base_url`, `api_key` or `args` on a non-LiteLLM model",
    """
    ADK's model registry (`provider: adk`) takes a model id only; a server address, a key
    and extra call arguments are LiteLLM's (`provider: litellm`), which also reaches
    self-hosted OpenAI-compatible servers such as vLLM and Ollama.""")
API_KEY_LITERAL = _code(
    "AS287", "api-key-literal", "An API key or other credential written into the spec", """
    `api_key` must be read from the environment (`${env.NAME}`) when the app is loaded: a key
    written in the spec would be in version control, in `diff` output and in every generated
    package. The same holds for the other places a model's credentials go: the user info and
    the secret-named query values of `base_url` (`https://user:${env.PASSWORD}@host`), and
    `args` values named like secrets (`aws_secret_access_key`, an `extra_headers` entry such
    as `Authorization` or `X-Api-Key`) or shaped like one (`Bearer ...`, `sk-...`).""")
MEMBER_SETTINGS_UNUSED = _code(
    "AS288", "member-settings-unused",
    "Generation settings of a model that is only called through a chain or route", """
    An agent whose model is a `fallback` chain or a route gets no model's `generate` or
    `thinking` settings: they differ from one member to the next. Put them on the agent
    (`generate:`, `thinking:`) instead.""", warning=True)
MODEL_NESTING = _code(
    "AS289", "model-nesting-too-deep", "Fallback chains and routes nested too deeply", """
    A chain or route may name other chains and routes, at most 10 levels deep: each level is
    one more model object per call, and the build follows them one inside the other.""")
NESTED_BACKEND_ROOT = _code(
    "AS290", "nested-backend-root", "A backend root inside a sandbox's root", """
    A `sandbox` backend's commands can replace any directory under its root with a symbolic
    link, to `/` say. Another backend whose root lies inside it (a second sandbox, a
    filesystem or shell backend) would then have the link's target as its root: the host's
    `/`, read-write. The run time refuses a root reached through a link, so the other
    backend stops working; give it a directory beside the sandbox's root instead. Roots
    inside a `filesystem` backend's root are fine (its file tools never make links), and
    two backends may share one root.""")
SANDBOX_HOLDS_PROJECT = _code(
    "AS291", "sandbox-holds-project", "A sandbox root that holds the project's own files", """
    The sandbox's root (its commands read and write it all) holds a file the host loads and
    runs outside the sandbox: a spec file, a Python module the spec names, the package
    `agentspec build` writes, an SQLite job or session store, or the git repository (whose
    hooks run on the next commit). A command could change it, and the next load would run
    the change unsandboxed. Give the sandbox a directory of its own, such as
    `./workspace`; if its commands really must change the project, set
    `allow_project_files: true` on the backend (`diff` reports that as a high risk).""")
BACKEND_PATH_LINK = _code(
    "AS292", "backend-path-link", "A backend root or sandbox mount that runs through a link",
    """
    At run time a backend's root and a sandbox mount's source are opened one name at a time
    without following symbolic links (a link on the way might have been swapped in by a
    sandboxed command), so a path written through a link does not work. The spec's own
    directory may be reached through links; the part of the path the spec writes may not.
    Write the directory's real path, or replace the link with the directory.""")
REMOTE_SOURCE = _code(
    "AS297", "remote-source", "A remote agent without one usable agent card", """
    A `kind: remote` agent names the A2A agent it calls by exactly one of `url` (the URL of
    its agent card, `http://` or `https://` with a host; a base URL is read at
    `/.well-known/agent-card.json`) and `card` (an agent card file in the project). A header
    value that holds a secret is written as `${env.X}`, read when the agent is built.""")
REMOTE_UNREACHABLE = _code(
    "AS298", "remote-unreachable", "A remote agent whose card cannot be read (`--online`)", """
    `agentspec validate --online` fetches each remote agent's card, with its headers and
    timeout: the server did not answer, answered with an error, or answered with something
    that is not an A2A agent card (no `name`, no interface to call). Start the remote agent,
    or fix the URL; without `--online`, validate does not touch the network.""")

# 3xx: resolution (imports, vars, env, overlays, extends)
IMPORT_NOT_FOUND = _code("AS301", "import-not-found", "An imported file that does not exist", """
    `imports` entries are paths relative to the importing file.""")
IMPORT_CYCLE = _code("AS302", "import-cycle", "Files that import each other in a circle", """
    A file imports itself through a chain of `imports`. Move what both need into a third file
    that imports neither.""")
IMPORT_IGNORED_KEY = _code(
    "AS303", "import-ignored-key", "A top-level key that an imported file cannot set", """
    Only `models`, `tools`, `backends`, `agents` (and its own `imports`) of an imported file
    join the importing spec. Other top-level keys (`root`, `defaults`, `summarization`, ...)
    belong in the main spec; this one is ignored.""", warning=True)
UNKNOWN_VAR = _code("AS304", "unknown-var", "`${vars.x}` names a variable that is not defined", """
    `${vars.NAME}` takes NAME from the top-level `vars` mapping.""")
ENV_UNSET = _code("AS305", "env-unset", "`${env.X}` names an unset environment variable", """
    The variable is not set and has no default. `validate` reports this as a warning, because
    secrets are often absent where specs are checked; `build` and `run` refuse it. Set the
    variable or write `${env.X:-default}`.""", warning=True)
BAD_INTERPOLATION = _code("AS306", "bad-interpolation", "A `${...}` that agentspec cannot read", """
    Interpolations are `${vars.NAME}`, `${env.NAME}` and `${env.NAME:-default}`. Write `$${`
    for a literal `${`.""")
UNKNOWN_ENVIRONMENT = _code(
    "AS307", "unknown-environment", "`--env` names an environment the spec does not define", """
    `--env NAME` selects an overlay from the top-level `environments` mapping.""")
EXTENDS_CYCLE = _code("AS308", "extends-cycle", "Agents that extend each other in a circle", """
    `extends` copies another agent's fields; a chain of `extends` must not come back to the
    agent it started from.""")
VAR_CYCLE = _code("AS309", "var-cycle", "Variables that refer to each other in a circle", """
    A `vars` value may use other variables, but not itself through a chain of references.""")
OVERLAY_KEY = _code("AS310", "overlay-key",
    "An environment overlay sets a key it may not change", """
    Overlays are deep-merged over the spec but cannot change `agentspec`, `imports` or
    `environments`.""")
VAR_EXPANSION = _code("AS311", "var-expansion", "Variables expand too far", """
    Variables may use other variables, so a small file can expand enormously (nine levels of
    a variable used ten times is a billion characters). agentspec stops once substituting
    variables would add more than 1,000,000 characters to the spec, and leaves the value
    unexpanded.""")
TEMPORAL_ADDRESS = _code("AS312", "temporal-address",
    "A `temporal://` job store URL whose server or namespace agentspec cannot read", """
    A Temporal job store is `temporal://HOST:PORT/NAMESPACE?task_queue=QUEUE`: the
    frontend's host and port (both required) and the namespace the jobs' workflows live in.
    The URL takes no user or password.""")
TEMPORAL_TASK_QUEUE = _code("AS313", "temporal-task-queue",
    "A `temporal://` job store URL without a usable task queue", """
    `?task_queue=NAME` names the queue this spec's workers poll; it is required, so two specs
    never share a queue by accident. The other parameters are `timeout` (seconds, 10 by
    default: how long a connection or a request to the server may take before agentspec
    gives up with an error naming the server) and `heartbeat` (seconds, 10 by default:
    how long a job's worker may stay silent before it is taken for dead and another worker
    goes on with the job).""")
TEMPORAL_EXTRA = _code("AS314", "temporal-extra-missing",
    "A `temporal://` job store without the `temporal` extra installed", """
    Jobs on Temporal need the Temporal SDK:
    `pip install 'agentspec-adk[temporal]'`. Without them `agentspec worker`, `agentspec jobs`
    and a run that queues a job stop with this message.""", warning=True)
PERMISSION_GLOB = _code("AS316", "permission-glob", "A backend's `read` or `write` glob that "
                        "cannot match a path", """
    `read` and `write` list globs over the backend's own paths: each starts with `/` (the
    backend's top), has no `.` or `..` step nor an empty one (`/docs/`, `/a//b`: write
    `/docs/**` for everything under `/docs`), and is well formed (`[a-z]`, not `[z-a]`;
    `{a,b}`).
    A glob that can match nothing would deny every path without saying so, so it is refused.""")
PERMISSIONS_BYPASSED = _code(
    "AS317", "permissions-bypassed", "Path permissions on a backend whose commands ignore them",
    """
    `read` and `write` bind the file tools only. A `shell` or `sandbox` backend also runs
    commands through `execute`, and a command reads and writes any file under the root. Leave
    `execute` out of the agent's `filesystem.tools` where the permissions must hold.""",
    warning=True)
STORE_DATABASE_MISSING = _code(
    "AS318", "store-database-missing", "A `store` backend with no database to keep its files",
    """
    A `type: store` backend keeps files in a database table (`agentspec_files`) so they
    outlive sessions. It uses its own `url`, else the conversation store's database
    (`sessions`). Without either, or when `sessions` keeps conversations in memory, there is
    no database that outlives the process, so the backend is refused rather than losing its
    files when the process ends. Give the backend `url: sqlite:///.agentspec/files.db` (one
    machine) or a `postgresql://` URL (many), or give the spec a `sessions` database.""")
STORE_URL_INVALID = _code(
    "AS319", "store-url-invalid", "A `store` backend on a database it cannot use", """
    A `type: store` backend keeps its files in SQLite (`sqlite:///path`, relative to the spec)
    or PostgreSQL (`postgresql://user@host/db`). Any other URL (MySQL, `agentengine://`, a
    path without `sqlite:///`) is refused; when the backend takes the `sessions` database
    and that is neither, give the backend a `url` of its own.""")
STORE_URL_PASSWORD = _code(
    "AS320", "store-url-password", "A `store` backend's database password written in the spec",
    """
    The database URL a `type: store` backend uses is written into the generated package,
    which opens it where the agent runs. A password written in the URL would be in that
    package, in the project's history and in `diff` output, so it is refused. Write it as
    `${env.NAME}` (`postgresql://agentspec:${env.PGPASSWORD}@db/agents`): it is read when the
    database is opened, never written or printed.""")
STORE_DRIVER_MISSING = _code(
    "AS321", "store-driver-missing",
    "A `store` backend on PostgreSQL without the `postgres` extra installed", """
    A `type: store` backend on PostgreSQL talks to it through psycopg:
    `pip install 'agentspec-adk[postgres]'`. Without it, every file tool call on the backend
    fails with a tool error saying so.""", warning=True)
SUMMARIZATION_OFF_UNUSED = _code(
    "AS323", "summarization-off-unused", "`summarization: false` in a spec without deep agents",
    """
    `summarization: false` turns off the summarization that `kind: deep` agents get by
    default (at 85% of their models' smallest context window). A spec without deep agents is
    not summarized unless it sets `summarization:`, so the `false` changes nothing: drop it,
    or it marks a deep agent that is no longer there.""", warning=True)
HISTORY_WRITE_DENIED = _code(
    "AS324", "history-write-denied",
    "A `summarization.history` directory the backend's `write` list denies", """
    The history of a summarized conversation is appended to
    `<history>/<user id>/<session id>.md` through the root agent's file tools, and obeys
    their backend's `write` list (and a composite's, on the way) as `write_file` does. When
    the list matches no such file, no history can be kept, so no summary is ever made (a
    summary is dropped rather than lose what it replaces): each attempt is a warning at run
    time. Let the list match `<history>/**`, or put `history` where it may be written.""")
HISTORY_WRITE_PARTLY_DENIED = _code(
    "AS325", "history-write-partly-denied",
    "A `summarization.history` directory the `write` list denies for some conversations", """
    The backend's `write` list matches the history files of some user or session ids and not
    of others (a glob naming one user's folder, a character set): the conversations whose
    file is denied are never summarized, and each attempt is a warning at run time. Let the
    list match `<history>/**`.""", warning=True)
HISTORY_READ_DENIED = _code(
    "AS326", "history-read-denied",
    "A `summarization.history` directory the backend's `read` list hides from the agents", """
    After a summary the agents are told that the conversation's full text is in its history
    file, to read with `read_file`; the backend's `read` list denies it (for every
    conversation, or some), so that read fails. Let the list match `<history>/**`.""",
    warning=True)
OPENAPI_DOCUMENT = _code("AS327", "openapi-document-invalid",
    "An OpenAPI tool's document that ADK cannot turn into tools", """
    An `openapi` tool reads an OpenAPI 3 document (YAML or JSON) from a file of the project,
    when `validate` runs and again when the app is loaded; it is never fetched. The document
    must be a mapping with `openapi: 3.x` and `paths` (each path a mapping of operations).
    ADK resolves only local references (`$ref: '#/components/...'`), so a reference to
    another file or a URL is refused: inline it, or bundle the document into one file
    first (for example with `redocly bundle`).""")
OPENAPI_OPERATION_UNKNOWN = _code("AS328", "openapi-operation-unknown",
    "An OpenAPI tool's `operations` names an operation the document does not have", """
    `operations` keeps only the operations it names, by the tool name ADK gives each one:
    its `operationId` in snake_case (`listPets` -> `list_pets`), or, without an id, its
    path and method (`/pets/{id}` GET -> `pets_id_get`). A name the document does not have
    would silently keep nothing.""")
OPENAPI_SERVER = _code("AS329", "openapi-server",
    "An OpenAPI tool without a usable server URL", """
    ADK calls each operation at the document's first `servers` URL. Without one (or with a
    relative URL such as `/v1`) the calls have no host: give the document an absolute
    `servers` URL, or set the tool's `server` (which may read `${env.X}`).""")
OPENAPI_PRIVATE_NETWORK = _code("AS330", "openapi-private-network",
    "An OpenAPI tool whose server is on a private network ADK refuses to call", """
    ADK's REST tools refuse loopback, private, link-local (cloud metadata) and `*.internal`
    / `*.local` addresses unless told otherwise, so that a model steered by what it reads
    cannot reach the internal network. A server at such an address would fail every call.
    Set `private_network: true` on the tool when the API really lives there.""")
APPROVAL_IN_JOB_WITHOUT_WAIT = _code(
    "AS335", "approval-in-job-without-wait",
    "An offline agent asks for approvals, and its job store cannot wait for one", """
    `interrupt_on` on an `execution_mode: offline` agent holds inside its background job only
    on a `temporal://` job store, where the job waits until `agentspec jobs answer` gives the
    person's decision. On SQLite, PostgreSQL and memory stores a job whose agent asks for an
    approval fails instead (the call does not run). Move the jobs to Temporal, or keep tools
    that need a person out of offline agents. A store written as `${env.X}`, or replaced by
    `AGENTSPEC_JOBS_STORE` at run time, is not judged.""", warning=True)

# 4xx: build (compiling to ADK objects and source)
NOT_YET_BUILDABLE = _code(
    "AS401", "not-yet-buildable",
    "A feature this release validates but cannot build yet", """
    The spec language covers the deep-agent harness (`kind: deep`, `todos`, `filesystem`,
    `task`, `skills`, `memory`, `interrupt_on`, `tool_result_limit`), routers, planners and
    offline jobs. Their runtimes arrive in later releases; until then `build` and `run` refuse
    them by name instead of dropping them silently. Every feature the language validates
    now builds, so this code is no longer reported.""", state=State.DEPRECATED)
MISSING_EXTRA = _code(
    "AS402", "missing-extra",
    "An optional dependency the spec needs is not installed", """
    MCP tools need the `mcp` package (`pip install 'agentspec-adk[mcp]'`), `provider: litellm`
    models need LiteLLM (`pip install 'agentspec-adk[litellm]'`), a `postgresql://` job or
    session store needs psycopg and SQLAlchemy (`pip install 'agentspec-adk[postgres]'`).""")
PYTHON_IMPORT_FAILED = _code(
    "AS403", "python-import-failed",
    "A python reference that cannot be imported or called", """
    Building imports the modules the spec names and calls factories with their `args`. The
    module raised, the attribute is missing, or the factory failed; the message has the
    error.""")
MODEL_UNRESOLVABLE = _code(
    "AS404", "model-unresolvable",
    "A model id ADK's model registry does not know", """
    Without `provider: litellm`, model ids are resolved by ADK's model registry (`gemini-*`,
    `claude-*`, `gpt-*`, ...). Use a known id, or `provider: litellm` with a LiteLLM model
    string.""")
OUTPUT_NOT_GENERATED = _code(
    "AS405", "output-not-generated",
    "The output directory holds files agentspec did not write", """
    `build` only overwrites files that carry its own `DO NOT EDIT` header. The package
    directory holds another file of the same name; move it or choose another `-o`.""")
SCHEMA_UNSUPPORTED = _code(
    "AS406", "schema-unsupported",
    "A schema mapping that ADK cannot take", """
    ADK needs a pydantic model for `input_schema`. A JSON Schema mapping is turned into one
    when it is an object whose properties are strings, numbers, booleans, lists or objects,
    each named as a pydantic field can be (no leading underscore, no name a model already has,
    such as `model_config` or `json`); anything richer needs `{python: module:Model}`. An
    `output_schema` mapping goes to ADK as it is, where `type` must be a single name (in
    `properties`, `items`, `anyOf` and `defs` too): write `anyOf` for a choice of types.
    `validate` reports these at the schema's offending key; `build` would fail on them.""")
OUTPUT_UNUSABLE = _code(
    "AS407", "output-unusable",
    "The output directory cannot be written safely", """
    `build` writes the package `<name>/` inside the output directory (`-o`, default: the
    spec's directory). It refuses when that is a file, when it cannot be created or written,
    and when the package directory or a file in it is a symbolic link or not a regular file
    (a FIFO, a device): it never writes, reads or removes anything through a link, so a link
    planted there cannot make it touch files elsewhere.""")
PYTHON_OBJECT_STDLIB = _code(
    "AS408", "python-object-stdlib",
    "A python reference that turns out to be a standard-library object", """
    A reference may not reach the standard library by any path: `mytools:os.system` where
    `mytools` imports `os`, or a name `mytools` took from `os`. `validate` follows references
    through the source of your modules (AS221) without importing them; `build` imports them
    and checks the object itself: a module, function or class of the standard library is
    refused. Wrap what you need in a function of your own module.""")
SANDBOX_UNAVAILABLE = _code(
    "AS409", "sandbox-unavailable", "A sandbox backend without bubblewrap", """
    `type: sandbox` backends run commands under bubblewrap (`bwrap`), which is not installed
    on this machine; `build` and `run` refuse the spec rather than let `execute` fail at run
    time. Install it (`apt-get install bubblewrap` on Debian and Ubuntu, `dnf install
    bubblewrap` on Fedora) where the agent runs. At run time, an agent whose machine lacks it
    gets the same message from `execute` instead of a result.""")
CALLBACK_SIGNATURE = _code(
    "AS415", "callback-signature",
    "A callback that cannot take the arguments ADK calls it with", """
    ADK calls each callback with keyword arguments: `before_agent` and `after_agent` with
    `callback_context`; `before_model` with `callback_context, llm_request`; `after_model`
    with `callback_context, llm_response`; `on_model_error` with `callback_context,
    llm_request, error`; `before_tool` with `tool, args, tool_context`; `after_tool` with
    `tool, args, tool_context, tool_response`; `on_tool_error` with `tool, args,
    tool_context, error` (when the names do not fit, the same values by position). `build`
    imports the callback and refuses one whose parameters fit neither way, which would
    otherwise fail only when it first runs. The message gives the function's file and
    line; the position is the spec entry that names it.""")
BUNDLE_REFUSED = _code(
    "AS425", "bundle-refused",
    "A file a bundle will not hold", """
    `build --bundle` copies the spec's modules and the files its agents read into the package,
    so the package runs wherever it is copied. It holds only the project's own files, and
    refuses what it cannot copy safely: a path outside the project (`outside_project` lets a
    spec read it in place, which a deployed copy cannot), a symbolic link or a FIFO inside a
    copied directory (the bundle neither follows links nor opens anything but regular files),
    a file with several names (a hard link, whose other name may lie outside the project),
    an environment or key file the spec names (`.env`, `*.pem`, `token.json`, ...) or one
    whose content looks like a secret (a private key block, a service-account key, a token
    of a known shape), and a conversation history or evicted tool results in a backend
    root. Inside copied directories such files, hidden entries, caches and virtual
    environments are left out, and so is the data in a backend root (the agents' files,
    not the app's): `--include PATH` ships a starting file of a root, or a file you have
    checked that the secret checks leave out. `build` lists what it left out.""")


# 5xx: diff (what a spec change changes; `risk` is the change's risk class)
def _change(code: str, name: str, category: Category, risk: str, summary: str,
            explanation: str) -> Code:
    return _code(code, name, summary, explanation, risk=risk, category=category)


SECURITY, BEHAVIOUR, OPERATIONS, COSMETIC = Category


AGENT_ADDED = _change("AS501", "agent-added", BEHAVIOUR, "medium", "A new agent runs", """
    The new version runs an agent the old one did not. What it can do is reported as
    gained, each with its own high-risk rule: its tools (AS506, AS512), callbacks (AS534),
    models' servers (AS560), an editable memory file (AS548), and what its file tools and
    commands reach (hard links AS515, shared conversation files AS580, a sandbox's network
    AS572, mounts and sockets AS574, the project's files AS570).""")
AGENT_REMOVED = _change("AS502", "agent-removed", BEHAVIOUR, "low", "An agent no longer runs", """
    The old version ran an agent the new one does not: what it could do is gone.""")
AGENT_RENAMED = _change("AS503", "agent-renamed", COSMETIC, "low",
                        "An agent runs under a new name", """
    An agent removed and one added look the same (kind, instruction, description, tools): it
    was renamed. Its other changes are reported under the new name.""")
KIND_CHANGED = _change("AS504", "kind-changed", BEHAVIOUR, "medium", "An agent's kind changed", """
    The agent runs as another kind (`llm` became `deep`, a workflow became a router, ...):
    how it runs changed as a whole.""")
MODEL_CHANGED = _change("AS505", "model-changed", BEHAVIOUR, "medium",
                        "An agent's model changed", """
    The model id or provider an agent runs on changed (directly or through a named model or
    an environment), or that of a member of its fallback chain or route: answers, cost and
    latency change. An edit to a model under `models` is one change at its definition,
    naming every agent that reaches it.""")
TOOL_ADDED = _change("AS506", "tool-added", SECURITY, "high", "An agent gains a tool", """
    The agent can do something it could not: a tool, an agent called as a tool, the file
    tools, todos or `task`. A new capability is what a reviewer must look at first.""")
TOOL_REMOVED = _change("AS507", "tool-removed", SECURITY, "low", "An agent loses a tool", """
    A capability is gone.""")
TOOL_CHANGED = _change("AS508", "tool-changed", SECURITY, "high", "A tool runs other code", """
    The same tool name now runs other code: another python object or other `args`, another
    MCP server or its settings (command, URL, environment, headers, filter, prefix), another
    agent. Reported at the tool's definition.""")
APPROVAL_DROPPED = _change("AS509", "approval-dropped", SECURITY, "high",
                           "A tool no longer waits for approval", """
    A person used to approve each call of the tool (`interrupt_on`); now it runs without.""")
APPROVAL_ADDED = _change("AS510", "approval-added", SECURITY, "low",
                         "A tool now waits for approval", """
    Each call of the tool now waits for a person.""")
APPROVAL_CHANGED = _change("AS511", "approval-changed", SECURITY,
                           "medium when a decision is gained, else low",
                           "The answers a person may give changed", """
    The decisions of an approval changed: gaining one (`edit`, `approve`) widens what the
    call may become.""")
EXECUTE_GAINED = _change("AS512", "execute-gained", SECURITY, "high",
                         "An agent can run shell commands", """
    The agent's backend now runs commands (`execute`).""")
EXECUTE_LOST = _change("AS513", "execute-lost", SECURITY, "low",
                       "An agent can no longer run shell commands", """
    The `execute` tool is gone.""")
BACKEND_CHANGED = _change("AS514", "backend-changed", SECURITY,
                          "medium, high when path permissions widen, low when they narrow",
                          "The file tools work over another backend", """
    Another backend, or the same one set up differently (its root, environment or routes):
    the files the agent reads and writes are others. A backend's path permissions (`read`,
    `write`) that now let the file tools reach more paths (a list dropped, a glob added) are
    high risk; fewer paths (a list added, a glob dropped) low.""")
HARD_LINKS_ALLOWED = _change("AS515", "hard-links-allowed", SECURITY, "high",
                             "A backend now reads hard-linked files", """
    `hard_links: allow`: a file with several names may be reached through one inside the
    root while its other name lies outside it.""")
HARD_LINKS_REFUSED = _change("AS516", "hard-links-refused", SECURITY, "low",
                             "A backend no longer reads hard-linked files", """
    `hard_links: allow` was removed.""")
INSTRUCTION_CHANGED = _change("AS517", "instruction-changed", BEHAVIOUR, "medium",
                              "An agent's instruction changed", """
    The instruction's text changed (in the spec or its instruction file); the unified diff is
    shown, except for a file outside the project.""")
LIMIT_CHANGED = _change("AS518", "limit-changed", OPERATIONS,
                        "medium when raised, low when lowered",
                        "A limit changed", """
    `max_iterations`, `tool_result_limit`, a planner's `max_depth` / `max_subtasks`, a
    backend's timeout or output size, a sandbox's `max_processes` / `max_file_bytes`, the job
    store's attempts and lease: a raised limit lets more happen.""")
EXECUTION_MODE_CHANGED = _change("AS519", "execution-mode-changed", OPERATIONS, "medium",
                                 "An agent runs offline or in real time", """
    Delegating to the agent now queues a background job, or no longer does.""")
SUB_AGENTS_CHANGED = _change("AS520", "sub-agents-changed", BEHAVIOUR, "medium",
                             "The agents an agent can transfer to changed", """
    An LLM agent's chat sub-agents (or a workflow's children) changed.""")
MEMORY_CHANGED = _change("AS521", "memory-changed", BEHAVIOUR, "medium", "Memory files changed", """
    The AGENTS.md-style files loaded into the agent's instruction changed.""")
SKILLS_CHANGED = _change("AS522", "skills-changed", BEHAVIOUR, "medium", "Skills changed", """
    The skill directories the agent can load changed.""")
OUTPUT_SCHEMA_CHANGED = _change("AS523", "output-schema-changed", BEHAVIOUR, "medium",
                                "The output schema changed", """
    What the agent must answer with changed.""")
INPUT_SCHEMA_CHANGED = _change("AS524", "input-schema-changed", BEHAVIOUR, "medium",
                               "The input schema changed", """
    What a caller must give the agent (as a tool) changed.""")
OUTPUT_KEY_CHANGED = _change("AS525", "output-key-changed", BEHAVIOUR, "medium",
                             "The output key changed", """
    The session state key the agent's answer is stored under changed: agents reading it
    see something else.""")
ROUTE_CHANGED = _change("AS526", "route-changed", BEHAVIOUR, "medium",
                        "A router's route changed", """
    How a router picks its child changed (state key, map, python function, model, default or
    fallback).""")
STATIC_INSTRUCTION_CHANGED = _change("AS527", "static-instruction-changed", BEHAVIOUR, "medium",
                                     "The static instruction changed", """
    The cached, literal part of the instruction changed.""")
TOOL_ERRORS_CHANGED = _change("AS528", "tool-errors-changed", BEHAVIOUR, "medium",
                              "What a tool's error does changed", """
    `tool_errors`: an error raised by a tool is returned to the model, or fails the run.""")
OUTSIDE_PROJECT_WIDENED = _change("AS529", "outside-project-widened", SECURITY, "high",
                                  "The spec may name more paths outside the project", """
    `outside_project` gained a directory: the spec may now read or write files there.""")
OUTSIDE_PROJECT_NARROWED = _change("AS530", "outside-project-narrowed", SECURITY, "low",
                                   "The spec may name fewer paths outside the project", """
    `outside_project` lost a directory.""")
STATE_ADDED = _change("AS531", "state-added", BEHAVIOUR, "medium",
                      "Sessions start with a new key", """
    The initial session state has a new key. Its `${env.X}` are shown as written, never
    read.""")
STATE_CHANGED = _change("AS532", "state-changed", BEHAVIOUR, "medium",
                        "Sessions start with another value", """
    A key of the initial session state has another value.""")
STATE_REMOVED = _change("AS533", "state-removed", BEHAVIOUR, "medium",
                        "Sessions no longer start with a key", """
    A key of the initial session state is gone: instructions naming it fail at run time.""")
CALLBACK_ADDED = _change("AS534", "callback-added", SECURITY, "high",
                         "An agent gains a callback", """
    A callback runs on every model or tool call (or agent run) and can change, block or
    allow it: callbacks are where guards live, so any change to one is high risk.""")
CALLBACK_REMOVED = _change("AS535", "callback-removed", SECURITY, "high",
                           "An agent loses a callback", """
    A callback is gone: if it was a guard (a `before_tool` check, a filter), what it
    refused is now allowed.""")
CALLBACK_CHANGED = _change("AS536", "callback-changed", SECURITY, "high",
                           "A callback runs other code", """
    The same hook now runs other functions (another reference, another order, other
    `args`): a guard swapped for one that allows everything looks like this.""")
PLUGIN_ADDED = _change("AS537", "plugin-added", SECURITY, "high", "The app gains a plugin", """
    A plugin sees and can change every agent's model and tool calls.""")
PLUGIN_REMOVED = _change("AS538", "plugin-removed", SECURITY, "high", "The app loses a plugin", """
    A plugin is gone; if it guarded or logged calls, that no longer happens.""")
PLUGIN_CHANGED = _change("AS539", "plugin-changed", SECURITY, "high",
                         "A plugin is set up differently", """
    A plugin's `args` (or the directory its module is found in) changed.""")
GENERATE_CHANGED = _change("AS540", "generate-changed", BEHAVIOUR, "medium",
                           "Generation settings changed", """
    `generate` (temperature, top_p, max_output_tokens, ...) of the agent or of its named
    model changed: answers become more or less random, longer or shorter.""")
THINKING_CHANGED = _change("AS541", "thinking-changed", BEHAVIOUR, "medium",
                           "Thinking settings changed", """
    The model's thinking budget or whether it shows its thoughts changed.""")
DESCRIPTION_CHANGED = _change("AS542", "description-changed", BEHAVIOUR, "medium",
                              "An agent's description changed", """
    A parent model routes on its sub-agents' descriptions, and a caller reads a tool
    agent's: rewording one changes which agent gets the work.""")
INCLUDE_CONTENTS_CHANGED = _change("AS543", "include-contents-changed", BEHAVIOUR, "medium",
                                   "What history an agent sees changed", """
    `include_contents: none` runs the agent without the conversation so far.""")
TRANSFER_CHANGED = _change("AS544", "transfer-changed", BEHAVIOUR, "medium",
                           "Where an agent may transfer changed", """
    `disallow_transfer_to_parent` / `disallow_transfer_to_peers`: the agent may now (or no
    longer) hand the conversation to its parent or siblings.""")
GLOBAL_INSTRUCTION_CHANGED = _change("AS545", "global-instruction-changed", BEHAVIOUR, "medium",
                                     "The global instruction changed", """
    `global_instruction` is prepended to every agent's instruction: a change reaches them
    all. Reported under `(spec)` with its unified diff.""")
PLANNER_CHANGED = _change("AS546", "planner-changed", BEHAVIOUR, "medium",
                          "An agent's ADK planner changed", """
    `planner` (`plan_react`, `builtin`): how the model plans before it acts.""")
PLANNER_ROLE_CHANGED = _change("AS547", "planner-role-changed", BEHAVIOUR, "medium",
                               "A planner's role changed", """
    The model, instruction or model settings of a recursive planner's planner, workers or
    synthesizer changed.""")
MEMORY_EDIT_CHANGED = _change("AS548", "memory-edit-changed", SECURITY,
                              "high when gained, low when lost",
                              "Whether an agent can edit its memory changed", """
    A memory file the agent can now rewrite through the file tools persists into every
    later run: what one run writes, the next one obeys.""")
SKILL_DISCOVERY_CHANGED = _change("AS549", "skill-discovery-changed", BEHAVIOUR, "medium",
                                  "How skills are offered changed", """
    `lazy` lists skills and loads one on demand; `eager` puts them all in the
    instruction.""")
TASK_AGENTS_CHANGED = _change("AS550", "task-agents-changed", BEHAVIOUR, "medium",
                              "The agents `task` can start changed", """
    The subagent types the `task` tool offers, or the agent one of them runs.""")
SUMMARIZATION_CHANGED = _change("AS551", "summarization-changed", BEHAVIOUR, "medium",
                                "Conversation compaction changed", """
    `summarization`: when the conversation is compacted, how much is kept, and the model
    that summarizes.""")
JOBS_STORE_CHANGED = _change("AS552", "jobs-store-changed", OPERATIONS, "medium",
                             "The job store changed", """
    Background jobs are kept in another store (or now in one, or no longer): queued jobs of
    the old store are not seen.""")
JOBS_WEBHOOK_CHANGED = _change("AS553", "jobs-webhook-changed", SECURITY,
                               "high when set or changed, low when removed",
                               "Where job results are posted changed", """
    A finished job's result is posted to `notify.webhook`: a new URL (or new headers) sends
    the results somewhere else. Header values are never shown.""")
APP_RENAMED = _change("AS554", "app-renamed", OPERATIONS, "medium", "The app's name changed", """
    Sessions, memory and artifacts are stored under the app's name: the renamed app does not
    see those of the old one, and the generated package has another name.""")
PROMPTS_CHANGED = _change("AS555", "prompts-changed", BEHAVIOUR, "medium",
                          "A harness section of the system prompt changed", """
    An agent switched a section of the system prompt the harness writes (`prompts:`) off or
    on, or replaced its text: the model is told otherwise how to use its files, todos, `task`,
    skills or memory.""")
STORE_DATABASE_CHANGED = _change("AS556", "store-database-changed", SECURITY, "high",
                                 "A `store` backend keeps its files in another database", """
    A `type: store` backend now opens another database (its `url`, or the `sessions`
    database it takes), or another namespace in it (the app's name is part of it): the files
    earlier sessions wrote are not there, and the new database's files, written by whoever
    else uses it, are what the agent reads and acts on. The URLs are shown without their
    passwords.""")
STORE_SCOPE_CHANGED = _change("AS557", "store-scope-changed", SECURITY, "high",
                              "A `store` backend shares its files otherwise", """
    `scope: app` shows every user's file tools one set of files, so what one user writes
    another reads (and follows, for memory and skills); `scope: user` keeps each user's apart.
    Either way the files written before are no longer where the agent looks.""")
SUMMARIZATION_TURNED_OFF = _change(
    "AS558", "summarization-turned-off", OPERATIONS, "high",
    "Conversations are no longer summarized", """
    The old version compacted long conversations (its own `summarization:`, or the default
    of `kind: deep` agents at 85% of the context window); the new one does not
    (`summarization: false`, or the setting or the deep agents removed). Every request then
    carries the whole conversation: each model call costs more than the last, and once a
    conversation outgrows the model's context window the provider refuses the request and
    the turn fails. Deep agents' conversations are long by design (many tool calls a turn),
    so this is rated high: check that the conversations this app holds stay short, or that
    something else bounds them.""")
MODEL_ENDPOINT_CHANGED = _change("AS560", "model-endpoint-changed", SECURITY, "high",
                                 "A model sends requests to another server", """
    A model (or a member of its fallback chain or route) now has a `base_url` the old
    version did not call: the conversation, and the model's API key, go to that server.""")
MODEL_ROUTING_CHANGED = _change("AS561", "model-routing-changed", BEHAVIOUR, "medium",
                                "A model's fallback chain or route changed", """
    A `{fallback: [...]}` model tries its models in another order or other ones, or a
    route picks differently (another state key, map, function, choices or fallback): which
    model answers a call changes.""")
MODEL_SETTINGS_CHANGED = _change("AS562", "model-settings-changed", BEHAVIOUR, "medium",
                                 "A model is called with other settings", """
    The same model, or a member of its chain or route, is called with another key
    (`api_key`), other call arguments (`args`) or another `base_url` it already called:
    answers, cost and which account pays can change. Key values are never shown.""")
SUMMARIZATION_HISTORY_CHANGED = _change("AS563", "summarization-history-changed", SECURITY,
                                        "medium",
                                        "Where summarized conversations are kept changed", """
    `summarization.history`: the text of the events each summary replaces is now written
    to files under another directory of the root agent's file tools (or now, or no longer),
    where the agent and anyone with the backend's directory can read it.""")
CONTEXT_CACHE_CHANGED = _change("AS564", "context-cache-changed", OPERATIONS, "medium",
                                "The app's context caching changed", """
    `context_cache` was set, removed or changed: whether the model's API caches each
    agent's request prefix, for how long (storage is billed per hour) and how often it is
    refreshed. Answers do not change; cost and latency do.""")
CODE_EXECUTOR_CHANGED = _change(
    "AS565", "code-executor-changed", SECURITY,
    "high when code runs somewhere new or gains the network, medium for other settings, "
    "low when it no longer runs",
    "Code the model writes runs somewhere else, or now runs", """
    An agent's `code_executor` was added or changed: code blocks in the model's answers
    now run (in Gemini's own sandbox with `builtin`, or through a `type: sandbox`
    backend, whose files and limits they get), or run somewhere else (high). Whoever can
    steer the model (a user, a fetched page, a tool result) can steer that code. A change
    to the settings of the sandbox that runs it is medium, high when it gains the network.
    Removing the executor is low: the model's code blocks are then plain text.""")
TOOL_AUTH_CHANGED = _change("AS566", "tool-auth-changed", SECURITY, "high",
                            "A tool authenticates differently", """
    A tool the agent keeps gained, lost or changed its `auth`: another key or token (read
    from another environment variable), another header, another OAuth client or sign-in
    endpoints. Whose account the tool acts as, and what a person is asked to allow, change
    with it. Secret values are never shown, only the variables they are read from.""")
OPENAPI_SERVER_CHANGED = _change("AS567", "openapi-server-changed", SECURITY, "high",
                                 "An OpenAPI tool calls another server", """
    An OpenAPI tool the agent keeps now sends its requests (and its credential) elsewhere:
    its `server` changed, or `private_network` now lets it reach loopback, private and
    link-local addresses (or no longer does). Where the calls go decides who sees the
    credential and the data the model sends.""")
OPENAPI_OPERATIONS_CHANGED = _change(
    "AS568", "openapi-operations-changed", SECURITY, "high when gained, low when lost",
    "An OpenAPI tool offers other operations", """
    The operations an OpenAPI tool gives the model changed: its `operations` filter, or the
    document itself now describes other operations. A gained operation is a new capability
    (high); a lost one is low.""")
SANDBOX_DROPPED = _change("AS570", "sandbox-dropped", SECURITY, "high",
                          "An agent's commands no longer run in a sandbox", """
    The backend that runs the agent's commands (`execute`) was a `type: sandbox` backend and
    is not any more: commands now reach every file, process and network the agent's user
    can. Also reported when the sandbox gains `allow_project_files: true`: its commands may
    then change the spec, its Python modules or the built package, which the host runs
    unsandboxed.""")
SANDBOX_GAINED = _change("AS571", "sandbox-gained", SECURITY, "low",
                         "An agent's commands now run in a sandbox", """
    The agent's commands (`execute`) now run under a `type: sandbox` backend: they see only
    its root, the system's read-only directories and its mounts. Also reported when the
    sandbox drops `allow_project_files: true`.""")
SANDBOX_NETWORK_GAINED = _change("AS572", "sandbox-network-gained", SECURITY, "high",
                                 "Sandboxed commands can now reach the network", """
    `network: true` on the sandbox that runs the agent's commands: they can reach the internet
    and every service on the host's loopback interface (databases, metadata endpoints, the
    agent's own servers).""")
SANDBOX_NETWORK_LOST = _change("AS573", "sandbox-network-lost", SECURITY, "low",
                               "Sandboxed commands no longer reach the network", """
    The sandbox that runs the agent's commands no longer has `network: true`.""")
SANDBOX_MOUNT_ADDED = _change("AS574", "sandbox-mount-added", SECURITY, "high",
                              "Sandboxed commands read another host directory", """
    A `mounts` entry of the sandbox that runs the agent's commands is new, or binds another
    host directory at the same target: the commands can read what that directory holds. Also
    `allow_sockets` turned on: the commands can talk to the host processes whose Unix sockets
    or FIFOs lie in the mounts.""")
SANDBOX_MOUNT_REMOVED = _change("AS575", "sandbox-mount-removed", SECURITY, "low",
                                "Sandboxed commands no longer see a host directory", """
    A `mounts` entry of the sandbox that runs the agent's commands is gone, or
    `allow_sockets` turned off.""")
ON_DONE_CHANGED = _change("AS576", "on-done-changed", OPERATIONS, "medium",
                          "What a finished job does changed", """
    `jobs.on_done`: with `resume` a worker delivers a finished job at once and runs the
    parent for a turn with no user message; with `wait` the job waits for the
    conversation's next turn.""")
SESSIONS_CHANGED = _change("AS577", "sessions-changed", OPERATIONS, "medium",
                           "Where conversations are kept changed", """
    `sessions` (or its default with `jobs.on_done: resume`): conversations of the old store
    are not seen, and front ends and workers must use the new one. A password in the URL is
    never shown.""")
SPEC_ADDED = _change("AS578", "spec-added", BEHAVIOUR, "medium",
                     "A spec that did not exist runs", """
    `diff --base REV SPEC` (or `REV:path`) on a spec the revision does not have: every agent
    it runs is reported as added (AS501), with what each can do as gained (its tools,
    callbacks, models' servers and what its file tools and commands reach: see AS501), its
    plugins as added (AS537), its `outside_project` entries (AS529) and a job webhook
    (AS553), so `--fail-on` judges a new spec by what it can do.""")
SPEC_REMOVED = _change("AS579", "spec-removed", BEHAVIOUR, "low", "A spec no longer exists", """
    The revision has the spec and the working tree does not: its agents no longer run
    (AS502).""")
CONVERSATIONS_SHARED = _change("AS580", "conversation-files-shared", SECURITY, "high",
                               "Every user's conversation files are readable by every user", """
    A backend's `conversation_files` became `shared`: the summarized histories and evicted
    tool results of every user of the agent sit where every user's file tools can list and
    read them (`private`, the default, keeps each user's in a folder only that user's tools
    reach). Turning it back to `private` is reported as a backend set up differently
    (AS514).""")

TRACING_CHANGED = _change("AS581", "tracing-changed", SECURITY,
                          "medium when spans go somewhere new, low otherwise",
                          "Where or how the app's traces are sent changed", """
    `telemetry`: the exporter, the collector's endpoint or protocol, the names of the
    headers sent with the spans (their values are never shown), the service name or the
    sampling ratio. Spans name the agents, tools and models of every run (and, with
    `record_content`, what was said), so a new destination is medium. Tracing turned off,
    a new service name or sampling ratio is low. The `OTEL_*` environment variables still
    win at run time.""")
CONTENT_RECORDING_CHANGED = _change("AS582", "content-recording-changed", SECURITY,
                                    "high when turned on, low when turned off",
                                    "Whether prompts and responses are recorded changed", """
    `telemetry.record_content: true` puts the text of every prompt, response, tool argument
    and tool result on the spans sent to the collector: personal data the users typed, and
    whatever the tools returned, leave the app for wherever the traces are kept.""")
BUDGET_CHANGED = _change("AS583", "budget-changed", OPERATIONS,
                         "medium when raised or removed, low otherwise",
                         "What a run or a job may spend changed", """
    `budget.run` or `budget.job` (`tokens`, `cost`): a raised or removed limit lets a run
    spend more before it is stopped; a lowered or new one may stop runs that used to
    finish.""")
PRICE_CHANGED = _change("AS584", "price-changed", OPERATIONS, "low",
                        "A model's price changed", """
    A model definition's `price:` (what the usage summaries and cost budgets count) was
    added, removed or changed: the same calls now cost a different amount, and a cost
    budget stops runs at another point.""")
REMOTE_TARGET_CHANGED = _change("AS595", "remote-target-changed", SECURITY, "high",
                                "A remote agent calls another server, or with other headers", """
    A `kind: remote` agent's `url`, `card` or `headers` changed: the conversation now goes to
    another service (or with other credentials), which sees everything the caller passes it
    and answers for it. Check that the new server is the one you mean to trust.""")
REMOTE_TIMEOUT_CHANGED = _change("AS596", "remote-timeout-changed", OPERATIONS,
                                 "low",
                                 "A remote agent waits a different time", """
    A remote agent's `timeout` changed: a slow remote now fails sooner, or holds the caller
    longer.""")


# 6xx: import (`agentspec import adk`): ADK Agent Config files that cannot become a spec
ADK_SCHEMA = _code("AS600", "adk-schema", "An Agent Config file ADK's own schema refuses", """
    `agentspec import adk` first checks each file against the Agent Config schema of the
    installed ADK (its `LlmAgentConfig`, `SequentialAgentConfig`, `ParallelAgentConfig`,
    `LoopAgentConfig`, `AgentToolConfig` and `McpToolsetConfig` classes), as `from_config`
    does. A file ADK would refuse is not converted: fix it so `adk run` loads it first.""")
ADK_UNREADABLE = _code("AS601", "adk-unreadable", "An Agent Config file that cannot be read", """
    The path names no file or folder, the folder has no `root_agent.yaml`, or a file is not
    a YAML mapping.""")
ADK_CONFIG_PATH = _code("AS602", "adk-config-path",
    "A `config_path` that is missing, absolute or leads outside the agent folder", """
    ADK resolves `config_path` relative to the file that names it and refuses absolute paths
    and paths that leave the referring file's folder. The importer also keeps every file
    inside the folder being imported.""")
ADK_CYCLE = _code(
    "AS603", "adk-cycle", "Agent Config files that refer to each other in a circle", """
    A file reaches itself through `config_path` references. ADK has no check for this and
    recurses until Python's stack runs out; an agent cannot contain itself. Break the circle.""")
ADK_AGENT_CLASS = _code("AS604", "adk-agent-class",
    "An `agent_class` agentspec cannot express", """
    agentspec converts `LlmAgent` (also `Agent`), `SequentialAgent`, `ParallelAgent` and
    `LoopAgent`. A custom class (a `module.Class` path) or ADK's `Workflow` graph has
    behaviour in Python that a spec cannot describe. Keep that agent in Python, or rewrite
    it with the spec's kinds (`router`, `planner`, workflows).""")
ADK_CODE_AGENT = _code("AS605", "adk-code-agent", "An agent given as Python code", """
    `sub_agents: [{code: ...}]` and `AgentTool` with `agent: {code: ...}` name an agent
    object built in Python. A spec defines its agents itself; it cannot include a Python
    agent object. Describe that agent in the spec (`agentspec import adk` can convert it if
    it has an Agent Config file), or keep the whole app in Python.""")
ADK_MODEL_CODE = _code("AS606", "adk-model-code", "A model given as Python code", """
    `model_code` names a model object built in Python (a `LiteLlm` with arguments, a custom
    `BaseLlm`). A spec names models by id: use `model: <id>`, or a `models:` entry with
    `provider: litellm`.""")
ADK_MODEL_ID = _code("AS607", "adk-model-id", "A `model` that is not a model id", """
    `model` takes a model id such as `gemini-2.5-flash` or `anthropic/claude-sonnet-4-5`.
    This value has spaces, an interpolation, or the form of a Python path (`pkg.mod.name`),
    which ADK would send to its model registry as an id and fail.""")
ADK_NAME_CLASH = _code(
    "AS608", "adk-name-clash", "Two Agent Config files with the same agent name", """
    A spec names its agents, so two different files whose agents have the same `name` would
    become one agent. Rename one of them.""")
ADK_UNKNOWN_TOOL = _code("AS609", "adk-unknown-tool", "A bare tool name ADK does not have", """
    A tool `name` without a dot is looked up in `google.adk.tools`; this one is not there, so
    ADK would fail to load the file. Use the built-in's exact name, or a dotted path to your
    own tool.""")
ADK_GENERATE_LOSS = _code("AS610", "adk-generate-loss",
    "A `generate_content_config` key the spec language does not have", """
    The spec's `generate` takes temperature, top_p, top_k, max_output_tokens,
    stop_sequences, seed, presence and frequency penalties and safety_settings, and
    `thinking` takes the thinking settings. Other `GenerateContentConfig` keys would be
    dropped: the import refuses unless `--allow-loss`, which drops them with a warning and a
    comment in the output.""")
ADK_STATIC_LOSS = _code("AS611", "adk-static-instruction-loss",
    "A `static_instruction` that is not plain text", """
    The spec's `static_instruction` is text. A `Content` or a list of parts (images, files)
    cannot be expressed: the import refuses unless `--allow-loss`, which keeps the text parts
    only, with a warning and a comment.""")
ADK_MCP_LOSS = _code(
    "AS612", "adk-mcp-loss", "An MCP toolset option the spec language does not have", """
    The spec's MCP tools take the server (stdio `command`/`args`/`env`/`cwd`, or `url` with
    `sse`/`http` transport and `headers`), `timeout`, `filter` and `prefix`. Authentication
    schemes and credentials, tool-list caching and MCP resources would be dropped: the import
    refuses unless `--allow-loss`.""")
ADK_AGENT_TOOL_LOSS = _code("AS613", "adk-agent-tool-loss",
    "An `AgentTool` option the spec language does not have", """
    `{agent: name}` in a spec's `tools` is an `AgentTool` with ADK's defaults.
    `skip_summarization: true` and `include_plugins: false` would be dropped: the import
    refuses unless `--allow-loss`.""")
ADK_TOOL_ARGS = _code("AS614", "adk-tool-args", "A tool given as code with `args`", """
    ADK builds such a tool with `Class.from_config(ToolArgsConfig(args), path)` (a tool or
    toolset class) or `factory(ToolArgsConfig(args))` (a function), while a spec's
    `{python: ..., args: ...}` calls the attribute with keyword arguments. `--write-shims`
    writes a small module (`adk_shims.py` beside the spec) that builds the tool the way ADK
    does; without it the import refuses. Argument names must be Python identifiers.""")
ADK_SECRET = _code(
    "AS615", "adk-secret",
    "A literal secret in an MCP server's `env`, `headers`, `args` or `url`", """
    The value looks like a credential: its name mentions a token, key, secret, password or
    authorization (an `env` entry, a header, any `X-Api-*` header, a command-line flag such
    as `--api-key=...` or the argument after `--token`, a query parameter of the URL), it is
    the password or lone user name of the URL, or it has a key's shape (`Bearer ...`,
    `sk-...`, `ghp_...`). A spec reads secrets from the environment, so the import writes
    `${env.NAME}` in its place and never copies the value. Set NAME in the environment that
    runs the agent.""", warning=True)
ADK_SHARED_FILE = _code(
    "AS616", "adk-shared-file", "A file used as the sub-agent of two parents", """
    ADK builds a new agent each time a file is referenced, so one file can be the sub-agent
    of two parents. A spec agent has one parent, so the second use becomes an agent that
    `extends` the first, under a new name (the transfer target's name changes with it).""",
    info=True)
ADK_OUTPUT_EXISTS = _code("AS617", "adk-output-exists", "The output file exists", """
    `agentspec import adk` never overwrites a file: choose another `-o`, remove the file, or
    pass `--force`.""")
ADK_YAML_11 = _code(
    "AS618", "adk-yaml-1-1", "A value ADK's YAML 1.1 reader reads differently", """
    ADK reads Agent Config files with PyYAML, which follows YAML 1.1: `yes`, `no`, `on` and
    `off` (any case) are booleans, `0o17` is text, `1:30` is a number of seconds, a date is a
    date. agentspec reads YAML 1.2. The import converts what ADK reads, so the spec behaves as
    the Agent Config did; quote the value in the Agent Config if that is not what you meant
    (`threshold: "OFF"`).""", warning=True)


# 7xx: scenario files (`agentspec test`, and `agentspec validate` beside a spec)
SCENARIO_COMMA_SPLIT = _code(
    "AS700", "scenario-comma-split", "A text that YAML split at a comma", """
    In a flow mapping (`{...}`) a comma ends an entry, so `{text: Sorry, the stock is gone.}`
    is the text `Sorry` and a second key `the stock is gone.` without a value. The scenario
    would run with the shortened text. Quote the text (`{text: "Sorry, the stock is
    gone."}`) or write the mapping in block style, one key per line.""")
SCENARIO_INVALID_PATTERN = _code(
    "AS701", "scenario-invalid-pattern", "An `expect.final.matches` that is no regular "
    "expression", """
    `matches` is a Python regular expression searched in the last answer; this one does not
    compile, so the scenario could never pass. Fix the expression, or use `contains` for
    plain text.""")
SCENARIO_MISSING_STATE = _code(
    "AS702", "scenario-missing-state", "A scenario without state the spec requires", """
    The spec's `state:` marks the key `required`: whoever creates a session supplies it. A
    scenario creates its session, so its `state:` must give the key a value; without it the
    run stops where an instruction reads the key. Add it to the scenario's `state:`.""")
SCENARIO_EXPECTS_NOTHING = _code(
    "AS703", "scenario-expects-nothing", "An expectation that cannot fail", """
    An expectation with nothing to check (`final: {}`, an empty `final`, `contains` or
    `matches` text, an `errors` entry naming neither an agent nor a tool) passes whatever the
    run does. Say what must hold (`final: {contains: TEXT}` or `{matches: REGEX}`; `errors:
    [{agent: NAME}]` or `[{tool: NAME}]`).""")
SCENARIO_UNKNOWN_AGENT = _code(
    "AS704", "scenario-unknown-agent", "A scenario names an agent the spec does not have", """
    `replies` scripts agents that call a model (and `summarizer`, the summarizer of
    `summarization:`); `expect.agents`, and the `agent` of `expect.errors` and `expect.jobs`,
    name agents of the spec. A name that is none of them scripts nothing or expects what can
    never happen; a misspelt name in a negative check would make a scenario that cannot
    fail. Use the agent's name as the spec spells it.""")
SCENARIO_UNKNOWN_TOOL = _code(
    "AS705", "scenario-unknown-tool", "A scenario names a tool no agent of the spec has", """
    `expect.tools`, `expect.not_tools`, `stubs` and the `tool` of `expect.errors` name tools
    by the name the model calls: a spec name, a python function's name, an MCP tool (with
    its prefix), a harness tool (`read_file`, `write_todos`, `task`, ...) or an agent called
    as a tool. A misspelt `not_tools` entry passes whatever is called, and a misspelt `stubs`
    key lets the real tool run. When the spec has tools whose names only the code knows (a
    toolset, an MCP server without `filter`), only names close to a known one are
    refused.""")


# 72x-74x: eval files (`agentspec eval`, and `agentspec validate` beside a spec)
EVAL_MISSING_REFERENCE = _code(
    "AS720", "eval-missing-reference", "A criterion that reads `reference` on a turn without "
    "one", """
    `response_match_score` and `final_response_match_v2` compare each turn's final answer
    with the turn's `reference`. A turn without one cannot be scored, so the case would fail
    whatever the agent answers. Give every turn of the case a `reference`, or take the
    criterion off the case (its `criteria:` can set another).""")
EVAL_MISSING_RUBRICS = _code(
    "AS721", "eval-missing-rubrics", "A rubric criterion on a case without `rubrics`", """
    `rubric_based_final_response_quality_v1` and `rubric_based_tool_use_quality_v1` check the
    answers (or the tool use) against the case's `rubrics`, properties written as sentences.
    A case without rubrics has nothing to check. Add `rubrics:` to the case.""")
EVAL_MISSING_JUDGE = _code(
    "AS722", "eval-missing-judge", "A judged criterion without a judge model", """
    `final_response_match_v2`, the rubric criteria and `hallucinations_v1` are scored by a
    judge model, which the eval file chooses (`judge: {model: gemini-2.5-flash}`), so a
    review knows which model graded the agent. Add `judge:` to the file.""")
EVAL_DUPLICATE_CASE = _code(
    "AS723", "eval-duplicate-case", "Two cases with one name", """
    Results, the ADK export and the `--base` comparison name cases by `name`; two cases of
    one name would be compared with each other's results. Rename one.""")
EVAL_UNKNOWN_TOOL = _code(
    "AS724", "eval-unknown-tool", "A case names a tool no agent of the spec has", """
    A turn's `tools` and a case's `stubs` name tools as the model calls them. A misspelt
    expected tool makes a case that can never pass, a misspelt stub lets the real tool run.
    When the spec has tools whose names only the code knows (a toolset, an MCP server
    without `filter`), only names close to a known one are refused.""")
EVAL_UNKNOWN_AGENT = _code(
    "AS725", "eval-unknown-agent", "A case scripts an agent the spec does not have", """
    A case's `replies` script agents that call a model, as in scenario files. A name that is
    none of them scripts nothing. Use the agent's name as the spec spells it.""")
EVAL_MISSING_STATE = _code(
    "AS726", "eval-missing-state", "A case without state the spec requires", """
    The spec's `state:` marks the key `required`: whoever creates a session supplies it. A
    case creates its session, so its `state:` must give the key a value. Add it to the
    case's `state:`.""")
EVAL_INVALID_ADK_SET = _code(
    "AS727", "eval-invalid-adk-set", "An ADK eval set that ADK's own model refuses", """
    `agentspec eval` reads ADK eval sets (`*.evalset.json`, as `adk eval` and `adk web`
    write them) with ADK's `EvalSet` model. This file breaks it at the place shown; fix it
    as ADK's documentation of eval sets says, or write it again with `adk web`.""")
