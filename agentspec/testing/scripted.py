"""A scripted model: each agent replays the replies a script gives it, offline.

Script format (YAML), used by `agentspec run --script`:

    messages:                 # optional: the user's turns, when no MESSAGE is given
      - Plan a weekend in Lisbon
    replies:                  # per agent, consumed in order, one per model call
      coordinator:
        - transfer: planner               # transfer_to_agent(agent_name=planner)
      planner:
        - call: get_weather               # a tool call ...
          args: {city: Lisbon}            # ... with its arguments
        - text: Sunny; pack light.        # a final answer
        - fail: Model unavailable.        # the model call raises ScriptedFailure
        - when: Porto                     # only for a request that mentions "Porto" (for
          text: Rainy.                    # agents that run in parallel); first match wins
    decisions:                # answers to approval requests (`interrupt_on`), in order
      - approve
      - {edit: {city: Porto}}             # run it with these arguments instead
      - {reject: Not today.}              # or just `reject`
"""

from __future__ import annotations

import difflib
import json
from collections.abc import AsyncGenerator, Iterable, Mapping
from typing import Any, ClassVar

from google.adk.models import LlmCapabilities
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from agentspec.runtime import adk
from agentspec.runtime.agents import walk
from agentspec.runtime.harness.approvals import Decision
from agentspec.testing.names import SUMMARIZER

__all__ = ["REPLY_KEYS", "ScriptError", "ScriptedFailure", "ScriptedModel", "install_script",
           "parse_decision", "parse_step", "reply_problem", "unused_replies"]


class ScriptError(ValueError):
    """The script is malformed or ran out of replies."""


class ScriptedFailure(RuntimeError):
    """A `fail:` reply: the model call fails, as a real one can (for fallbacks and retries)."""


#: each reply kind and the keys a reply of that kind takes
REPLY_KEYS = {"text": {"text", "when"}, "call": {"call", "args", "when"},
              "transfer": {"transfer", "when"}, "fail": {"fail", "when"}}


def reply_problem(step: Any) -> str | None:
    """What is wrong with one scripted reply (None: nothing). Scenario files are checked
    with positions (`agentspec.testing.check`); this guards `run --script` and `worker
    --script` the same way, so a misspelt key or a flow mapping's comma split is never
    silently dropped."""
    if not isinstance(step, Mapping):
        return f"a reply is a mapping, not {step!r}"
    kinds = [kind for kind in REPLY_KEYS if kind in step]
    if len(kinds) != 1:
        close = next((difflib.get_close_matches(str(k), list(REPLY_KEYS), n=1) for k in step
                      if difflib.get_close_matches(str(k), list(REPLY_KEYS), n=1)), None)
        return (f"a reply takes exactly one of `text`, `call`, `transfer` and `fail`: {step!r}"
                + (f" (did you mean `{close[0]}`?)" if close and not kinds else ""))
    keys = list(step)
    for index, key in enumerate(keys):
        if key in REPLY_KEYS[kinds[0]]:
            continue
        before = step[keys[index - 1]] if index else None
        if step[key] is None and isinstance(before, str):
            return (f"`{key}` has no value: YAML ended the text `{before}` at a comma; quote "
                    f"it: `{keys[index - 1]}: \"{before}, {key}\"`")
        close = difflib.get_close_matches(str(key), sorted(REPLY_KEYS[kinds[0]]), n=1)
        return f"a `{kinds[0]}` reply does not take `{key}`" + (
            f" (did you mean `{close[0]}`?)" if close else "")
    return None


def parse_step(agent: str, step: Any) -> types.Content:
    """One scripted reply as model content."""
    if not isinstance(step, Mapping):
        raise ScriptError(f"a reply of {agent} must be a mapping, not {step!r}")
    if "text" in step:
        part = types.Part(text=str(step["text"]))
    elif "call" in step:
        part = types.Part(function_call=types.FunctionCall(
            name=str(step["call"]), args=dict(step.get("args") or {})))
    elif "transfer" in step:
        part = types.Part(function_call=types.FunctionCall(
            name="transfer_to_agent", args={"agent_name": str(step["transfer"])}))
    else:
        raise ScriptError(f"a reply of {agent} needs `text`, `call`, `transfer` or `fail`: "
                          f"{step!r}")
    return types.Content(role="model", parts=[part])


def parse_decision(step: Any) -> Decision:
    """One scripted answer to an approval request."""
    if step in ("approve", "reject"):
        return Decision(str(step))
    if isinstance(step, Mapping) and len(step) == 1:
        kind, value = next(iter(step.items()))
        if kind == "edit" and isinstance(value, Mapping):
            return Decision("edit", args=dict(value))
        if kind == "reject" and (value is None or isinstance(value, str)):
            return Decision("reject", message=value)
        if kind == "approve" and value is None:
            return Decision("approve")
    raise ScriptError("a decision is `approve`, `reject`, `{reject: message}` or "
                      f"`{{edit: {{argument: value}}}}`, not {step!r}")


