"""Models: ADK's registry for ids, LiteLLM when asked, with messages that say what to install."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextvars import ContextVar
from typing import Any

from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse

from agentspec.contract.extras import install
from agentspec.runtime import adk

__all__ = ["SCRIPTED", "MissingExtra", "Unavailable", "litellm", "registry_model"]

#: set while building for a scripted run: every model is replaced before it is called, so a
#: provider package that is not installed is no reason to refuse the build
SCRIPTED: ContextVar[bool] = ContextVar("agentspec_scripted_models", default=False)


class MissingExtra(ImportError):
    """An optional dependency the spec needs is not installed."""


class Unavailable(BaseLlm):
    """A model whose provider is not installed, in a scripted build; calling it says so."""

    reason: str = ""

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        raise MissingExtra(self.reason)
        yield  # pragma: no cover - makes this an async generator


def litellm(model: str, *, base_url: str | None = None, api_key: str | None = None,
            **kwargs: Any) -> BaseLlm:
    """ADK's LiteLlm wrapper for `model`; `base_url` is LiteLLM's `api_base`. The key is
    kept among the call's private arguments, out of the object's fields (and so out of any
    repr of the app or a traceback)."""
    try:
        from google.adk.models.lite_llm import LiteLlm
    except ImportError as exc:
        reason = (f"model {model!r} uses provider: litellm, which needs LiteLLM: "
                  f"{install('litellm')}")
        if SCRIPTED.get():
            return Unavailable(model=model, reason=reason)
        raise MissingExtra(reason) from exc
    _quiet_litellm()
    if base_url is not None:
        kwargs["api_base"] = base_url
    llm = LiteLlm(model=model, **kwargs)
    if api_key is not None:
        adk.set_litellm_call_arg(llm, "api_key", api_key)
    return llm


def _quiet_litellm() -> None:
    """No "Give Feedback / Get Help" banner and debug hint on stdout per failed call: the
    failure reaches the caller as an exception, which agentspec reports with its names."""
    import litellm as module

    module.suppress_debug_info = True


def registry_model(model: str) -> BaseLlm:
    """A model object from ADK's registry (used where ADK wants an instance, not an id)."""
    from google.adk.models import LLMRegistry

    return LLMRegistry.new_llm(model)
