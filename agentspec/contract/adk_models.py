"""Which model ids ADK's model registry can resolve, known without importing ADK.

ADK 2.13 registers its model classes by patterns of ids (`LLMRegistry`). A `provider/model`
id may resolve through LiteLLM, and some classes need an extra package (anthropic, openai):
whether those build depends on what is installed, so build decides (AS404, AS402), as for
a `class:model` id. An id with neither that matches none of the patterns never resolves:
validate refuses it (AS250). tests/test_validate_predicts_build.py compares this list with
ADK's live registry, so an upgrade that adds a pattern fails a test instead of a spec.
"""

from __future__ import annotations

import re

__all__ = ["BARE_MODEL_PATTERNS", "never_resolves"]

#: the registry's patterns for ids without a `/` (ADK 2.13), matched in full
BARE_MODEL_PATTERNS = ("gemini-.*", "gemma-4.*", "model-optimizer-.*", "gemma-.*", "claude-.*",
                       "gpt-.*", r"o\d+-.*",
                       # Oracle Cloud's generative AI (needs the oci package)
                       r"meta\.llama-.*", r"google\.gemini-.*", r"google\.gemma-.*",
                       r"xai\.grok-.*", r"mistralai\.mistral-.*", r"mistralai\.mixtral-.*",
                       r"nvidia\..*")
_BARE = re.compile("|".join(f"(?:{p})" for p in BARE_MODEL_PATTERNS))


def never_resolves(model_id: str) -> bool:
    """Whether ADK's registry refuses `model_id` in every installation (`class:model`, such
    as `openai:gpt-4o`, names the class itself: the installation decides)."""
    return "/" not in model_id and ":" not in model_id and _BARE.fullmatch(model_id) is None
