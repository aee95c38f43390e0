"""The registry of diagnostic codes: `AS` + three digits + a kebab-case name.

Grouped by stage: 0xx read/YAML, 1xx structure, 2xx semantics, 3xx resolution, 4xx build,
5xx diff. Numbers are never reused; `agentspec explain CODE` prints the explanation.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agentspec.diagnostics.model import Diagnostic, Related, Severity
from agentspec.source import Span

__all__ = ["REGISTRY", "Code", "lookup"]

REGISTRY: dict[str, Code] = {}


@dataclass(frozen=True, slots=True)
class Code:
    code: str
    name: str
    severity: Severity
    summary: str
    explanation: str

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
          warning: bool = False, info: bool = False) -> Code:
    assert code not in REGISTRY, code
    severity = Severity.INFO if info else Severity.WARNING if warning else Severity.ERROR
    entry = Code(code, name, severity, summary, " ".join(explanation.split()))
    REGISTRY[code] = entry
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
NUMBER_TOO_LARGE = _code("AS016", "number-too-large", "A number with too many digits", """
    Integers in a spec have at most 100 digits: no count, limit or size needs more, and a
    number of thousands of digits only costs time (Python refuses to convert decimal text of
    more than 4300 digits). Quote the value if it is text.""")

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
    starting with a digit; `user` is reserved by ADK for agents. The keys of `args` are
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
    `instruction`) or `python`.""")
ROUTER_MEMBER = _code("AS211", "router-member",
    "A router option that is not one of its children", """
    A router's `default`, `fallback` entries and `route.map` values must be among its
    `sub_agents`: the router runs only its own children.""")
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
    Only `shell` backends (or a `composite` whose default is a shell backend) can run commands.
    Use a shell backend or drop `execute`.""")
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
    count, and nothing outside is read. A spec that really needs a directory outside lists
    it in the top-level `outside_project`, where every reviewer sees it: `validate` notes
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
    keeps files in session state, which only changes through a tool call or an event.""")
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
    "AS287", "api-key-literal", "An API key written into the spec", """
    `api_key` must be read from the environment (`${env.NAME}`) when the app is loaded: a key
    written in the spec would be in version control and in every generated package.""")
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

# 4xx: build (compiling to ADK objects and source)
NOT_YET_BUILDABLE = _code(
    "AS401", "not-yet-buildable",
    "A feature this release validates but cannot build yet", """
    The spec language covers the deep-agent harness (`kind: deep`, `todos`, `filesystem`,
    `task`, `skills`, `memory`, `interrupt_on`, `tool_result_limit`), routers, planners and
    offline jobs. Their runtimes arrive in later releases; until then `build` and `run` refuse
    them by name instead of dropping them silently.""")
MISSING_EXTRA = _code(
    "AS402", "missing-extra",
    "An optional dependency the spec needs is not installed", """
    MCP tools need the `mcp` package (`pip install 'agentspec[mcp]'`), `provider: litellm`
    models need LiteLLM (`pip install 'agentspec[litellm]'`).""")
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
    "An input schema that cannot become a model", """
    ADK needs a pydantic model for `input_schema`. A JSON Schema mapping is turned into one
    when it is an object whose properties are strings, numbers, booleans, lists or objects;
    anything richer needs `{python: module:Model}`.""")
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
BUNDLE_REFUSED = _code(
    "AS425", "bundle-refused",
    "A file a bundle will not hold", """
    `build --bundle` copies the spec's modules and the files its agents read into the package,
    so the package runs wherever it is copied. It holds only the project's own files, and
    refuses what it cannot copy safely: a path outside the project (`outside_project` lets a
    spec read it in place, which a deployed copy cannot), a symbolic link or a FIFO inside a
    copied directory (the bundle neither follows links nor opens anything but regular files),
    a file with several names (a hard link, whose other name may lie outside the project),
    and an environment or key file the spec names (`.env`, `*.pem`, ...), which would ship a
    secret. Inside copied directories such files, hidden entries, caches and virtual
    environments are left out, and `build` lists what it left out.""")
