"""Gemini model ids known to exist, to catch a misspelled id that ADK's registry would still
resolve (`gemini-2.5-flsh` matches `gemini-.*`, and fails only when the first request is
refused).

Taken on 2026-11-26 from google-genai 2.34.0 (the one google-adk 2.13 installs), which
lists models in two places: the `Model` literal of its interactions API
(`google.genai._gaos.types.interactions.model`) and the token counter's tables
(`google.genai._local_tokenizer_loader`); plus ids ADK 2.13's own source and docstrings
name (`gemini-2.0-flash`, `gemini-1.5-*`, live and TTS models). Neither ADK nor
google-genai lists Claude, GPT or other providers' models, so only Gemini ids are judged.
tests/test_known_models.py checks that every Gemini id the installed libraries list is
here: an upgrade that lists a new model fails that test until the table is refreshed.
"""

from __future__ import annotations

import difflib
import re

__all__ = ["GEMINI_MODELS", "TAKEN", "closest", "is_judged", "is_known"]

#: when the table was taken
TAKEN = "2026-11-26"

GEMINI_MODELS = frozenset({
    # google-genai's interactions `Model`
    "gemini-flash-latest", "gemini-flash-lite-latest", "gemini-pro-latest",
    "gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.5-flash-lite", "gemini-3.5-flash-lite",
    "gemini-2.5-flash-image", "gemini-3-flash-preview", "gemini-3.1-pro-preview",
    "gemini-3.1-pro-preview-customtools", "gemini-3.1-flash-lite",
    "gemini-3.1-flash-lite-image", "gemini-3-pro-image", "gemini-3.1-flash-image",
    "gemini-nano-banana-2.1", "gemini-3.1-flash-tts-preview", "gemini-3.5-flash",
    "gemini-3.6-flash", "gemini-3.7-flash", "gemini-3.8-flash", "gemini-4-argon",
    "gemini-3.8-flash-tts", "gemini-3.8-flash-lite-tts", "gemini-robotics-er-1.6-preview",
    "gemini-robotics-er-2-preview", "gemini-omni-1.1-flash", "gemini-omni-flash-preview",
    # google-genai's token counter
    "gemini-2.0-flash", "gemini-2.0-flash-lite", "gemini-2.5-pro-preview-06-05",
    "gemini-2.5-pro-preview-05-06", "gemini-2.5-pro-exp-03-25", "gemini-live-2.5-flash",
    "gemini-2.5-flash-preview-05-20", "gemini-2.5-flash-preview-04-17",
    "gemini-2.5-flash-lite-preview-06-17", "gemini-2.0-flash-001", "gemini-2.0-flash-lite-001",
    "gemini-3-pro-preview",
    # named in ADK 2.13's source
    "gemini-1.5-flash", "gemini-1.5-pro", "gemini-2.0-flash-exp", "gemini-2.5-flash-001",
    "gemini-2.5-flash-preview-tts", "gemini-2.5-computer-use-preview-10-2025",
    "gemini-2.0-flash-live-preview-04-09", "gemini-2.0-flash-preview-image-generation",
    "gemini-3.1-pro", "gemini-3.1-flash-live-preview", "gemini-3.5-transcribe-live",
    "gemini-3.5-live-translate",
})

#: what may follow a known id and still name a release of it: a version (`-001`), a
#: preview or experiment with its date (`-preview-05-20`, `-exp-03-25`, `-preview-10-2025`),
#: a variant of the model (`-native-audio-...`, `-tts`, `-image`, `-live`)
_RELEASE = re.compile(r"-(?:\d{3}|latest|(?:preview|exp)(?:-[0-9a-z]+)*|native-audio"
                      r"(?:-[0-9a-z]+)*|tts|image(?:-[0-9a-z]+)*|live(?:-[0-9a-z]+)*)")


def is_judged(model_id: str) -> bool:
    """Whether the table can tell if `model_id` exists (a bare Gemini id)."""
    return model_id.startswith("gemini-") and "/" not in model_id and ":" not in model_id


def is_known(model_id: str) -> bool:
    if model_id in GEMINI_MODELS:
        return True
    return any(model_id.startswith(known) and _RELEASE.fullmatch(model_id[len(known):])
               for known in GEMINI_MODELS)


def closest(model_id: str) -> list[str]:
    """Up to three known ids nearest to `model_id`."""
    return difflib.get_close_matches(model_id, sorted(GEMINI_MODELS), n=3, cutoff=0.6)