class ScriptedModel(BaseLlm):
    """Replays `replies` in order; records every request it receives."""

    #: its calls cost nothing (no service is called): usage summaries and cost budgets
    COSTS_NOTHING: ClassVar[bool] = True
    model: str = "scripted"
    agent: str = ""
    replies: list[Any] = []
    requests: list[LlmRequest] = []
    #: the script's own problems met on the way (no reply left), whatever the agents made of
    #: the error (a router falls back, an agent tool turns it into a result)
    problems: list[str] = []

    def _next_reply(self, request: LlmRequest) -> Any:
        """The first reply without `when`, or whose `when` text the request contains."""
        text: str | None = None
        for index, step in enumerate(self.replies):
            when = step.get("when") if isinstance(step, Mapping) else None
            if when is not None:
                text = _request_text(request) if text is None else text
                if str(when) not in text:
                    continue
            return self.replies.pop(index)
        problem = f"the script has no more replies for agent `{self.agent}`" + (
            " that match this request" if self.replies else "")
        self.problems.append(problem)
        raise ScriptError(problem)

    @property
    def capabilities(self) -> LlmCapabilities:
        return LlmCapabilities(output_schema_and_tools=True)

    async def generate_content_async(self, llm_request: LlmRequest,
                                     stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        step = self._next_reply(llm_request)
        if isinstance(step, Mapping) and "fail" in step:
            raise ScriptedFailure(f"{self.agent}: {step['fail']}")
        content = parse_step(self.agent, step)
        tokens = sum(len(p.text or "") for c in llm_request.contents for p in c.parts or []) // 4
        yield LlmResponse(content=content, partial=False, turn_complete=True,
                          usage_metadata=types.GenerateContentResponseUsageMetadata(
                              prompt_token_count=tokens + 1, candidates_token_count=1,
                              total_token_count=tokens + 2))


def _request_text(request: LlmRequest) -> str:
    system = request.config.system_instruction if request.config else None
    texts = [system] if isinstance(system, str) else [
        p.text or "" for p in getattr(system, "parts", None) or []]
    for content in request.contents:
        for part in content.parts or []:
            texts.append(part.text or "")
            if part.function_response is not None:  # `when:` can match a tool's result
                texts.append(json.dumps(part.function_response.response, default=str))
    return "\n".join(texts)


def _unknown(name: str, names: set[str]) -> str:
    close = difflib.get_close_matches(name, sorted(names), n=1)
    return (f"the script has replies for `{name}`, which is no agent with a model here"
            + (f" (did you mean `{close[0]}`?)" if close else
               f" (those are: {', '.join(sorted(names))})"))


def unused_replies(models: Iterable[ScriptedModel]) -> list[str]:
    """A failure for each model with scripted replies the run never asked for: a scenario
    that scripts more than happens is wrong about the run (an agent it expects to work was
    never reached), so it fails rather than passing on the replies that were used."""
    found = []
    for model in models:
        if model.replies:
            count = len(model.replies)
            found.append(f"{count} scripted repl{'y' if count == 1 else 'ies'} of "
                          f"`{model.agent}` never used (the first: {_brief(model.replies[0])})"
                          "; the run went otherwise than the scenario says, or remove "
                          f"{'it' if count == 1 else 'them'}")
    return found


def _brief(step: Any) -> str:
    text = json.dumps(step, default=str, ensure_ascii=False)
    return text if len(text) <= 80 else text[:79] + "…"




def install_script(root: Any, replies: Mapping[str, list[Any]],
                   compaction: Any = None) -> dict[str, ScriptedModel]:
    """Give every LLM agent under `root` a scripted model with its replies, and the
    summarizer of `compaction` (an App's events compaction config) one under `summarizer`."""
    from google.adk.agents import LlmAgent
    from google.adk.code_executors import BuiltInCodeExecutor

    names = {a.name for a in walk(root) if isinstance(a, LlmAgent)}
    models = {}
    if compaction is not None:
        if SUMMARIZER in names:
            raise ScriptError(f"an agent is named `{SUMMARIZER}`, the name scripts give the "
                              "summarizer; rename the agent")
        models[SUMMARIZER] = _script_summarizer(compaction, list(replies.get(SUMMARIZER, [])))
        names.add(SUMMARIZER)
    unknown = sorted(set(replies) - names)
    if unknown:
        raise ScriptError("; ".join(_unknown(name, names) for name in unknown))
    for name, steps in replies.items():
        for index, step in enumerate(steps if isinstance(steps, list) else [steps], 1):
            problem = reply_problem(step)
            if problem is not None:
                raise ScriptError(f"reply {index} of `{name}`: {problem}")
    for agent in walk(root):
        if isinstance(agent, LlmAgent):
            model = ScriptedModel(agent=agent.name, replies=list(replies.get(agent.name, [])),
                                  requests=[], problems=[])
            if isinstance(agent.code_executor, BuiltInCodeExecutor):
                model.model = "gemini-scripted"  # ADK offers Gemini's code execution only
                # to a model whose name says Gemini (validate refuses others, AS247)
            agent.model = model
            models[agent.name] = model
    return models


def _script_summarizer(compaction: Any, replies: list[Any]) -> ScriptedModel:
    """A scripted model in place of the summarizer's (ADK's default summarizer is made
    here, so it is not the calling agent's scripted model)."""
    from google.adk.apps.llm_event_summarizer import LlmEventSummarizer

    model = ScriptedModel(agent=SUMMARIZER, replies=replies, requests=[], problems=[])
    summarizer = compaction.summarizer
    inner = summarizer
    while hasattr(inner, "inner"):  # the model summarizer inside agentspec's wrappers
        inner = inner.inner
    if inner is None:
        compaction.summarizer = LlmEventSummarizer(llm=model)
    elif isinstance(inner, LlmEventSummarizer):
        adk.set_summarizer_model(inner, model)
    else:
        raise ScriptError(f"the summarizer {type(inner).__name__} cannot be scripted")
    return model
