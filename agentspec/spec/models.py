"""Models: named model definitions, generation settings, thinking."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from agentspec.spec.common import Model, by_type, keyed_union

__all__ = ["HARM_BLOCK_METHODS", "HARM_BLOCK_THRESHOLDS", "HARM_CATEGORIES", "GenerateConfig",
           "ModelDef", "ModelEntry", "SafetySetting", "ThinkingConfig"]

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
        "Claude, ...). `litellm`: use ADK's LiteLlm wrapper (needs google-adk[extensions]).")
    generate: GenerateConfig | None = Field(None, description="Default generation settings.")
    thinking: ThinkingConfig | None = Field(None, description="Default thinking settings.")
    context_window: int | None = Field(None, ge=1, description="The model's context window in "
                                       "tokens; lets summarization use a `fraction` trigger.",
                                       examples=[1048576])


if TYPE_CHECKING:
    ModelEntry = str | ModelDef
else:
    ModelEntry = keyed_union("model_entry", "a model is a model id or a mapping with `id`",
                             {"id": str, "definition": ModelDef},
                             by_type((str, "id"), (dict, "definition")))
