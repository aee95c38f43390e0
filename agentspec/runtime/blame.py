"""Errors that say whose they are: a model service or the network on the way to it
(`ModelError`), or the user's own code (`UserCodeError`), each naming the agent, the model
and its endpoint (never a secret in it), or the function and the file and line it is at.

`Blame`, a plugin every built App carries, classifies a model or tool call's failure
(naming the calling agent) on the error itself, so `adk run` shows the same words under its
traceback that agentspec's commands print; the commands classify what reaches them with
`classified`.
"""

from __future__ import annotations

import asyncio
import errno
import os
import re
import socket
import sysconfig
import traceback
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext

from agentspec.contract.urls import masked, scrubbed

__all__ = ["CALLING_AGENT", "GEMINI_ENDPOINT", "Blame", "ModelError", "UserCodeError",
           "cause", "classified", "describe", "endpoint", "model_error", "relative_path",
           "user_frame"]

GEMINI_ENDPOINT = "https://generativelanguage.googleapis.com"

#: the agent whose model call is in progress (set by `Blame`)
CALLING_AGENT: ContextVar[str | None] = ContextVar("agentspec_calling_agent", default=None)

_LITELLM_PREFIX = re.compile(r"^(litellm\.\w+: )?(\w+: )?\w*Exception - ")
_DNS = ("name or service not known", "nodename nor servname", "temporary failure in name "
        "resolution", "no address associated", "getaddrinfo failed", "could not resolve")


class ModelError(RuntimeError):
    """A model call failed for a reason outside agentspec: the endpoint is unreachable, slow
    or answered with an error (`cause`), or every model of a chain failed."""

    def __init__(self, cause: str, *, model: str, endpoint: str | None = None,
                 agent: str | None = None) -> None:
        self.cause, self.model, self.endpoint, self.agent = cause, model, endpoint, agent
        super().__init__(self._text())

    def _text(self) -> str:
        where = f" at {self.endpoint}" if self.endpoint else ""
        who = f"agent `{self.agent}`: " if self.agent else ""
        return f"{who}model `{self.model}`{where} failed: {self.cause}"

    def name_agent(self, agent: str | None) -> None:
        """Names the agent whose call it was, unless one is named already."""
        if agent and not self.agent:
            self.agent = agent
            self.args = (self._text(),)


@dataclass(frozen=True)
class UserFrame:
    function: str
    file: str
    line: int

    def __str__(self) -> str:
        return f"`{self.function}` ({self.file}:{self.line})"


class UserCodeError(RuntimeError):
    """The user's code (a tool, a callback, a route function, a plugin) raised."""

    def __init__(self, error: BaseException, frame: UserFrame, agent: str | None) -> None:
        self.error, self.frame, self.agent = error, frame, agent
        who = f" of agent `{agent}`" if agent else ""
        super().__init__(f"your code {frame}{who} raised {type(error).__name__}: "
                         f"{scrubbed(str(error))}")


def endpoint(llm: BaseLlm | str | None) -> str | None:
    """Where a model's calls go, safe to print; None when it cannot be told."""
    if llm is None:
        return None
    if isinstance(llm, str):
        from google.adk.models import LLMRegistry
        from google.adk.models.google_llm import Gemini

        try:
            gemini = issubclass(LLMRegistry.resolve(llm), Gemini)
        except ValueError:
            return None
        return _gemini_endpoint(None) if gemini else None
    api_base = getattr(llm, "_additional_args", {}).get("api_base") \
        if type(llm).__name__ == "LiteLlm" else None
    if api_base:
        return masked(str(api_base))
    if type(llm).__name__ == "LiteLlm":
        return f"LiteLLM's default endpoint for `{llm.model}`"
    if type(llm).__name__ == "Gemini":
        return _gemini_endpoint(getattr(llm, "base_url", None))
    return None


def _gemini_endpoint(base_url: str | None) -> str:
    if base_url or os.environ.get("GOOGLE_GEMINI_BASE_URL"):
        return masked(str(base_url or os.environ["GOOGLE_GEMINI_BASE_URL"]))
    if os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true"):
        return f"Vertex AI ({os.environ.get('GOOGLE_CLOUD_LOCATION', 'default location')})"
    return GEMINI_ENDPOINT


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def cause(error: BaseException) -> str:
    """What went wrong, in a few words: host not found, connection refused, a timeout, an
    HTTP status with the service's message; else the error's type and message. The network
    is asked first: a client may report a refused connection as a status (LiteLLM: 500)."""
    links = list(_chain(error))
    for link in links:
        if isinstance(link, ModelError):
            return link.cause
    for link in links:
        if isinstance(link, socket.gaierror) or type(link).__name__ == "ClientConnectorDNSError":
            return "host not found (DNS lookup failed)"
        if isinstance(link, ConnectionRefusedError) or getattr(
                link, "errno", None) == errno.ECONNREFUSED:
            return "connection refused (nothing listens there)"
        if isinstance(link, (TimeoutError, asyncio.TimeoutError)) or "Timeout" in type(
                link).__name__:
            return "timed out waiting for an answer"
    text = scrubbed(str(error)) or type(error).__name__
    lowered = text.lower()
    if any(words in lowered for words in _DNS):
        return "host not found (DNS lookup failed)"
    if "connection refused" in lowered or "connect call failed" in lowered:
        return "connection refused (nothing listens there)"
    if any(type(link).__name__ in ("APIConnectionError", "ConnectError", "ClientConnectorError")
           for link in links):
        return f"cannot connect: {_short(text)}"
    # LiteLLM gives a status to failures that got no answer (500: missing credentials); the
    # client it wraps, when there is one, knows whether a server answered
    theirs = [link for link in links if not type(link).__module__.startswith("litellm")]
    for link in theirs or links:
        status = _status(link)
        if status is not None:
            return f"HTTP {status}: {_short(scrubbed(_service_message(link)))}"
    return f"{type(error).__name__}: {_short(scrubbed(_service_message(error)))}"


