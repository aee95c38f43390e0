"""Models: named model definitions, generation settings, thinking."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from agentspec.language.common import Arguments, Identifier, Model, PythonRef, keyed_union
from agentspec.language.observing import Price

__all__ = ["HARM_BLOCK_METHODS", "HARM_BLOCK_THRESHOLDS", "HARM_CATEGORIES", "FallbackModel",
           "GenerateConfig", "ModelDef", "ModelEntry", "ModelRoute", "RoutedModel",
           "SafetySetting", "ThinkingConfig"]

#: google.genai's HarmCategory, HarmBlockThreshold and HarmBlockMethod values (a test keeps
#: them equal to the installed library's; validate does not import it)
HARM_CATEGORIES = (
    "HARM_CATEGORY_HARASSMENT", "HARM_CATEGORY_HATE_SPEECH", "HARM_CATEGORY_SEXUALLY_EXPLICIT",
    "HARM_CATEGORY_DANGEROUS_CONTENT", "HARM_CATEGORY_CIVIC_INTEGRITY",
    "HARM_CATEGORY_JAILBREAK", "HARM_CATEGORY_IMAGE_HATE",
    "HARM_CATEGORY_IMAGE_DANGEROUS_CONTENT", "HARM_CATEGORY_IMAGE_HARASSMENT",
    "HARM_CATEGORY_IMAGE_SEXUALLY_EXPLICIT")
HARM_BLOCK_THRESHOLDS = ("BLOCK_LOW_AND_ABOVE", "BLOCK_MEDIUM_AND_ABOVE", "BLOCK_ONLY_HIGH",
                         "BLOCK_NONE", "OFF")
HARM_BLOCK_METHODS = ("SEVERITY", "PROBABILITY")


class SafetySetting(Model):
    """One safety filter (`SafetySetting`): block content of a harm category from a threshold."""

    category: Literal[HARM_CATEGORIES] = Field(  # type: ignore[valid-type]
        description="The harm category.", examples=["HARM_CATEGORY_DANGEROUS_CONTENT"])
    threshold: Literal[HARM_BLOCK_THRESHOLDS] = Field(  # type: ignore[valid-type]
        description="Block from this probability (or severity) on; `BLOCK_NONE` and `OFF` "
        "block nothing.", examples=["BLOCK_ONLY_HIGH"])
    method: Literal[HARM_BLOCK_METHODS] | None = Field(  # type: ignore[valid-type]
        None, description="Judge by `PROBABILITY` or `SEVERITY` (Vertex AI only).")


class GenerateConfig(Model):
    """Generation settings, passed to ADK as a `GenerateContentConfig`."""

    temperature: float | None = Field(None, ge=0, le=2, description="Sampling temperature.",
                                      examples=[0.2])
    top_p: float | None = Field(None, ge=0, le=1, description="Nucleus sampling mass.")
    top_k: int | None = Field(None, ge=1, description="Top-k sampling.")
    max_output_tokens: int | None = Field(None, ge=1, description="Cap on generated tokens.",
                                          examples=[8192])
    stop_sequences: list[str] | None = Field(None, description="Stop generating at any of these.")
    seed: int | None = Field(None, description="Seed for reproducible sampling.")
    presence_penalty: float | None = Field(None, description="Penalty on tokens already present.")
    frequency_penalty: float | None = Field(None, description="Penalty by token frequency.")
    safety_settings: list[SafetySetting] | None = Field(
        None, description="Safety filters, one per harm category (the model's defaults for "
        "the others).", examples=[[{"category": "HARM_CATEGORY_DANGEROUS_CONTENT",
                                    "threshold": "BLOCK_ONLY_HIGH"}]])


class ThinkingConfig(Model):
    """Thinking settings (`ThinkingConfig`), for models that think."""

    budget: int | None = Field(None, ge=-1, description="Thinking token budget; -1 lets the "
                               "model decide, 0 turns thinking off.", examples=[2048])
    include_thoughts: bool | None = Field(None, description="Return thought summaries.")
    level: Literal["minimal", "low", "medium", "high"] | None = Field(
        None, description="Thinking level, for models that take a level instead of a budget.")


class ModelDef(Model):
    """A named model: an id plus settings every agent using it inherits."""

    id: str = Field(description="Model id as ADK's model registry or LiteLLM knows it.",
                    examples=["gemini-2.5-pro", "anthropic/claude-sonnet-4-5"], min_length=1)
    provider: Literal["adk", "litellm"] = Field(
        "adk", description="`adk`: ADK's model registry picks the class from the id (Gemini, "
        "Claude, ...). `litellm`: use ADK's LiteLlm wrapper (needs agentspec-adk[litellm]).")
    generate: GenerateConfig | None = Field(None, description="Default generation settings.")
    thinking: ThinkingConfig | None = Field(None, description="Default thinking settings.")
    context_window: int | None = Field(None, ge=1, description="The model's context window in "
                                       "tokens; lets summarization use a `fraction` trigger.",
                                       examples=[1048576])
    base_url: str | None = Field(
        None, description="`provider: litellm`: the server's base URL (LiteLLM's `api_base`), "
        "for self-hosted OpenAI-compatible servers such as vLLM or Ollama.",
        examples=["http://localhost:8000/v1"], min_length=1)
    api_key: str | None = Field(
        None, description="`provider: litellm`: the API key, as `${env.NAME}`: read from the "
        "environment when the app is loaded, never written into generated files.",
        examples=["${env.VLLM_API_KEY}"], min_length=1)
    args: Arguments | None = Field(
        None, description="`provider: litellm`: more keyword arguments for LiteLLM's "
        "`acompletion` (`timeout`, `num_retries`, `extra_headers`, ...).",
        examples=[{"timeout": 30, "num_retries": 0}])
    price: Price | None = Field(
        None, description="What the model costs, for usage summaries and `budget.cost` "
        "(default: agentspec's dated table of Gemini prices; other models' cost is "
        "reported as unknown).")


class FallbackModel(Model):
    """Models tried in order: a call that fails before its first token (connection refused,
    429, 5xx, timeout, any error) goes to the next."""

    fallback: list[Identifier] = Field(min_length=1, description="Names from `models`, in the "
                                       "order they are tried.", examples=[["local", "cloud"]])


class ModelRoute(Model):
    """How a routed model picks per call: exactly one of `state`, `python`."""

    state: str | None = Field(None, description="Session-state key whose value names the "
                              "model.", examples=["tier"])
    map: dict[str, Identifier] | None = Field(None, description="With `state`: state value -> "
                                              "model name.")
    python: PythonRef | None = Field(None, description="`fn(model_names, ctx, failed) -> name "
                                     "| None` (may be async).")


class RoutedModel(Model):
    """A model picked per call among `models`; a call that fails before its first token goes
    to the route's next choice (a python route is asked again), then `fallback` in order."""

    route: ModelRoute = Field(description="How each call picks its model; when it names none "
                              "of `models`, the first of `models` answers.")
    models: list[Identifier] = Field(min_length=1, description="Names from `models` it picks "
                                     "among.", examples=[["fast", "strong"]])
    fallback: list[Identifier] | None = Field(None, description="Names from `models` tried, in "
                                              "order, after the chosen one fails early.")


def _model_kind(value: Any) -> str | None:
    if isinstance(value, str):
        return "id"
    if not isinstance(value, dict):
        return None
    if "route" in value:
        return "routed"
    if "fallback" in value and "id" not in value:
        return "fallback"
    return "definition"


if TYPE_CHECKING:
    ModelEntry = str | ModelDef | FallbackModel | RoutedModel
else:
    ModelEntry = keyed_union("model_entry", "a model is a model id, a mapping with `id`, "
                             "`{fallback: [...]}` or `{route: ..., models: [...]}`",
                             {"id": str, "definition": ModelDef, "fallback": FallbackModel,
                              "routed": RoutedModel}, _model_kind)
