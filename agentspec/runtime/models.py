"""Models: ADK's registry for ids, LiteLLM when asked, with messages that say what to install."""

from __future__ import annotations

from typing import Any

from google.adk.models import BaseLlm

__all__ = ["MissingExtra", "litellm", "registry_model"]


class MissingExtra(ImportError):
    """An optional dependency the spec needs is not installed."""


def litellm(model: str, **kwargs: Any) -> BaseLlm:
    """ADK's LiteLlm wrapper for `model` (needs google-adk[extensions])."""
    try:
        from google.adk.models.lite_llm import LiteLlm
    except ImportError as exc:
        raise MissingExtra(
            f"model {model!r} uses provider: litellm, which needs LiteLLM: "
            "pip install 'agentspec[litellm]' (or 'google-adk[extensions]')") from exc
    return LiteLlm(model=model, **kwargs)


def registry_model(model: str) -> BaseLlm:
    """A model object from ADK's registry (used where ADK wants an instance, not an id)."""
    from google.adk.models import LLMRegistry

    return LLMRegistry.new_llm(model)