def _status(error: BaseException) -> int | None:
    for name in ("status_code", "code"):
        value = getattr(error, name, None)
        if isinstance(value, int) and 400 <= value < 600:
            return value
    response = getattr(error, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) and 400 <= value < 600 else None


def _service_message(error: BaseException) -> str:
    message = getattr(error, "message", None)
    # LiteLLM prefixes its mapping: "litellm.RateLimitError: RateLimitError: OpenAIException - "
    return _LITELLM_PREFIX.sub("", str(message) if message else str(error))


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def model_error(llm: BaseLlm | str | None, error: BaseException,
                agent: str | None = None) -> ModelError:
    """`error`, raised by a call to `llm`, as a ModelError (one already made keeps its
    names, and gets the agent)."""
    if isinstance(error, ModelError):
        error.name_agent(agent)
        return error
    name = llm if isinstance(llm, str) else (llm.model if llm is not None else "default")
    return ModelError(cause(error), model=name, endpoint=endpoint(llm), agent=agent)


class Blame(BasePlugin):
    """Says whose fault a failed model or tool call is: the error ADK raises on gets a note
    (shown under its traceback) and, for agentspec's commands, the ModelError (naming the
    agent, the model and where its calls go) or UserCodeError (a route function or a tool
    raised; the function, its file and line, the agent) it is.

    A plugin cannot raise another error here (ADK would wrap it as the plugin's own failure),
    so the original error travels on, carrying the classification; returning None leaves
    the agent's own error callbacks (`tool_errors: return`) to decide as before."""

    def __init__(self) -> None:
        super().__init__(name="agentspec_blame")

    async def before_model_callback(self, *, callback_context: CallbackContext,
                                    llm_request: LlmRequest) -> LlmResponse | None:
        CALLING_AGENT.set(callback_context.agent_name)
        return None

    async def on_model_error_callback(self, *, callback_context: CallbackContext,
                                      llm_request: LlmRequest, error: Exception
                                      ) -> LlmResponse | None:
        agent_name = callback_context.agent_name
        found = classified(error, agent_name)
        if found is error:
            agent = callback_context._invocation_context.agent
            llm = getattr(agent, "canonical_model", None)
            found = model_error(llm if isinstance(llm, BaseLlm) else llm_request.model, error,
                                agent_name)
        _annotate(error, found)
        return None

    async def on_tool_error_callback(self, *, tool: BaseTool, tool_args: dict[str, Any],
                                     tool_context: ToolContext, error: Exception
                                     ) -> dict[str, Any] | None:
        _annotate(error, classified(error, tool_context.agent_name))
        return None


def _annotate(error: BaseException, found: BaseException) -> None:
    if found is not error and getattr(error, _BLAME, None) is None:
        setattr(error, _BLAME, found)
        error.add_note(f"agentspec: {found}")


_BLAME = "_agentspec_blame"


# user code -----------------------------------------------------------------------------------

_OURS = tuple(str(Path(p).resolve()) + os.sep for p in {
    str(Path(__file__).resolve().parents[1]),  # agentspec
    *(sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")),
} if p)


def user_frame(error: BaseException) -> UserFrame | None:
    """The innermost frame of `error`'s traceback in the user's code: not agentspec's, not
    the standard library's, not an installed package's."""
    found: UserFrame | None = None
    tb: TracebackType | None = error.__traceback__
    for frame, line in traceback.walk_tb(tb):
        file = frame.f_code.co_filename
        if file.startswith("<") or str(Path(file).resolve()).startswith(_OURS):
            continue
        found = UserFrame(frame.f_code.co_qualname, relative_path(file), line)
    return found


def relative_path(file: str) -> str:
    """`file` relative to the working directory when it is below it, else absolute."""
    try:
        shown = os.path.relpath(file)
    except ValueError:
        return file
    return os.path.abspath(file) if shown.startswith("..") else shown


def classified(error: BaseException, agent: str | None = None) -> BaseException:
    """`error` as the party it blames sees it: a ModelError (naming `agent` if it had none),
    a UserCodeError when the user's code raised it, else `error` itself."""
    for link in _chain(error):
        found = getattr(link, _BLAME, link)
        if isinstance(found, ModelError):
            found.name_agent(agent)
            return found
        if isinstance(found, UserCodeError):
            return found
    frame = user_frame(error)
    if frame is not None:
        return UserCodeError(error, frame, agent)
    return error


def describe(error: BaseException, agent: str | None = None) -> str:
    """One line for `error` (see `classified`)."""
    from agentspec.runtime.usage import budget_stop

    stopped = budget_stop(error)
    if stopped is not None:
        return str(stopped)
    found = classified(error, agent)
    if isinstance(found, (ModelError, UserCodeError)):
        return str(found)
    return f"{type(error).__name__}: {error}"
